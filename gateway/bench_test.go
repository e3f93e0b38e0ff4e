package gateway

import (
	"context"
	"encoding/json"
	"fmt"
	"io"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"

	"spear/mcp"
)

// notesServer builds the example server for the benchmarks.
func notesServer(b *testing.B) string {
	dir := b.TempDir()
	out, err := exec.Command("go", "build", "-o", dir, "../examples/notes-server").CombinedOutput()
	if err != nil {
		b.Fatalf("%v\n%s", err, out)
	}
	return filepath.Join(dir, "notes-server")
}

// BenchmarkAnswerInvoke is one invocation answered in-process (turn, state,
// checks, audit, a fresh server), against a bare client's start,
// initialize and call on the same server: the difference is the gateway's
// own work, without process start-up.
func BenchmarkAnswerInvoke(b *testing.B) {
	notes := notesServer(b)
	dir := b.TempDir()
	ws := filepath.Join(dir, "ws")
	os.MkdirAll(ws, 0o755)
	write := func(name, content string) { os.WriteFile(filepath.Join(dir, name), []byte(content), 0o644) }
	write("projects.json", fmt.Sprintf(`{"projects": [{"name": "p", "root": %q}]}`, ws))
	write("capabilities.json", fmt.Sprintf(`{"providers": [{"id": "notes", "command": [%q, "-dir", %q], "scope": "global", "read": ["search_notes"]}]}`, notes, filepath.Join(dir, "notes")))
	write("turn.json", fmt.Sprintf(`{"session": "s", "turn": "t", "workspace": %q, "class": "implementation"}`, ws))
	env := map[string]string{"HOME": dir, "SPEAR_PROJECTS_FILE": filepath.Join(dir, "projects.json"), "SPEAR_STATE_DIR": filepath.Join(dir, "state"), "SPEAR_TURN_FILE": filepath.Join(dir, "turn.json")}
	g := New(func(k string) string { return env[k] })
	args := []string{"invoke", "notes/search_notes", `{"query": "x"}`}
	if st := g.Answer(context.Background(), args, io.Discard, os.Stderr); st != 0 {
		b.Fatalf("status %d", st)
	}
	b.Run("bare-client", func(b *testing.B) {
		for i := 0; i < b.N; i++ {
			c, err := mcp.Connect(context.Background(), mcp.Options{Command: []string{notes, "-dir", filepath.Join(dir, "notes")}})
			if err != nil {
				b.Fatal(err)
			}
			if _, err := c.CallTool(context.Background(), "search_notes", json.RawMessage(`{"query":"x"}`)); err != nil {
				b.Fatal(err)
			}
			c.Close()
		}
	})
	b.Run("gateway", func(b *testing.B) {
		for i := 0; i < b.N; i++ {
			if st := g.Answer(context.Background(), args, io.Discard, os.Stderr); st != 0 {
				b.Fatalf("status %d", st)
			}
		}
	})
}

// BenchmarkManyTools builds the family of one provider with 10,000 tools,
// then lists it again: the turn's state stays within MaxProviderBytes per
// provider, and a later list reads only the state. With small tools the
// provider is kept; with tools of about 500 bytes each (5 MiB in all) it
// is left out, and the state keeps only why.
func BenchmarkManyTools(b *testing.B) {
	self, err := os.Executable()
	if err != nil {
		b.Fatal(err)
	}
	for _, tc := range []struct {
		name string
		pad  int
	}{{"small", 0}, {"fat", 500}} {
		b.Run(tc.name, func(b *testing.B) {
			dir := b.TempDir()
			ws := filepath.Join(dir, "ws")
			os.MkdirAll(ws, 0o755)
			write := func(name, content string) { os.WriteFile(filepath.Join(dir, name), []byte(content), 0o644) }
			tools := make([]map[string]any, 10000)
			for i := range tools {
				tools[i] = map[string]any{"name": fmt.Sprintf("tool%05d", i), "description": "generated tool",
					"inputSchema": map[string]any{"type": "object", "description": strings.Repeat("x", tc.pad)}}
			}
			data, _ := json.Marshal(map[string]any{"tools": tools})
			write("tools.json", string(data))
			write("projects.json", fmt.Sprintf(`{"projects": [{"name": "p", "root": %q}]}`, ws))
			write("capabilities.json", fmt.Sprintf(`{"providers": [{"id": "many", "command": [%q, "-tools-file", %q, "-page", "500"], "env": {%q: "1"}, "scope": "global", "timeout": 30}]}`,
				self, filepath.Join(dir, "tools.json"), fakeServerEnv))
			env := map[string]string{"HOME": dir, "SPEAR_PROJECTS_FILE": filepath.Join(dir, "projects.json"), "SPEAR_STATE_DIR": filepath.Join(dir, "state"), "SPEAR_TURN_FILE": filepath.Join(dir, "turn.json")}
			g := New(func(k string) string { return env[k] })
			list := func(turn string) {
				write("turn.json", fmt.Sprintf(`{"session": "s", "turn": %q, "workspace": %q, "class": "implementation"}`, turn, ws))
				var out strings.Builder
				if st := g.Answer(context.Background(), []string{"list"}, &out, io.Discard); st != 0 {
					b.Fatalf("status %d", st)
				}
			}
			b.Run("build", func(b *testing.B) {
				for i := 0; i < b.N; i++ {
					list(fmt.Sprintf("build-%d", i))
				}
				info, err := os.Stat(filepath.Join(dir, "state", "sessions", "s", "turns", "build-0", "state.json"))
				if err != nil {
					b.Fatal(err)
				}
				b.ReportMetric(float64(info.Size()), "state-bytes")
			})
			list("again")
			b.Run("list-again", func(b *testing.B) {
				for i := 0; i < b.N; i++ {
					list("again")
				}
			})
		})
	}
}
