package gateway

import (
	"os"
	"path/filepath"
	"strings"
	"testing"

	"spear/deploy"
)

func TestTurnOffer(t *testing.T) {
	cases := []struct {
		turn    deploy.Turn
		task    deploy.Task
		ro      bool
		earlier bool
		why     string
	}{
		{deploy.Turn{Class: deploy.ClassImplementation}, deploy.TaskImplementation, false, false, ""},
		{deploy.Turn{Class: deploy.ClassMixed, Pass: deploy.PassImplementation}, deploy.TaskMixed, false, false, ""},
		{deploy.Turn{Class: deploy.ClassMixed, Pass: deploy.PassNormative}, "", false, false, "normative pass"},
		{deploy.Turn{Class: deploy.ClassMixed, Pass: deploy.PassCompliance}, "", false, false, "compliance pass"},
		{deploy.Turn{Class: deploy.ClassGeneral}, deploy.TaskGeneral, true, false, ""},
		{deploy.Turn{Class: deploy.ClassStandardQuestion}, "", false, false, "bound standard"},
		{deploy.Turn{Class: deploy.ClassImplementation, StandardBound: true}, "", false, true, "earlier runtime"},
		{deploy.Turn{Class: deploy.ClassMixed, Pass: deploy.PassImplementation, StandardBound: true}, "", false, true, "earlier runtime"},
		{deploy.Turn{Class: deploy.ClassImplementation, StandardBound: true, ConcernsStandard: true}, deploy.TaskImplementation, false, false, ""},
		{deploy.Turn{Class: deploy.ClassGeneral, StandardBound: true}, deploy.TaskGeneral, true, false, ""},
	}
	for _, tc := range cases {
		o := turnOffer(&tc.turn)
		if o.Task != tc.task || o.ReadOnly != tc.ro || o.EarlierRuntime != tc.earlier || !strings.Contains(o.Why, tc.why) {
			t.Errorf("%+v: offer %+v", tc.turn, o)
		}
	}
}

func TestSelect(t *testing.T) {
	root := t.TempDir()
	os.MkdirAll(filepath.Join(root, "web"), 0o755)
	os.MkdirAll(filepath.Join(root, "fw"), 0o755)
	projects := &deploy.Projects{List: []deploy.Project{{Name: "web", Root: filepath.Join(root, "web")}, {Name: "fw", Root: filepath.Join(root, "fw"), Family: "firmware"}}}
	mk := func(id, scope string, tasks []deploy.Task, read []string, enabled bool) *deploy.Provider {
		sc, err := deploy.ParseScope(scope)
		if scope == "" {
			sc, err = deploy.Scope{}, nil
		}
		if err != nil {
			t.Fatal(err)
		}
		if tasks == nil {
			tasks = []deploy.Task{deploy.TaskImplementation, deploy.TaskMixed}
		}
		return &deploy.Provider{ID: id, Scope: sc, Tasks: tasks, Read: read, Enabled: enabled}
	}
	reg := &deploy.Registry{Providers: []*deploy.Provider{
		mk("global", "global", nil, nil, true),
		mk("web", "corpus web", nil, nil, true),
		mk("firm", "family firmware", nil, nil, true),
		mk("path", "path "+filepath.Join(root, "fw"), nil, nil, true),
		mk("none", "", nil, nil, true),
		mk("off", "global", nil, nil, false),
		mk("gen", "global", []deploy.Task{deploy.TaskGeneral}, []string{"r"}, true),
		mk("genw", "global", []deploy.Task{deploy.TaskGeneral}, nil, true),
	}}
	admitted := func(ws string, class deploy.TurnClass) string {
		sel := selectProviders(reg, projects, &deploy.Turn{Workspace: filepath.Join(root, ws), Class: class})
		var ids []string
		for _, p := range sel.Admitted() {
			ids = append(ids, p.ID)
		}
		if len(sel.Decisions) != len(reg.Providers) {
			t.Errorf("%d decisions for %d providers", len(sel.Decisions), len(reg.Providers))
		}
		return strings.Join(ids, ",")
	}
	for _, tc := range []struct {
		ws    string
		class deploy.TurnClass
		want  string
	}{
		{"web", deploy.ClassImplementation, "global,web"},
		{"fw", deploy.ClassImplementation, "global,firm,path"},
		{"web", deploy.ClassGeneral, "gen"},
		{"elsewhere", deploy.ClassImplementation, ""},
		{"web", deploy.ClassStandardQuestion, ""},
	} {
		if got := admitted(tc.ws, tc.class); got != tc.want {
			t.Errorf("%s %s: admitted %q, want %q", tc.ws, tc.class, got, tc.want)
		}
	}
}
