package deploy

import (
	"os"
	"path/filepath"
	"slices"
	"strings"
	"testing"
	"time"
)

func writeFile(t *testing.T, name, content string) string {
	t.Helper()
	path := filepath.Join(t.TempDir(), name)
	if err := os.WriteFile(path, []byte(content), 0o644); err != nil {
		t.Fatal(err)
	}
	return path
}

func TestProviderKeys(t *testing.T) {
	cases := []struct {
		entry string
		want  string // a part of the problem, or "" for a valid entry
	}{
		{`{"id": "a", "command": ["x"]}`, ""},
		{`{"id": "a-b_c9", "command": ["x", "--flag"], "scope": "global", "tasks": ["general"], "env": {"T": "v"}, "read": ["r"], "write": "confirm", "enabled": false, "timeout": 2.5}`, ""},
		{`{"command": ["x"]}`, `key "id": missing`},
		{`{"id": 7, "command": ["x"]}`, `key "id": must be a string, found a number`},
		{`{"id": "Abc", "command": ["x"]}`, `"Abc" is not a valid id`},
		{`{"id": "9a", "command": ["x"]}`, `"9a" is not a valid id`},
		{`{"id": "a/b", "command": ["x"]}`, `is not a valid id`},
		{`{"id": "a"}`, `key "command": missing`},
		{`{"id": "a", "command": "x"}`, `key "command": must be a list of strings`},
		{`{"id": "a", "command": []}`, `key "command": must name the server`},
		{`{"id": "a", "command": [""]}`, `key "command": must name the server`},
		{`{"id": "a", "command": [1]}`, `key "command": must be a list of strings`},
		{`{"id": "a", "command": ["x"], "scope": 1}`, `key "scope": must be a string`},
		{`{"id": "a", "command": ["x"], "scope": "everywhere"}`, `"everywhere" is not a scope`},
		{`{"id": "a", "command": ["x"], "scope": "global x"}`, `global takes nothing after it`},
		{`{"id": "a", "command": ["x"], "scope": "corpus"}`, `corpus takes a comma-separated list`},
		{`{"id": "a", "command": ["x"], "scope": "corpus a,,b"}`, `comma-separated list`},
		{`{"id": "a", "command": ["x"], "scope": "path relative"}`, `path takes an absolute directory`},
		{`{"id": "a", "command": ["x"], "tasks": "general"}`, `key "tasks": must be a list`},
		{`{"id": "a", "command": ["x"], "tasks": ["review"]}`, `"review" is not a task class`},
		{`{"id": "a", "command": ["x"], "tasks": ["general", "general"]}`, `"general" is listed twice`},
		{`{"id": "a", "command": ["x"], "env": ["A"]}`, `key "env": must be an object`},
		{`{"id": "a", "command": ["x"], "env": {"1A": "v"}}`, `"1A" is not a valid variable name`},
		{`{"id": "a", "command": ["x"], "env": {"A": true}}`, `the value of A must be a string, found a boolean`},
		{`{"id": "a", "command": ["x"], "read": "r"}`, `key "read": must be a list of tool names`},
		{`{"id": "a", "command": ["x"], "read": ["r", "r"]}`, `listed once`},
		{`{"id": "a", "command": ["x"], "read": [""]}`, `non-empty`},
		{`{"id": "a", "command": ["x"], "write": "yes"}`, `"yes" is not a write policy; allowed: refuse, confirm, allow`},
		{`{"id": "a", "command": ["x"], "write": true}`, `key "write": must be a string`},
		{`{"id": "a", "command": ["x"], "enabled": "no"}`, `key "enabled": must be true or false`},
		{`{"id": "a", "command": ["x"], "timeout": "10"}`, `key "timeout": must be a number of seconds`},
		{`{"id": "a", "command": ["x"], "timeout": -1}`, `out of range`},
		{`{"id": "a", "command": ["x"], "timeout": 301}`, `out of range; give seconds above 0 and at most 300`},
		{`{"id": "a", "command": ["/opt/x/bin/x"], "private": ["/etc/x-token", "/opt/x/"]}`, ""},
		{`{"id": "a", "command": ["x"], "lifetime": "call"}`, ""},
		{`{"id": "a", "command": ["x"], "lifetime": "forever"}`, `"forever" is not a lifetime; allowed: session, call`},
		{`{"id": "a", "command": ["x"], "lifetime": 1}`, `key "lifetime": must be a string`},
		{`{"id": "a", "command": ["./x"]}`, `"./x" is a relative path`},
		{`{"id": "a", "command": ["bin/x"]}`, `"bin/x" is a relative path`},
		{`{"id": "a", "command": ["x"], "private": "/etc/t"}`, `key "private": must be a list of absolute paths`},
		{`{"id": "a", "command": ["x"], "private": ["t"]}`, `"t" is not an absolute path`},
		{`{"id": "a", "command": ["x"], "privat": []}`, `did you mean "private"?`},
		{`{"id": "a", "command": ["x"], "wirte": "allow"}`, `unknown key (did you mean "write"?)`},
		{`{"id": "a", "command": ["x"], "scpoe": "global"}`, `did you mean "scope"?`},
		{`{"id": "a", "command": ["x"], "colour": 1}`, `key "colour": unknown key; allowed: id, command`},
		{`"a"`, `an entry must be an object, found a string`},
	}
	for _, tc := range cases {
		path := writeFile(t, "capabilities.json", `{"providers": [`+tc.entry+`, {"id": "other", "command": ["y"]}]}`)
		reg, err := LoadRegistry(path)
		if err != nil {
			t.Fatalf("%s: %v", tc.entry, err)
		}
		if reg.Provider("other") == nil {
			t.Errorf("%s: the other entry did not load", tc.entry)
		}
		if tc.want == "" {
			if len(reg.Problems) > 0 || len(reg.Providers) != 2 {
				t.Errorf("%s: problems %v", tc.entry, reg.Problems)
			}
			continue
		}
		if len(reg.Problems) != 1 || !strings.Contains(reg.Problems[0].Error(), tc.want) {
			t.Errorf("%s: problems %v, want one saying %q", tc.entry, reg.Problems, tc.want)
		}
	}
}

func TestProviderDefaults(t *testing.T) {
	reg, err := LoadRegistry(writeFile(t, "c.json", `{"providers": [{"id": "a", "command": ["x"]}]}`))
	if err != nil {
		t.Fatal(err)
	}
	p := reg.Providers[0]
	if p.Write != WriteRefuse || !p.Enabled || p.Timeout != 10*time.Second || !slices.Equal(p.Tasks, []Task{TaskImplementation, TaskMixed}) || p.Scope.Kind != "" {
		t.Fatalf("defaults %+v", p)
	}
}

func TestRegistryFiles(t *testing.T) {
	reg, err := LoadRegistry(filepath.Join(t.TempDir(), "none.json"))
	if err != nil || !reg.Missing {
		t.Fatalf("missing file: %+v, %v", reg, err)
	}
	for content, want := range map[string]string{
		"{\n  \"providers\": [\n    {\"id\": \"a\",}\n  ]\n}": ":3:16: not valid JSON",
		`[]`:                                 "must hold one JSON object",
		`null`:                               "not null",
		`{"providers": {}}`:                  `"providers" must be a list, found an object`,
		`{"providers": [], "providers": []}`: `the key "providers" appears twice`,
	} {
		_, err := LoadRegistry(writeFile(t, "c.json", content))
		if err == nil || !strings.Contains(err.Error(), want) {
			t.Errorf("%q: err %v, want %q", content, err, want)
		}
	}
	reg, err = LoadRegistry(writeFile(t, "c.json", `{"providers": [], "extra": 1}`))
	if err != nil || len(reg.Problems) != 1 || !strings.Contains(reg.Problems[0].Msg, "unknown key") {
		t.Errorf("top-level key: %+v %v", reg, err)
	}
}

func TestEditDistance(t *testing.T) {
	for _, tc := range []struct {
		a, b string
		d    int
	}{{"wirte", "write", 1}, {"write", "write", 0}, {"", "abc", 3}, {"scpoe", "scope", 1}, {"timout", "timeout", 1}} {
		if got := editDistance(tc.a, tc.b); got != tc.d {
			t.Errorf("editDistance(%q, %q) = %d, want %d", tc.a, tc.b, got, tc.d)
		}
	}
}

func FuzzParseRegistry(f *testing.F) {
	for _, s := range []string{
		`{"providers": [{"id": "a", "command": ["x"], "scope": "corpus a, b", "tasks": ["general"], "env": {"A": "b"}, "read": ["r"], "write": "allow", "enabled": true, "timeout": 3}]}`,
		`{"providers": [{"id": "a"}, 1, null, {"id": "b", "command": [], "timeout": 1e308}]}`,
		`{"providers": {}}`, `[]`, `{`, `{"providers": [{"id": "a", "id": "b"}]}`,
	} {
		f.Add([]byte(s))
	}
	f.Fuzz(func(t *testing.T, data []byte) {
		reg, err := ParseRegistry("c.json", data)
		if err != nil {
			return
		}
		ids := map[string]bool{}
		for _, p := range reg.Providers {
			if !validID(p.ID) || ids[p.ID] || len(p.Command) == 0 || p.Timeout <= 0 || p.Timeout > MaxTimeout {
				t.Fatalf("invalid provider loaded: %+v", p)
			}
			ids[p.ID] = true
		}
	})
}

func FuzzParseTurn(f *testing.F) {
	f.Add([]byte(`{"session": "s", "turn": "t", "workspace": "/w", "class": "mixed", "pass": "implementation"}`))
	f.Add([]byte(`{"session": "s", "turn": "t", "workspace": "/w", "class": "general", "permission_mode": "read-only"}`))
	f.Add([]byte(`{"class": null}`))
	f.Fuzz(func(t *testing.T, data []byte) {
		turn, err := ParseTurn("turn.json", data)
		if err != nil {
			return
		}
		if !validTurnID(turn.Session) || !validTurnID(turn.Turn) || turn.Workspace == "" || turn.PermissionMode == "" {
			t.Fatalf("invalid turn loaded: %+v", turn)
		}
	})
}
