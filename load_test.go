package spear_test

import (
	"bufio"
	"bytes"
	"encoding/json"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"sort"
	"strconv"
	"strings"
	"sync"
	"sync/atomic"
	"testing"
	"time"
)

// loadShape is how big TestLoad is: SPEAR_LOAD=full (make bench) runs the
// whole load, the default a short form of the same.
type loadShape struct {
	sessions    int // driven at once, one harness each
	invocations int // in all, spread over the sessions
	stops       int // sessions stopped by the operator midway
}

func loadShapeFromEnv() loadShape {
	if os.Getenv("SPEAR_LOAD") == "full" {
		return loadShape{sessions: 32, invocations: 1000, stops: 6}
	}
	return loadShape{sessions: 6, invocations: 120, stops: 2}
}

// TestLoad drives many sessions at once through the real binaries, each as
// a harness would: invocations of four providers (two kept warm for the
// session, two started for each call) mixed with ordinary commands, and
// an operator's sessions stop of some sessions midway. Afterwards every
// invocation got an answer (a result, or unavailable said as such), the
// audit trail has one end record for each call it started, no process of
// any provider is left, and the session processes' descriptors and memory
// stayed bounded. It logs p50 and p99 of a warm invocation.
func TestLoad(t *testing.T) {
	if testing.Short() {
		t.Skip("a load test")
	}
	shape := loadShapeFromEnv()
	bin := realBinaries(t)
	term, capability, notes := filepath.Join(bin, "spear-term"), filepath.Join(bin, "spear-capability"), filepath.Join(bin, "notes-server")
	dir := t.TempDir()
	tag := filepath.Join(dir, "notes")
	ws := filepath.Join(dir, "ws")
	for _, d := range []string{ws, filepath.Join(dir, "cfg"), tag} {
		if err := os.MkdirAll(d, 0o755); err != nil {
			t.Fatal(err)
		}
	}
	os.WriteFile(filepath.Join(tag, "hello.txt"), []byte("hello from the load test\n"), 0o644)
	var providers []string
	for i, lifetime := range []string{"session", "session", "call", "call"} {
		providers = append(providers, fmt.Sprintf(`{"id": "n%d", "command": [%q, "-dir", %q], "scope": "global", "read": ["search_notes", "list_notes"], "lifetime": %q, "timeout": 30}`, i, notes, tag, lifetime))
	}
	write := func(name, content string) {
		if err := os.WriteFile(filepath.Join(dir, name), []byte(content), 0o644); err != nil {
			t.Fatal(err)
		}
	}
	write("cfg/projects.json", fmt.Sprintf(`{"projects": [{"name": "p", "root": %q}]}`, ws))
	write("cfg/capabilities.json", `{"providers": [`+strings.Join(providers, ",\n")+`]}`)
	base := append(os.Environ(), "SPEAR_CONFIG_DIR="+filepath.Join(dir, "cfg"), "SPEAR_STATE_DIR="+filepath.Join(dir, "state"), "HOME="+dir)
	operator := func(args ...string) ([]byte, error) {
		cmd := exec.Command(capability, args...)
		cmd.Env = base
		return cmd.CombinedOutput()
	}
	t.Cleanup(func() { operator("sessions", "stop") })

	var (
		mu       sync.Mutex
		warm     []time.Duration // invocations answered by a running session process
		problems []string
		answered atomic.Int64
		results  atomic.Int64
		unavail  atomic.Int64
		peakFDs  atomic.Int64
		peakRSS  atomic.Int64
	)
	fail := func(format string, args ...any) {
		mu.Lock()
		defer mu.Unlock()
		if len(problems) < 20 {
			problems = append(problems, fmt.Sprintf(format, args...))
		}
	}
	// The session processes, watched while the load runs.
	done := make(chan struct{})
	var watched sync.WaitGroup
	watched.Add(1)
	go func() {
		defer watched.Done()
		for {
			for _, pid := range hostPids(filepath.Join(dir, "state")) {
				fds, rss := procFDs(pid), procRSS(pid)
				for old := peakFDs.Load(); int64(fds) > old && !peakFDs.CompareAndSwap(old, int64(fds)); old = peakFDs.Load() {
				}
				for old := peakRSS.Load(); rss > old && !peakRSS.CompareAndSwap(old, rss); old = peakRSS.Load() {
				}
			}
			select {
			case <-done:
				return
			case <-time.After(100 * time.Millisecond):
			}
		}
	}()

	start := time.Now()
	var wg sync.WaitGroup
	per := shape.invocations / shape.sessions
	for s := 0; s < shape.sessions; s++ {
		turn := filepath.Join(dir, fmt.Sprintf("turn-%d.json", s))
		write(filepath.Base(turn), fmt.Sprintf(`{"session": "s-%d", "turn": "t-1", "workspace": %q, "class": "implementation"}`, s, ws))
		env := append(append([]string{}, base...), "SPEAR_TURN_FILE="+turn)
		n := per
		if s < shape.invocations%shape.sessions {
			n++
		}
		wg.Add(1)
		go func(s, n int, env []string) {
			defer wg.Done()
			fresh := true // the next invocation starts the session process
			// The family is an index (20 capabilities): a harness
			// describes what it will call.
			for p := 0; p < 4; p++ {
				cmd := exec.Command(term, "-c", fmt.Sprintf("spear-capability describe n%d/search_notes", p))
				cmd.Env = env
				if out, err := cmd.CombinedOutput(); err != nil {
					fail("session %d: describe n%d: %v\n%s", s, p, err, out)
				}
			}
			for i := 0; i < n; i++ {
				if i%2 == 1 {
					cmd := exec.Command(term, "-c", "echo ordinary $((1+1))")
					cmd.Env = env
					if out, err := cmd.CombinedOutput(); err != nil || string(out) != "ordinary 2\n" {
						fail("session %d: an ordinary command: %v %q", s, err, out)
					}
				}
				if s < shape.stops && i == n/2 {
					if out, err := operator("sessions", "stop", fmt.Sprintf("s-%d", s)); err != nil {
						fail("sessions stop s-%d: %v\n%s", s, err, out)
					}
					fresh = true
				}
				p := i % 4
				cmd := exec.Command(term, "-c", fmt.Sprintf(`spear-capability invoke n%d/search_notes '{"query": "hello"}'`, p))
				cmd.Env = env
				var stdout, stderr bytes.Buffer
				cmd.Stdout, cmd.Stderr = &stdout, &stderr
				t0 := time.Now()
				err := cmd.Run()
				d := time.Since(t0)
				answered.Add(1)
				switch code := exitCode(err); {
				case code == 0 && strings.Contains(stdout.String(), "hello from the load test"):
					results.Add(1)
					if !fresh && p < 2 {
						mu.Lock()
						warm = append(warm, d)
						mu.Unlock()
					}
					fresh = false
				case code == 3 && strings.Contains(stderr.String(), "unavailable"):
					unavail.Add(1)
				default:
					fail("session %d, n%d: exit %d\nstdout %q\nstderr %q", s, p, code, stdout.String(), stderr.String())
				}
			}
		}(s, n, env)
	}
	wg.Wait()
	elapsed := time.Since(start)
	close(done)
	watched.Wait()
	if out, err := operator("sessions", "stop"); err != nil {
		t.Errorf("sessions stop: %v\n%s", err, out)
	}
	for _, p := range problems {
		t.Error(p)
	}
	if got := answered.Load(); got != int64(shape.invocations) {
		t.Errorf("%d invocations answered of %d", got, shape.invocations)
	}

	// No process of any provider is left: every one has the notes
	// directory on its command line.
	var left []string
	for deadline := time.Now().Add(10 * time.Second); ; time.Sleep(100 * time.Millisecond) {
		left = procsWith(tag)
		if len(left) == 0 || time.Now().After(deadline) {
			break
		}
	}
	if len(left) > 0 {
		t.Errorf("left running after the load: %v", left)
	}

	// One end record for every call the trail saw start.
	started, ended := 0, 0
	f, err := os.Open(filepath.Join(dir, "state", "audit.jsonl"))
	if err != nil {
		t.Fatal(err)
	}
	defer f.Close()
	sc := bufio.NewScanner(f)
	sc.Buffer(make([]byte, 1<<20), 16<<20)
	for sc.Scan() {
		var e struct{ Event, Outcome string }
		if json.Unmarshal(sc.Bytes(), &e) != nil || e.Event != "capability_invoked" {
			continue
		}
		if e.Outcome == "started" {
			started++
		} else {
			ended++
		}
	}
	if started != ended || started < int(results.Load()) {
		t.Errorf("the trail has %d calls started and %d ended, for %d results", started, ended, results.Load())
	}
	if fds := peakFDs.Load(); fds > 64 {
		t.Errorf("a session process held %d descriptors", fds)
	}
	if rss := peakRSS.Load(); rss > 256<<20 {
		t.Errorf("a session process grew to %d MiB resident", rss>>20)
	}
	sort.Slice(warm, func(i, j int) bool { return warm[i] < warm[j] })
	pct := func(p float64) time.Duration {
		if len(warm) == 0 {
			return 0
		}
		return warm[min(len(warm)-1, int(p*float64(len(warm))))]
	}
	t.Logf("%d sessions at once, %d invocations (%d results, %d unavailable) and %d ordinary commands in %s; %d sessions stopped midway",
		shape.sessions, shape.invocations, results.Load(), unavail.Load(), shape.invocations/2, elapsed.Round(time.Millisecond), shape.stops)
	t.Logf("warm invocation (spear-term -c, session server): p50 %s, p99 %s over %d; session process peak: %d descriptors, %d MiB resident",
		pct(0.50).Round(100*time.Microsecond), pct(0.99).Round(100*time.Microsecond), len(warm), peakFDs.Load(), peakRSS.Load()>>20)
}

func exitCode(err error) int {
	if err == nil {
		return 0
	}
	if ee, ok := err.(*exec.ExitError); ok {
		return ee.ExitCode()
	}
	return -1
}

// hostPids returns the pids of the session processes of stateDir, from the
// pid files they write.
func hostPids(stateDir string) []int {
	files, _ := filepath.Glob(filepath.Join(stateDir, "sessions", "*", "host.pid"))
	var pids []int
	for _, f := range files {
		data, _ := os.ReadFile(f)
		if fields := strings.Fields(string(data)); len(fields) > 0 {
			if pid, err := strconv.Atoi(fields[0]); err == nil {
				pids = append(pids, pid)
			}
		}
	}
	return pids
}

func procFDs(pid int) int {
	ents, _ := os.ReadDir(fmt.Sprintf("/proc/%d/fd", pid))
	return len(ents)
}

func procRSS(pid int) int64 {
	data, _ := os.ReadFile(fmt.Sprintf("/proc/%d/status", pid))
	for _, line := range strings.Split(string(data), "\n") {
		if rest, ok := strings.CutPrefix(line, "VmRSS:"); ok {
			kb, _ := strconv.ParseInt(strings.TrimSuffix(strings.TrimSpace(rest), " kB"), 10, 64)
			return kb << 10
		}
	}
	return 0
}

// procsWith lists the live processes whose command line holds s.
func procsWith(s string) []string {
	var found []string
	ents, _ := os.ReadDir("/proc")
	for _, e := range ents {
		if _, err := strconv.Atoi(e.Name()); err != nil {
			continue
		}
		stat, _ := os.ReadFile("/proc/" + e.Name() + "/stat")
		if i := bytes.LastIndexByte(stat, ')'); i > 0 && len(stat) > i+2 && (stat[i+2] == 'Z' || stat[i+2] == 'X') {
			continue
		}
		cmdline, _ := os.ReadFile("/proc/" + e.Name() + "/cmdline")
		if bytes.Contains(cmdline, []byte(s)) {
			found = append(found, e.Name()+": "+strings.ReplaceAll(string(cmdline), "\x00", " "))
		}
	}
	return found
}
