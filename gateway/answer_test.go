package gateway

import (
	"context"
	"fmt"
	"io"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"spear/audit"
)

// TestEveryRefusalIsAudited: each refused command, whatever refuses it, is
// exactly one capability_refused event.
func TestEveryRefusalIsAudited(t *testing.T) {
	dir := t.TempDir()
	ws := filepath.Join(dir, "ws")
	os.MkdirAll(ws, 0o755)
	write := func(name, content string) { os.WriteFile(filepath.Join(dir, name), []byte(content), 0o644) }
	write("projects.json", fmt.Sprintf(`{"projects": [{"name": "p", "root": %q}]}`, ws))
	write("capabilities.json", `{"providers": []}`)
	write("turn.json", fmt.Sprintf(`{"session": "s", "turn": "t", "workspace": %q, "class": "implementation"}`, ws))
	env := map[string]string{"HOME": dir, "SPEAR_CONFIG_DIR": dir, "SPEAR_STATE_DIR": filepath.Join(dir, "state"), "SPEAR_TURN_FILE": filepath.Join(dir, "turn.json")}
	g := New(func(k string) string { return env[k] })
	commands := [][]string{
		{}, {"frobnicate"}, {"list", "extra"}, {"context"}, {"check"}, {"invoke", "a", "b", "c", "d"}, {"invoke"},
		{"describe"}, {"describe", "a/b"}, {"invoke", "a/b", "{}"}, {"invoke", "nameless", "{}"},
	}
	for _, args := range commands {
		var stderr strings.Builder
		if st := g.Answer(context.Background(), args, io.Discard, &stderr); st != 2 {
			t.Errorf("%q: status %d", args, st)
		}
	}
	f, err := os.Open(filepath.Join(dir, "state", "audit.jsonl"))
	if err != nil {
		t.Fatal(err)
	}
	defer f.Close()
	refused := 0
	audit.Read(f, func(e audit.Entry) error {
		if e.Event == audit.CapabilityRefused {
			refused++
		}
		return nil
	})
	if refused != len(commands) {
		t.Errorf("%d capability_refused events for %d refusals", refused, len(commands))
	}
}
