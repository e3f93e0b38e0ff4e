package importer

import (
	"strings"
	"testing"

	"spear/deploy"
)

// fuzzRead checks what every reader promises, whatever the file holds: no
// panic; each server imported or skipped with a reason; and every entry a
// plan makes loads, all of them together, in a registry file.
func fuzzRead(f *testing.F, path string, format Format, seeds ...string) {
	for _, s := range seeds {
		f.Add([]byte(s))
	}
	f.Fuzz(func(t *testing.T, data []byte) {
		file, err := Read(path, data, format)
		if err != nil {
			if _, ok := err.(*Error); !ok {
				t.Fatalf("the error is a %T, not an *Error: %v", err, err)
			}
			return
		}
		for _, s := range file.Servers {
			if s.Where == "" {
				t.Fatalf("server %q has no place", s.Name)
			}
			if (s.Skip == "") == (len(s.Command) == 0) {
				t.Fatalf("server %q: skip %q with command %q", s.Name, s.Skip, s.Command)
			}
			if s.Skip != "" && (s.Env != nil || s.Notes != nil) {
				t.Fatalf("skipped server %q carries more than why", s.Name)
			}
		}
		p, err := file.Plan(Options{Registry: "/cfg/capabilities.json", Scope: "global", Resolve: func(name string) (string, error) {
			if strings.HasPrefix(name, "/") {
				return name, nil
			}
			return "/usr/bin/" + name, nil
		}})
		if err != nil {
			if _, ok := err.(*PlanError); !ok {
				t.Fatalf("the error is a %T, not a *PlanError: %v", err, err)
			}
			return
		}
		var reg []byte
		for _, e := range p.Entries {
			if e.Write != deploy.WriteRefuse || len(e.Read) != 0 {
				t.Fatalf("entry %s is not refuse and read []", e.ID)
			}
			if reg, err = deploy.AddEntry("/cfg/capabilities.json", reg, e, false); err != nil {
				t.Fatalf("entry %s does not go in the registry: %v", e.ID, err)
			}
		}
		if reg == nil {
			return
		}
		r, err := deploy.ParseRegistry("/cfg/capabilities.json", reg)
		if err != nil || len(r.Problems) > 0 || len(r.Providers) != len(p.Entries) {
			t.Fatalf("the planned registry does not load: %v %v\n%s", err, r.Problems, reg)
		}
	})
}

func FuzzReadClaude(f *testing.F) {
	fuzzRead(f, "/p/.mcp.json", Claude, sampleMCPJSON, sampleClaudeJSON, `{"mcpServers": {"a": {"command": "x", "env": {"A": "1"}}}}`)
}

func FuzzReadCodex(f *testing.F) {
	fuzzRead(f, "/h/.codex/config.toml", Codex, sampleCodex, "[mcp_servers.a]\ncommand = \"x\"\nargs = [\"1\"]\n")
}

func FuzzReadGemini(f *testing.F) {
	fuzzRead(f, "/h/.gemini/settings.json", Gemini, sampleGemini)
}

func FuzzReadVSCode(f *testing.F) {
	fuzzRead(f, "/w/.vscode/mcp.json", VSCode, sampleVSCode, `{"mcp": {"servers": {"a": {"command": "x"}}}}`)
}

func FuzzReadCursor(f *testing.F) {
	fuzzRead(f, "/w/.cursor/mcp.json", Cursor, sampleCursor)
}

// FuzzDetect reads a file whose format is recognised from it.
func FuzzDetect(f *testing.F) {
	fuzzRead(f, "/w/servers.json", "", sampleVSCode, sampleClaudeJSON, "[mcp_servers.a]\ncommand = \"x\"\n")
}
