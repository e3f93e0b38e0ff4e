package spear_test

import (
	"context"
	"encoding/json"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"sync"
	"testing"

	"spear/mcp"
)

var (
	buildOnce sync.Once
	binDir    string
	buildErr  error
)

// realBinaries builds spear-term, spear-capability and notes-server once,
// as users run them (not the test binary standing in for them).
func realBinaries(b *testing.B) string {
	buildOnce.Do(func() {
		binDir, buildErr = os.MkdirTemp("", "spear-bench-")
		if buildErr != nil {
			return
		}
		out, err := exec.Command("go", "build", "-o", binDir, "./cmd/spear-term", "./cmd/spear-capability", "./examples/notes-server", "./internal/execfloor").CombinedOutput()
		if err != nil {
			buildErr = fmt.Errorf("%v\n%s", err, out)
		}
	})
	if buildErr != nil {
		b.Fatal(buildErr)
	}
	return binDir
}

func run(b *testing.B, env []string, name string, args ...string) {
	cmd := exec.Command(name, args...)
	cmd.Env = append(os.Environ(), env...)
	if out, err := cmd.CombinedOutput(); err != nil {
		b.Fatalf("%s %v: %v\n%s", name, args, err, out)
	}
}

// BenchmarkPassThrough compares a whole ordinary submission through
// spear-term with the same through bash, and with the least a Go shim can
// do (exec bash at once): spear-term/bash is the shim's cost, and
// go-exec-floor/bash the part of it that any Go program pays to start.
func BenchmarkPassThrough(b *testing.B) {
	bin := realBinaries(b)
	b.Run("bash", func(b *testing.B) {
		for i := 0; i < b.N; i++ {
			run(b, nil, "/bin/bash", "-c", "true")
		}
	})
	b.Run("go-exec-floor", func(b *testing.B) {
		for i := 0; i < b.N; i++ {
			run(b, nil, filepath.Join(bin, "execfloor"), "-c", "true")
		}
	})
	b.Run("spear-term", func(b *testing.B) {
		for i := 0; i < b.N; i++ {
			run(b, nil, filepath.Join(bin, "spear-term"), "-c", "true")
		}
	})
}

// turnEnv writes a registry with the given providers, a project and a turn
// under dir and returns the environment that selects them.
func turnEnv(b *testing.B, dir string, providers string) []string {
	ws := filepath.Join(dir, "ws")
	os.MkdirAll(ws, 0o755)
	os.MkdirAll(filepath.Join(dir, "cfg"), 0o755)
	write := func(name, content string) {
		if err := os.WriteFile(filepath.Join(dir, name), []byte(content), 0o644); err != nil {
			b.Fatal(err)
		}
	}
	write("cfg/projects.json", fmt.Sprintf(`{"projects": [{"name": "p", "root": %q}]}`, ws))
	write("cfg/capabilities.json", `{"providers": [`+providers+`]}`)
	write("turn.json", fmt.Sprintf(`{"session": "s", "turn": "t", "workspace": %q, "class": "implementation"}`, ws))
	return []string{"SPEAR_CONFIG_DIR=" + filepath.Join(dir, "cfg"), "SPEAR_STATE_DIR=" + filepath.Join(dir, "state"), "SPEAR_TURN_FILE=" + filepath.Join(dir, "turn.json")}
}

// BenchmarkInvoke compares one invocation through spear-term (a process,
// the checks, the audit trail, a fresh server) with a bare client doing
// start, initialize and one call on the same server.
func BenchmarkInvoke(b *testing.B) {
	bin := realBinaries(b)
	dir := b.TempDir()
	notes := filepath.Join(bin, "notes-server")
	notesDir := filepath.Join(dir, "notes")
	env := turnEnv(b, dir, fmt.Sprintf(`{"id": "notes", "command": [%q, "-dir", %q], "scope": "global", "read": ["search_notes"]}`, notes, notesDir))
	run(b, env, filepath.Join(bin, "spear-capability"), "context") // the family, built once per turn
	b.Run("bare-client", func(b *testing.B) {
		for i := 0; i < b.N; i++ {
			c, err := mcp.Connect(context.Background(), mcp.Options{Command: []string{notes, "-dir", notesDir}})
			if err != nil {
				b.Fatal(err)
			}
			if _, err := c.CallTool(context.Background(), "search_notes", json.RawMessage(`{"query":"x"}`)); err != nil {
				b.Fatal(err)
			}
			c.Close()
		}
	})
	b.Run("spear-term", func(b *testing.B) {
		for i := 0; i < b.N; i++ {
			run(b, env, filepath.Join(bin, "spear-term"), "-c", `spear-capability invoke notes/search_notes '{"query": "x"}'`)
		}
	})
}

// BenchmarkFamilyFourSlowProviders builds a turn's family from four
// providers that each take 1 s to start: they start in parallel, so one
// build takes about 1 s, not 4.
func BenchmarkFamilyFourSlowProviders(b *testing.B) {
	bin := realBinaries(b)
	fake, err := exec.LookPath("fake-mcp")
	if err != nil {
		b.Skip("fake-mcp is not on PATH")
	}
	var providers string
	for i := 0; i < 4; i++ {
		if i > 0 {
			providers += ","
		}
		providers += fmt.Sprintf(`{"id": "slow%d", "command": [%q, "-start-delay", "1s"], "scope": "global", "read": ["echo"]}`, i, fake)
	}
	for i := 0; i < b.N; i++ {
		env := turnEnv(b, b.TempDir(), providers)
		run(b, env, filepath.Join(bin, "spear-capability"), "context")
	}
}

// BenchmarkListFromState is a second list in a turn: it answers from the
// turn's state and starts no provider (the provider here would take 1 s).
func BenchmarkListFromState(b *testing.B) {
	bin := realBinaries(b)
	fake, err := exec.LookPath("fake-mcp")
	if err != nil {
		b.Skip("fake-mcp is not on PATH")
	}
	env := turnEnv(b, b.TempDir(), fmt.Sprintf(`{"id": "slow", "command": [%q, "-start-delay", "1s"], "scope": "global", "read": ["echo"]}`, fake))
	run(b, env, filepath.Join(bin, "spear-term"), "-c", "spear-capability list")
	b.ResetTimer()
	for i := 0; i < b.N; i++ {
		run(b, env, filepath.Join(bin, "spear-term"), "-c", "spear-capability list")
	}
}
