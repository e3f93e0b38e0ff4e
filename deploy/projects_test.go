package deploy

import (
	"errors"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"
)

func TestResolveProject(t *testing.T) {
	root := t.TempDir()
	for _, d := range []string{"src/web/sub", "src/web2", "src/fw/a", "elsewhere"} {
		os.MkdirAll(filepath.Join(root, d), 0o755)
	}
	os.Symlink(filepath.Join(root, "src/web"), filepath.Join(root, "link"))
	os.Symlink(filepath.Join(root, "src"), filepath.Join(root, "srclink"))
	ps := &Projects{List: []Project{
		{Name: "web", Root: filepath.Join(root, "src/web")},
		{Name: "web2", Root: filepath.Join(root, "src/web2")},
		{Name: "fw", Root: filepath.Join(root, "srclink/fw")}, // a root through a symlink
		{Name: "fw-a", Root: filepath.Join(root, "src/fw/a")},
	}}
	for ws, want := range map[string]string{
		"src/web":              "web",
		"src/web/sub":          "web",
		"src/web/sub/../sub":   "web",
		"src/web2":             "web2",
		"link/sub":             "", // in none as given: a conflict (TestResolveConflict)
		"src/fw":               "", // in fw by its resolved root only
		"src/fw/a":             "fw-a",
		"srclink/fw":           "fw",
		"srclink/fw/a":         "", // in fw as given, fw-a resolved
		"elsewhere":            "",
		"src":                  "",
		"src/we":               "",
		"src/web/../elsewhere": "",
	} {
		p, _, _ := ps.Resolve(filepath.Join(root, ws))
		got := ""
		if p != nil {
			got = p.Name
		}
		if got != want {
			t.Errorf("%s: project %q, want %q", ws, got, want)
		}
	}
}

func TestLoadTurn(t *testing.T) {
	good := `{"session": "s", "turn": "t", "workspace": "/w", "class": "mixed", "pass": "implementation", "standard_bound": true, "concerns_standard": true, "permission_mode": "auto"}`
	turn, err := LoadTurn(writeFile(t, "turn.json", good))
	if err != nil || turn.Pass != PassImplementation || turn.PermissionMode != ModeAuto {
		t.Fatalf("%+v %v", turn, err)
	}
	turn, err = LoadTurn(writeFile(t, "turn.json", `{"session": "s", "turn": "t", "workspace": "/w", "class": "general"}`))
	if err != nil || turn.PermissionMode != ModeAsk {
		t.Fatalf("default mode: %+v %v", turn, err)
	}
	for content, want := range map[string]string{
		`{"session": "s", "turn": "t", "workspace": "/w", "class": "general", "x": 1}`:                 `field "x": unknown field`,
		`{"session": "s", "turn": "t", "workspace": "proj-b", "class": "general"}`:                     `"proj-b" is not an absolute path`,
		`{"session": "s", "turn": "t", "workspace": "/w/a/../b", "class": "general"}`:                  `has a ".." in it`,
		`{"session": "s", "turn": "t", "workspace": "/w"}`:                                             `field "class": missing`,
		`{"session": "s", "turn": "t", "workspace": "/w", "class": "review"}`:                          `"review" is not a class`,
		`{"session": "s", "turn": "t", "workspace": "/w", "class": "mixed"}`:                           `field "pass": missing`,
		`{"session": "s", "turn": "t", "workspace": "/w", "class": "mixed", "pass": "x"}`:              `"x" is not a pass`,
		`{"session": "s", "turn": "t", "workspace": "/w", "class": "general", "pass": "normative"}`:    `for mixed turns only`,
		`{"session": "s", "turn": "t", "workspace": "/w", "class": "general", "permission_mode": "x"}`: `"x" is not a permission mode`,
		`{"session": "s", "turn": "t", "workspace": "/w", "class": 1}`:                                 `field "class": must be a string, found a number`,
		`{"session": "s", "turn": "t", "workspace": "/w", "class": "general", "standard_bound": 1}`:    `must be true or false`,
		`{"turn": "t", "workspace": "/w", "class": "general"}`:                                         `field "session": missing`,
		`{"session": "a/b", "turn": "t", "workspace": "/w", "class": "general"}`:                       `"a/b" is not a valid id`,
		`{"session": "s", "turn": "..", "workspace": "/w", "class": "general"}`:                        `".." is not a valid id`,
		`{"session": "s", "turn": "t", "class": "general"}`:                                            `field "workspace": missing`,
		`{"session": "s", "session": "s2", "turn": "t", "workspace": "/w", "class": "general"}`:        `appears twice`,
	} {
		_, err := LoadTurn(writeFile(t, "turn.json", content))
		if err == nil || !strings.Contains(err.Error(), want) {
			t.Errorf("%s: err %v, want %q", content, err, want)
		}
	}
	if _, err := LoadTurn(""); err == nil || !strings.Contains(err.Error(), "SPEAR_TURN_FILE is not set") {
		t.Errorf("no turn file: %v", err)
	}
}

func TestSettings(t *testing.T) {
	env := map[string]string{"HOME": "/home/u"}
	p, err := SettingsFrom(func(k string) string { return env[k] })
	if err != nil {
		t.Fatal(err)
	}
	if p.ProjectsFile != "/home/u/.config/spear/projects.json" || p.CapabilitiesFile != "/home/u/.config/spear/capabilities.json" || p.AuditFile != "/home/u/.local/state/spear/audit.jsonl" {
		t.Errorf("defaults %+v", p)
	}
	env = map[string]string{"HOME": "/h", "XDG_CONFIG_HOME": "/x", "XDG_STATE_HOME": "/s", "SPEAR_PROJECTS_FILE": "/p/projects.json", "SPEAR_MAX_OUTPUT": "100"}
	p, err = SettingsFrom(func(k string) string { return env[k] })
	if err != nil {
		t.Fatal(err)
	}
	if p.ConfigDir != "/x/spear" || p.CapabilitiesFile != "/p/capabilities.json" || p.StateDir != "/s/spear" || p.MaxOutput != 100 {
		t.Errorf("overrides %+v", p)
	}
}

// TestSettingsNumbers: SPEAR_IDLE_TIMEOUT and SPEAR_CONFIRM_TIMEOUT are
// seconds, fractions allowed, and SPEAR_MAX_OUTPUT whole bytes; unset is
// the default, and anything else is an error naming the variable and what
// it must be, never silently the default.
func TestSettingsNumbers(t *testing.T) {
	for v, want := range map[string]time.Duration{
		"": DefaultIdleTimeout, "30": 30 * time.Second, "0.5": 500 * time.Millisecond, " 7 ": 7 * time.Second,
	} {
		env := map[string]string{"HOME": "/h", "SPEAR_IDLE_TIMEOUT": v}
		s, err := SettingsFrom(func(k string) string { return env[k] })
		if err != nil || s.IdleTimeout != want {
			t.Errorf("SPEAR_IDLE_TIMEOUT=%q: %v, %v; want %v", v, s.IdleTimeout, err, want)
		}
	}
	for _, c := range []struct{ name, v string }{
		{"SPEAR_IDLE_TIMEOUT", "0"}, {"SPEAR_IDLE_TIMEOUT", "-1"}, {"SPEAR_IDLE_TIMEOUT", "ten"},
		{"SPEAR_IDLE_TIMEOUT", "NaN"}, {"SPEAR_IDLE_TIMEOUT", "Inf"}, {"SPEAR_IDLE_TIMEOUT", "10s"},
		{"SPEAR_IDLE_TIMEOUT", "9999999"}, {"SPEAR_CONFIRM_TIMEOUT", "3601"}, {"SPEAR_CONFIRM_TIMEOUT", "1m"},
		{"SPEAR_MAX_OUTPUT", "1.5"}, {"SPEAR_MAX_OUTPUT", "0"}, {"SPEAR_MAX_OUTPUT", "64k"}, {"SPEAR_MAX_OUTPUT", "1e12"},
		{"SPEAR_CONFINE", "of"},
	} {
		env := map[string]string{"HOME": "/h", c.name: c.v}
		_, err := SettingsFrom(func(k string) string { return env[k] })
		var se *SettingsError
		if !errors.As(err, &se) || !strings.Contains(err.Error(), c.name+"=") || !strings.Contains(err.Error(), "set it to") {
			t.Errorf("%s=%q: %v; want an error naming it and what to set", c.name, c.v, err)
		}
	}
	env := map[string]string{"HOME": "/h", "SPEAR_CONFIRM_TIMEOUT": "2.5", "SPEAR_MAX_OUTPUT": "4096"}
	s, err := SettingsFrom(func(k string) string { return env[k] })
	if err != nil || s.ConfirmTimeout != 2500*time.Millisecond || s.MaxOutput != 4096 {
		t.Errorf("good numbers: %+v, %v", s, err)
	}
}

func FuzzParseProjects(f *testing.F) {
	f.Add([]byte(`{"projects": [{"name": "a", "root": "/a", "family": "f"}, {"name": "a", "root": "/b"}]}`))
	f.Add([]byte(`{"projects": [{"name": "", "root": "rel"}, 3]}`))
	f.Fuzz(func(t *testing.T, data []byte) {
		ps, err := ParseProjects("projects.json", data)
		if err != nil {
			return
		}
		names := map[string]bool{}
		for _, p := range ps.List {
			if p.Name == "" || !filepath.IsAbs(p.Root) || names[p.Name] {
				t.Fatalf("invalid project loaded: %+v", p)
			}
			names[p.Name] = true
		}
	})
}

func TestSettingsNeverRelative(t *testing.T) {
	for _, tc := range []struct {
		env  map[string]string
		want string // in the error; empty for none
	}{
		{map[string]string{}, "set HOME or SPEAR_CONFIG_DIR"},
		{map[string]string{"HOME": "rel"}, "set HOME or SPEAR_CONFIG_DIR"},
		{map[string]string{"SPEAR_CONFIG_DIR": "/c"}, "set HOME or SPEAR_STATE_DIR"},
		{map[string]string{"SPEAR_CONFIG_DIR": "/c", "SPEAR_STATE_DIR": "/s"}, ""},
		{map[string]string{"SPEAR_PROJECTS_FILE": "/c/p.json", "SPEAR_CAPABILITIES_FILE": "/c/c.json", "XDG_STATE_HOME": "/x"}, ""},
		{map[string]string{"SPEAR_CONFIG_DIR": "c", "SPEAR_STATE_DIR": "/s"}, "set SPEAR_CONFIG_DIR"},
		{map[string]string{"HOME": "/h", "SPEAR_AUDIT_FILE": "a.jsonl"}, "set SPEAR_AUDIT_FILE"},
	} {
		s, err := SettingsFrom(func(k string) string { return tc.env[k] })
		switch {
		case tc.want == "" && err != nil:
			t.Errorf("%v: %v", tc.env, err)
		case tc.want != "" && (err == nil || !strings.Contains(err.Error(), tc.want)):
			t.Errorf("%v: error %v, want one saying %q", tc.env, err, tc.want)
		case err == nil:
			for _, p := range []string{s.ConfigDir, s.ProjectsFile, s.CapabilitiesFile, s.StateDir, s.AuditFile} {
				if !filepath.IsAbs(p) {
					t.Errorf("%v: relative %q in %+v", tc.env, p, s)
				}
			}
		}
	}
}

// TestProjectProblemStable: of two bad keys, the same one is reported
// every time (the first in key order).
func TestProjectProblemStable(t *testing.T) {
	data := []byte(`{"projects": [{"name": "a", "root": "/a", "zeta": 1, "beta": 2, "mu": 3}]}`)
	for i := 0; i < 50; i++ {
		ps, err := ParseProjects("p.json", data)
		if err != nil {
			t.Fatal(err)
		}
		if len(ps.Problems) != 1 || ps.Problems[0].Key != "beta" {
			t.Fatalf("run %d: problems %+v, want one about key beta", i, ps.Problems)
		}
	}
}

// TestResolveConflict: a symlink the turn planted in one project's tree
// that points into another project, or out of every project, offers
// nothing; a symlink within one project, or into a project from outside
// every project, is followed.
func TestResolveConflict(t *testing.T) {
	root := t.TempDir()
	for _, d := range []string{"a/src", "b/src", "outside"} {
		if err := os.MkdirAll(filepath.Join(root, d), 0o755); err != nil {
			t.Fatal(err)
		}
	}
	// c is a project whose root the turn replaced by a link to b's
	links := map[string]string{"a/to-b": "../b/src", "a/to-out": "../outside", "a/inner": "src", "outside/to-a": "../a/src", "c": "b"}
	for l, target := range links {
		if err := os.Symlink(target, filepath.Join(root, l)); err != nil {
			t.Fatal(err)
		}
	}
	ps := &Projects{List: []Project{{Name: "a", Root: filepath.Join(root, "a")}, {Name: "b", Root: filepath.Join(root, "b")}, {Name: "c", Root: filepath.Join(root, "c")}}}
	for _, tc := range []struct{ ws, project, conflict string }{
		{"a/src", "a", ""},
		{"a/inner", "a", ""},
		{"a/to-b", "", "resolves through a symlink"},
		{"a/to-out", "", "in no registered project"},
		{"outside/to-a", "", "lies in no registered project as given, but resolves through a symlink to"},
		{"c/src", "", "lies in project c as given, but resolves through a symlink to"},
		{"outside", "", ""},
	} {
		p, _, err := ps.Resolve(filepath.Join(root, tc.ws))
		name := ""
		if p != nil {
			name = p.Name
		}
		if name != tc.project || (tc.conflict == "") != (err == nil) || err != nil && !strings.Contains(err.Error(), tc.conflict) {
			t.Errorf("%s: project %q, error %v; want %q, %q", tc.ws, name, err, tc.project, tc.conflict)
		}
	}
}
