package gateway

import (
	"context"
	"errors"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"spear/deploy"
)

// reportOf returns the provider's report, failing the test without one.
func reportOf(t *testing.T, r *Report, id string) ProviderReport {
	t.Helper()
	for _, pr := range r.Providers {
		if pr.ID == id {
			return pr
		}
	}
	t.Fatalf("no report of %s in %+v", id, r.Providers)
	return ProviderReport{}
}

func (d *deployment) operatorRegistry() {
	d.register(
		with(fake("notes"), "read", []string{"echo", "absent"}, "write", "confirm", "tasks", []string{"implementation", "general"}),
		map[string]any{"id": "broken", "command": []string{"/opt/secret/broken"}, "scope": "global"},
		with(fake("off"), "enabled", false),
		with(fake("elsewhere"), "scope", "corpus other"),
		map[string]any{"id": "bad", "command": []string{"x"}, "scope": "nowhere"},
	)
}

// TestInspect: every enabled provider is started and its tools listed;
// the operator sees every detail, and the report is not OK while anything
// is wrong.
func TestInspect(t *testing.T) {
	d := newDeployment(t)
	d.operatorRegistry()
	r, sel, err := d.g.Inspect(context.Background(), nil)
	if err != nil {
		t.Fatal(err)
	}
	if sel != nil {
		t.Errorf("a selection without a previewed turn")
	}
	if r.Registry != d.g.Settings.CapabilitiesFile || r.Projects != d.g.Settings.ProjectsFile || r.OK {
		t.Errorf("report %+v", r)
	}
	if len(r.Providers) != 4 || r.Providers[0].ID != "notes" || r.Providers[3].ID != "elsewhere" {
		t.Errorf("providers in registry order: %+v", r.Providers)
	}
	notes := reportOf(t, r, "notes")
	if notes.Status != StatusOK || notes.Tools != 6 || notes.Read != 1 || notes.Writes != 5 || len(notes.Capabilities) != 6 ||
		notes.Write != deploy.WriteConfirm || notes.Scope != "global" || strings.Join(notes.MissingRead, ",") != "absent" || notes.Error != "" {
		t.Errorf("notes: %+v", notes)
	}
	broken := reportOf(t, r, "broken")
	if broken.Status != StatusFailed || broken.Phase != "start" || !strings.Contains(broken.Error, "/opt/secret/broken") || broken.Tools != 0 {
		t.Errorf("broken: %+v", broken)
	}
	if off := reportOf(t, r, "off"); off.Status != StatusDisabled || off.Tools != 0 {
		t.Errorf("off: %+v", off)
	}
	if e := reportOf(t, r, "elsewhere"); e.Status != StatusOK || e.Reason != "" {
		t.Errorf("elsewhere, with no turn previewed: %+v", e)
	}
	if len(r.Problems) != 1 || r.Problems[0].Entry != "bad" || r.Problems[0].Key != "scope" || r.Problems[0].File != d.g.Settings.CapabilitiesFile {
		t.Errorf("problems %+v", r.Problems)
	}
	if n := d.connects.Load(); n != 3 {
		t.Errorf("%d starts; the disabled entry is not started", n)
	}
	if got := d.trail(); len(got) != 0 {
		t.Errorf("inspecting wrote the audit trail: %v", got)
	}
}

// TestInspectPreview: with a previewed turn, only the providers it admits
// are started, and a general question counts READ capabilities only.
func TestInspectPreview(t *testing.T) {
	d := newDeployment(t)
	d.operatorRegistry()
	for _, tc := range []struct {
		class      deploy.TurnClass
		tools      int
		notesState ProviderStatus
	}{
		{deploy.ClassImplementation, 6, StatusOK},
		{deploy.ClassGeneral, 1, StatusOK},
	} {
		preview, err := deploy.PreviewTurn(d.ws, tc.class, "")
		if err != nil {
			t.Fatal(err)
		}
		d.connects.Store(0)
		r, sel, err := d.g.Inspect(context.Background(), preview)
		if err != nil {
			t.Fatal(err)
		}
		if sel == nil || sel.Project == nil || sel.Project.Name != "web" || len(sel.Decisions) != 4 {
			t.Fatalf("%s: selection %+v", tc.class, sel)
		}
		notes := reportOf(t, r, "notes")
		if notes.Status != tc.notesState || notes.Tools != tc.tools || notes.Read != 1 || len(notes.Capabilities) != tc.tools {
			t.Errorf("%s: notes %+v", tc.class, notes)
		}
		e := reportOf(t, r, "elsewhere")
		if e.Status != StatusNotAdmitted || e.Reason != "scope corpus other does not include project web" {
			t.Errorf("%s: elsewhere %+v", tc.class, e)
		}
		if off := reportOf(t, r, "off"); off.Status == StatusOK || off.Tools != 0 {
			t.Errorf("%s: off %+v", tc.class, off)
		}
		// Only the admitted providers are started: notes, and broken in an
		// implementation turn.
		if want := map[deploy.TurnClass]int64{deploy.ClassImplementation: 2, deploy.ClassGeneral: 1}[tc.class]; d.connects.Load() != want {
			t.Errorf("%s: %d starts, want %d", tc.class, d.connects.Load(), want)
		}
	}
	// A general question admits only providers that serve it.
	preview, _ := deploy.PreviewTurn(d.ws, deploy.ClassGeneral, "")
	r, _, _ := d.g.Inspect(context.Background(), preview)
	if b := reportOf(t, r, "broken"); b.Status != StatusNotAdmitted || b.Reason != "its tasks do not include general" {
		t.Errorf("broken in a general question: %+v", b)
	}
}

// TestInspectOK: a registry with nothing wrong is OK.
func TestInspectOK(t *testing.T) {
	d := newDeployment(t)
	d.register(with(fake("notes"), "read", []string{"echo"}))
	r, _, err := d.g.Inspect(context.Background(), nil)
	if err != nil || !r.OK || len(r.Problems) != 0 || len(reportOf(t, r, "notes").MissingRead) != 0 {
		t.Errorf("%+v, %v", r, err)
	}
}

// TestInspectMissingFiles: missing registries are problems that say what
// to write.
func TestInspectMissingFiles(t *testing.T) {
	d := newDeployment(t)
	d.g.Settings.ProjectsFile = d.dir + "/none/projects.json"
	r, _, err := d.g.Inspect(context.Background(), nil)
	if err != nil {
		t.Fatal(err)
	}
	if r.OK || len(r.Providers) != 0 || len(r.Problems) != 2 ||
		r.Problems[0].File != d.g.Settings.CapabilitiesFile || !strings.Contains(r.Problems[0].Message, "there is no provider registry here; write one, or set SPEAR_CAPABILITIES_FILE") ||
		r.Problems[1].File != d.g.Settings.ProjectsFile || !strings.Contains(r.Problems[1].Message, "set SPEAR_PROJECTS_FILE") {
		t.Errorf("%+v", r)
	}
}

// TestInspectUnreadable: a registry that is not JSON is an error of its
// own, which names the file.
func TestInspectUnreadable(t *testing.T) {
	d := newDeployment(t)
	d.register(fake("notes"))
	d.writeFile(d.g.Settings.ProjectsFile, "{,}")
	var fe *deploy.FileError
	if _, _, err := d.g.Inspect(context.Background(), nil); !errors.As(err, &fe) || fe.Path != d.g.Settings.ProjectsFile {
		t.Errorf("projects: %v", err)
	}
	d.writeFile(d.g.Settings.CapabilitiesFile, "nope")
	if _, _, err := d.g.Inspect(context.Background(), nil); !errors.As(err, &fe) || fe.Path != d.g.Settings.CapabilitiesFile {
		t.Errorf("registry: %v", err)
	}
	if n := d.connects.Load(); n != 0 {
		t.Errorf("%d starts", n)
	}
}

func TestProviderStatusString(t *testing.T) {
	for s, want := range map[ProviderStatus]string{StatusOK: "ok", StatusFailed: "failed", StatusDisabled: "disabled", StatusNotAdmitted: "not_admitted"} {
		if s.String() != want {
			t.Errorf("%q.String() = %q", want, s.String())
		}
	}
}

func TestCheckWantsAScope(t *testing.T) {
	dir := t.TempDir()
	os.WriteFile(filepath.Join(dir, "capabilities.json"), []byte(`{"providers": [{"id": "nowhere", "command": ["/bin/true"], "enabled": false}, {"id": "here", "command": ["/bin/true"], "scope": "global", "enabled": false}]}`), 0o644)
	os.WriteFile(filepath.Join(dir, "projects.json"), []byte(`{"projects": []}`), 0o644)
	g := New(func(k string) string { return map[string]string{"HOME": dir, "SPEAR_CONFIG_DIR": dir}[k] })
	r, _, err := g.Inspect(context.Background(), nil)
	if err != nil {
		t.Fatal(err)
	}
	if r.OK || len(r.Problems) != 1 || r.Problems[0].Entry != "nowhere" || r.Problems[0].Key != "scope" ||
		!strings.HasPrefix(r.Problems[0].Message, "applies nowhere: add a scope") {
		t.Errorf("problems %+v", r.Problems)
	}
}

// TestWritableShell: check names SPEAR_REAL_SHELL when the turn's shell
// may write it (in HOME, the previewed workspace, a temporary directory, or
// a relative path), and not /bin/bash, the default.
func TestWritableShell(t *testing.T) {
	tmp := filepath.Join(t.TempDir(), "bash")
	for _, tc := range []struct {
		shell, workspace, want string
	}{
		{"", "", ""},
		{"/bin/bash", "", ""},
		{"/home/u/.local/bin/bash", "", "/home/u/.local/bin/bash"},
		{"/srv/ws/bin/bash", "/srv/ws", "/srv/ws/bin/bash"},
		{tmp, "", tmp},
		{"bash", "", "bash"},
	} {
		getenv := func(k string) string {
			return map[string]string{"SPEAR_REAL_SHELL": tc.shell, "HOME": "/home/u"}[k]
		}
		var preview *deploy.Turn
		if tc.workspace != "" {
			preview = &deploy.Turn{Workspace: tc.workspace}
		}
		if got := writableShell(getenv, preview); got != tc.want {
			t.Errorf("SPEAR_REAL_SHELL=%q, workspace %q: got %q, want %q", tc.shell, tc.workspace, got, tc.want)
		}
	}
}
