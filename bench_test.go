package spear_test

import (
	"context"
	"encoding/json"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"sync"
	"testing"
	"time"

	"spear/mcp"
)

var (
	buildOnce sync.Once
	binDir    string
	buildErr  error
)

// realBinaries builds spear-term, spear-capability and notes-server once,
// as users run them (not the test binary standing in for them).
func realBinaries(b testing.TB) string {
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

// BenchmarkPassThrough runs ordinary submissions through spear-term and
// through the least a Go shim can do (execfloor: exec bash at once),
// interleaved so both see the same load: spear-term/floor is what
// spear-term's own work costs. It is reported for `true` and for a 100 KB
// line, unconfined, and confined (the default) against both the floor and
// a floor that confines the same way; bash -c true against the floor shows
// what the Go start costs.
func BenchmarkPassThrough(b *testing.B) {
	bin := realBinaries(b)
	floor, term := filepath.Join(bin, "execfloor"), filepath.Join(bin, "spear-term")
	dir := b.TempDir()
	env := []string{"SPEAR_CONFIG_DIR=" + filepath.Join(dir, "cfg"), "SPEAR_STATE_DIR=" + filepath.Join(dir, "state"), "HOME=" + dir}
	unconfined := append(append([]string{}, env...), "SPEAR_CONFINE=off")
	long := longOrdinaryLine(100 << 10)
	b.Run("bash", func(b *testing.B) {
		compare(b, "floor", "bash",
			func() time.Duration { return timed(b, env, floor, "-c", "true") },
			func() time.Duration { return timed(b, env, "/bin/bash", "-c", "true") })
	})
	// The confined runs are measured against the floor of a confining
	// shim too (execfloor with EXECFLOOR_CONFINE=1: the same confinement,
	// no line read), which is what is left of spear-term but reading the
	// line.
	confinedFloor := append(append([]string{}, env...), "EXECFLOOR_CONFINE=1")
	for _, tc := range []struct {
		name      string
		env       []string
		floorEnvs [][]string
		line      string
	}{
		{"true", env, [][]string{env, confinedFloor}, "true"},
		{"true-unconfined", unconfined, [][]string{unconfined}, "true"},
		{"100KB", env, [][]string{env, confinedFloor}, long},
		{"100KB-unconfined", unconfined, [][]string{unconfined}, long},
	} {
		for i, fenv := range tc.floorEnvs {
			floorName := "floor"
			if i == 1 {
				floorName = "confined-floor"
			}
			b.Run(tc.name+"/vs-"+floorName, func(b *testing.B) {
				compare(b, floorName, "spear-term",
					func() time.Duration { return timed(b, fenv, floor, "-c", tc.line) },
					func() time.Duration { return timed(b, tc.env, term, "-c", tc.line) })
			})
		}
	}
}

// BenchmarkWall compares spear-term -c true, confined with the whole wall
// (its session's network namespace, joined, outbound through pasta), with
// bubblewrap doing a comparable job (bwrap --ro-bind / / --unshare-net
// bash -c true: a read-only bind of the root and a new network namespace
// for each command, the confinement other agent harnesses use), and the
// network's own cost: the same with SPEAR_NETWORK=host.
func BenchmarkWall(b *testing.B) {
	bin := realBinaries(b)
	term := filepath.Join(bin, "spear-term")
	dir := b.TempDir()
	env := turnEnv(b, dir, "")
	env = append(env, "HOME="+dir)
	host := append(append([]string{}, env...), "SPEAR_NETWORK=host")
	run(b, env, term, "-c", "true") // the session's network, once
	b.Cleanup(func() { stopSessions(b, bin, env) })
	b.Run("vs-bwrap", func(b *testing.B) {
		bwrap, err := exec.LookPath("bwrap")
		if err != nil {
			b.Skip("bwrap (Debian's bubblewrap) is not installed: make bench installs it")
		}
		compare(b, "bwrap", "spear-term",
			func() time.Duration {
				return timed(b, env, bwrap, "--ro-bind", "/", "/", "--dev", "/dev", "--proc", "/proc", "--unshare-net", "/bin/bash", "-c", "true")
			},
			func() time.Duration { return timed(b, env, term, "-c", "true") })
	})
	b.Run("network-vs-host", func(b *testing.B) {
		compare(b, "host-network", "spear-term",
			func() time.Duration { return timed(b, host, term, "-c", "true") },
			func() time.Duration { return timed(b, env, term, "-c", "true") })
	})
}

// longOrdinaryLine is an ordinary command line of about n bytes that reads
// like a turn's: words, quotes, expansions, a pipe and a redirection, and
// the capability's name where it is only an argument.
func longOrdinaryLine(n int) string {
	var sb strings.Builder
	sb.WriteString("printf '%s\\n' ")
	for i := 0; sb.Len() < n; i++ {
		fmt.Fprintf(&sb, `word%d "quoted $HOME text" 'single spear-capability' ${PATH:0:3} `, i)
	}
	sb.WriteString("| wc -l > /dev/null")
	return sb.String()
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
// the checks, the audit trail, a call on the session's warm server) with
// a bare client doing start, initialize and one call on the same server.
func BenchmarkInvoke(b *testing.B) {
	bin := realBinaries(b)
	dir := b.TempDir()
	notes := filepath.Join(bin, "notes-server")
	notesDir := filepath.Join(dir, "notes")
	env := turnEnv(b, dir, fmt.Sprintf(`{"id": "notes", "command": [%q, "-dir", %q], "scope": "global", "read": ["search_notes"]}`, notes, notesDir))
	run(b, env, filepath.Join(bin, "spear-capability"), "context") // the family, built once per turn
	defer stopSessions(b, bin, env)
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
		b.StopTimer()
		stopSessions(b, bin, env)
		b.StartTimer()
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
	defer stopSessions(b, bin, env)
	b.ResetTimer()
	for i := 0; i < b.N; i++ {
		run(b, env, filepath.Join(bin, "spear-term"), "-c", "spear-capability list")
	}
}

// timed runs the command as run does and returns how long it took.
func timed(b *testing.B, env []string, name string, args ...string) time.Duration {
	start := time.Now()
	run(b, env, name, args...)
	return time.Since(start)
}

// compare runs a and then b once per iteration, interleaved so that both
// see the same load, and reports each one's mean in ms and b/a.
func compare(bm *testing.B, aName, bName string, a, b func() time.Duration) {
	var ta, tb time.Duration
	bm.ResetTimer()
	for i := 0; i < bm.N; i++ {
		ta += a()
		tb += b()
	}
	ms := func(d time.Duration) float64 { return float64(d) / float64(bm.N) / 1e6 }
	bm.ReportMetric(ms(ta), aName+"-ms")
	bm.ReportMetric(ms(tb), bName+"-ms")
	bm.ReportMetric(float64(tb)/float64(ta), bName+"/"+aName)
}

// stopSessions stops every session's servers under the environment's
// state directory.
func stopSessions(b *testing.B, bin string, env []string) {
	run(b, env, filepath.Join(bin, "spear-capability"), "sessions", "stop")
}

// BenchmarkWarmInvoke is an invocation through spear-term -c that reaches
// the session's warm server, against spear-term -c true: a process, the
// checks, the audit trail and a call on a running server, against the
// least a submission costs.
func BenchmarkWarmInvoke(b *testing.B) {
	bin := realBinaries(b)
	dir := b.TempDir()
	notes := filepath.Join(bin, "notes-server")
	env := turnEnv(b, dir, fmt.Sprintf(`{"id": "notes", "command": [%q, "-dir", %q], "scope": "global", "read": ["search_notes"]}`, notes, filepath.Join(dir, "notes")))
	term := filepath.Join(bin, "spear-term")
	invoke := `spear-capability invoke notes/search_notes '{"query": "x"}'`
	run(b, env, term, "-c", invoke) // the family, and the server, once per session
	defer stopSessions(b, bin, env)
	compare(b, "true", "warm-invoke",
		func() time.Duration { return timed(b, env, term, "-c", "true") },
		func() time.Duration { return timed(b, env, term, "-c", invoke) })
}

// BenchmarkEverythingWarmCold is one call to the npm server-everything
// through spear-term -c, on the session's warm server against one started
// for the call (lifetime call: start, initialize, call; it is stopped
// after the answer).
func BenchmarkEverythingWarmCold(b *testing.B) {
	bin := realBinaries(b)
	repo, _ := os.Getwd()
	everything := filepath.Join(repo, "testdata/interop/node_modules/@modelcontextprotocol/server-everything/dist/index.js")
	if _, err := os.Stat(everything); err != nil {
		b.Skip("server-everything is not installed (make interop-deps)")
	}
	env := turnEnv(b, b.TempDir(), fmt.Sprintf(`{"id": "warm", "command": ["node", %q, "stdio"], "scope": "global", "read": ["echo"], "timeout": 30},
		{"id": "cold", "command": ["node", %q, "stdio"], "scope": "global", "read": ["echo"], "timeout": 30, "lifetime": "call"}`, everything, everything))
	term := filepath.Join(bin, "spear-term")
	call := func(p string) func() time.Duration {
		args := []string{"-c", "spear-capability describe " + p + "/echo"}
		run(b, env, term, args...) // an index: describe once per turn
		return func() time.Duration {
			return timed(b, env, term, "-c", `spear-capability invoke `+p+`/echo '{"message": "x"}'`)
		}
	}
	cold, warm := call("cold"), call("warm")
	defer stopSessions(b, bin, env)
	compare(b, "cold-call", "warm-call", cold, warm)
}

// BenchmarkFirstCommandFourSlowProviders is the start of a fresh turn
// with four providers that each take 1 s to start: its first command
// (list, which builds the family), then the first call (describe and
// invoke). The family starts the four in parallel; kept warm (lifetime
// session), the call reuses its server; started for each use (lifetime
// call), the call waits for another.
func BenchmarkFirstCommandFourSlowProviders(b *testing.B) {
	bin := realBinaries(b)
	fake, err := exec.LookPath("fake-mcp")
	if err != nil {
		b.Skip("fake-mcp is not on PATH")
	}
	providers := func(lifetime string) string {
		var ps []string
		for i := 0; i < 4; i++ {
			ps = append(ps, fmt.Sprintf(`{"id": "slow%d", "command": [%q, "-start-delay", "1s"], "scope": "global", "read": ["echo"], "lifetime": %q}`, i, fake, lifetime))
		}
		return strings.Join(ps, ",")
	}
	term := filepath.Join(bin, "spear-term")
	first := func(lifetime string) func() time.Duration {
		return func() time.Duration {
			env := turnEnv(b, b.TempDir(), providers(lifetime))
			d := timed(b, env, term, "-c", "spear-capability list")
			d += timed(b, env, term, "-c", "spear-capability describe slow0/echo")
			d += timed(b, env, term, "-c", "spear-capability invoke slow0/echo {}")
			stopSessions(b, bin, env)
			return d
		}
	}
	compare(b, "call", "session", first("call"), first("session"))
}
