package warm

import (
	"bufio"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"net"
	"os"
	"path/filepath"
	"regexp"
	"strings"
	"sync"
	"syscall"
	"testing"
	"time"

	"spear/internal/fakemcp"
	"spear/internal/procs"
	"spear/mcp"
)

// The test binary plays the fake server ("fake-mcp" as its first argument)
// and the host (HostArg).
func TestMain(m *testing.M) {
	if len(os.Args) > 1 {
		switch os.Args[1] {
		case "fake-mcp":
			os.Exit(fakemcp.Main(os.Args[2:]))
		case HostArg:
			os.Exit(HostMain(os.Args[2:], nil))
		}
	}
	os.Exit(m.Run())
}

// fakeEntry is an entry that starts the fake server with args.
func fakeEntry(args ...string) Entry {
	return Entry{
		Command: append([]string{os.Args[0], "fake-mcp", "-whoami"}, args...),
		// Under the race detector, a process waits a second before it
		// exits; the tests' servers need not.
		Env: map[string]string{"GORACE": "atexit_sleep_ms=0"},
		Dir: "/", Path: os.Getenv("PATH"), Home: os.Getenv("HOME"),
		Timeout: 5, Lifetime: LifetimeSession, Scope: "global", Tasks: []string{"implementation"},
		Read: []string{"whoami"}, Write: "refuse", Enabled: true,
	}
}

// testHost serves a host in a directory of its own and returns a Session
// that reaches it (and starts none) and the audit trail's path.
func testHost(t *testing.T, h *Host) (*Session, string) {
	t.Helper()
	dir := t.TempDir()
	audit := filepath.Join(dir, "audit.jsonl")
	if h.Session == "" {
		h.Session = "s-1"
	}
	if h.Idle == 0 {
		h.Idle = time.Minute
	}
	h.AuditFile = audit
	ln, keep, err := listen(dir)
	if err != nil {
		t.Fatal(err)
	}
	served := make(chan struct{})
	go func() {
		h.Serve(ln)
		if keep != nil {
			keep.Close()
		}
		close(served)
	}()
	t.Cleanup(func() {
		h.Shutdown(WhySessionStopped)
		<-served
	})
	return &Session{Name: h.Session, Dir: dir, DialTimeout: time.Second}, audit
}

// open opens the provider's server and initializes a client over it.
func open(t *testing.T, s *Session, provider string, e Entry, turn string) (*mcp.Client, *Reply) {
	t.Helper()
	conn, rep, err := s.Open(context.Background(), provider, e, turn)
	if err != nil {
		t.Fatalf("open %s: %v", provider, err)
	}
	c, err := mcp.ConnectConn(context.Background(), conn, mcp.Options{Timeout: 5 * time.Second})
	if err != nil {
		t.Fatalf("initialize %s: %v", provider, err)
	}
	return c, rep
}

var whoamiRE = regexp.MustCompile(`^pid (\d+) calls (\d+)$`)

// whoami calls the fake server's whoami tool and returns its pid and count.
func whoami(t *testing.T, c *mcp.Client) (pid, calls int) {
	t.Helper()
	res, err := c.CallTool(context.Background(), "whoami", nil)
	if err != nil {
		t.Fatalf("whoami: %v", err)
	}
	m := whoamiRE.FindStringSubmatch(res.Content[0].Text)
	if m == nil {
		t.Fatalf("whoami answered %q", res.Content[0].Text)
	}
	fmt.Sscan(m[1], &pid)
	fmt.Sscan(m[2], &calls)
	return pid, calls
}

// events returns the audit trail's lines with event.
func events(t *testing.T, audit, event string) []map[string]any {
	t.Helper()
	data, _ := os.ReadFile(audit)
	var out []map[string]any
	for _, line := range strings.Split(string(data), "\n") {
		var m map[string]any
		if json.Unmarshal([]byte(line), &m) == nil && m["event"] == event {
			out = append(out, m)
		}
	}
	return out
}

// waitFor polls cond for up to five seconds.
func waitFor(t *testing.T, what string, cond func() bool) {
	t.Helper()
	for deadline := time.Now().Add(5 * time.Second); !cond(); {
		if time.Now().After(deadline) {
			t.Fatalf("waited 5 s for %s", what)
		}
		time.Sleep(10 * time.Millisecond)
	}
}

// TestShared: two opens of one entry, in two turns, reach one server, which
// answers the second initialize from its first; the trail says it started
// once, and a shutdown stops it with why.
func TestShared(t *testing.T) {
	s, audit := testHost(t, &Host{})
	e := fakeEntry()
	c1, r1 := open(t, s, "fake", e, "t-1")
	pid1, calls1 := whoami(t, c1)
	c1.Close()
	c2, r2 := open(t, s, "fake", e, "t-2")
	pid2, calls2 := whoami(t, c2)
	c2.Close()
	if !r1.Started || r2.Started || r1.Pid != r2.Pid || pid1 != pid2 || pid1 != r1.Pid {
		t.Fatalf("replies %+v %+v, pids %d %d", r1, r2, pid1, pid2)
	}
	if calls1 != 1 || calls2 != 2 {
		t.Fatalf("calls %d then %d, want 1 then 2", calls1, calls2)
	}
	if got := c2.InitializeResult(); got == nil || got.ServerInfo.Name != "fake-mcp" {
		t.Fatalf("initialize from the cache: %+v", got)
	}
	started := events(t, audit, "provider_started")
	if len(started) != 1 || started[0]["lifetime"] != "session" || started[0]["pid"] != float64(pid1) || started[0]["turn"] != "t-1" {
		t.Fatalf("provider_started: %v", started)
	}
	st, err := ask(context.Background(), s.Dir, OpStatus, time.Second)
	if err != nil || len(st.Servers) != 1 || st.Servers[0].Calls != 2 || st.Servers[0].Turn != "t-2" || st.Session != "s-1" {
		t.Fatalf("status %+v, %v", st, err)
	}
	st, err = ask(context.Background(), s.Dir, OpShutdown, 10*time.Second)
	if err != nil || len(st.Servers) != 1 {
		t.Fatalf("shutdown %+v, %v", st, err)
	}
	if procs.Alive(pid1) {
		t.Fatalf("server %d outlived the shutdown", pid1)
	}
	stopped := events(t, audit, "provider_stopped")
	if len(stopped) != 1 || stopped[0]["why"] != WhySessionStopped {
		t.Fatalf("provider_stopped: %v", stopped)
	}
	if _, err := os.Stat(filepath.Join(s.Dir, SocketName)); !os.IsNotExist(err) {
		t.Fatalf("the socket is left behind: %v", err)
	}
}

// TestRegistryChanged: an entry that differs in any key gets a new server;
// the old one stops once its caller is done, recorded so.
func TestRegistryChanged(t *testing.T) {
	s, audit := testHost(t, &Host{})
	e := fakeEntry()
	c1, r1 := open(t, s, "fake", e, "t-1")
	changed := e
	changed.Read = []string{"whoami", "echo"}
	c2, r2 := open(t, s, "fake", changed, "t-1")
	if !r2.Started || r2.Pid == r1.Pid {
		t.Fatalf("a changed entry reached the old server: %+v %+v", r1, r2)
	}
	// The old server still answers its caller, then stops.
	if pid, _ := whoami(t, c1); pid != r1.Pid {
		t.Fatalf("old caller reached %d", pid)
	}
	c1.Close()
	waitFor(t, "the old server to stop", func() bool { return !procs.Alive(r1.Pid) })
	waitFor(t, "provider_stopped", func() bool { return len(events(t, audit, "provider_stopped")) == 1 })
	if ev := events(t, audit, "provider_stopped")[0]; ev["why"] != WhyRegistryChanged || ev["pid"] != float64(r1.Pid) {
		t.Fatalf("provider_stopped %v", ev)
	}
	if pid, _ := whoami(t, c2); pid != r2.Pid {
		t.Fatalf("new caller reached %d", pid)
	}
	c2.Close()
}

// TestCallLifetime: a call server serves one connection and stops after it.
func TestCallLifetime(t *testing.T) {
	s, audit := testHost(t, &Host{})
	e := fakeEntry()
	e.Lifetime = LifetimeCall
	var pids []int
	for i := 0; i < 2; i++ {
		c, r := open(t, s, "fake", e, "t-1")
		if pid, calls := whoami(t, c); pid != r.Pid || calls != 1 || !r.Started {
			t.Fatalf("call %d: pid %d calls %d, reply %+v", i, pid, calls, r)
		}
		c.Close()
		waitFor(t, "the call server to stop", func() bool { return !procs.Alive(r.Pid) })
		pids = append(pids, r.Pid)
	}
	if pids[0] == pids[1] {
		t.Fatalf("one server for two calls: %v", pids)
	}
	waitFor(t, "two provider_stopped", func() bool { return len(events(t, audit, "provider_stopped")) == 2 })
	for _, ev := range events(t, audit, "provider_stopped") {
		if ev["why"] != WhyCallDone || ev["lifetime"] != "call" {
			t.Fatalf("provider_stopped %v", ev)
		}
	}
}

// TestIdle: a server with nothing to do for Idle is stopped, and the next
// open starts another.
func TestIdle(t *testing.T) {
	s, audit := testHost(t, &Host{Idle: 300 * time.Millisecond})
	c, r := open(t, s, "fake", fakeEntry(), "t-1")
	c.Close()
	waitFor(t, "the idle server to stop", func() bool { return !procs.Alive(r.Pid) })
	waitFor(t, "provider_stopped", func() bool { return len(events(t, audit, "provider_stopped")) == 1 })
	if ev := events(t, audit, "provider_stopped")[0]; ev["why"] != WhyIdle {
		t.Fatalf("provider_stopped %v", ev)
	}
	c, r2 := open(t, s, "fake", fakeEntry(), "t-1")
	c.Close()
	if !r2.Started || r2.Pid == r.Pid {
		t.Fatalf("after idling: %+v", r2)
	}
}

// TestKilled: a server killed between two calls leaves its provider
// unavailable for the rest of that turn; the next turn starts another.
func TestKilled(t *testing.T) {
	s, audit := testHost(t, &Host{})
	c, r := open(t, s, "fake", fakeEntry(), "t-1")
	c.Close()
	syscall.Kill(r.Pid, syscall.SIGKILL)
	waitFor(t, "provider_stopped", func() bool { return len(events(t, audit, "provider_stopped")) == 1 })
	if ev := events(t, audit, "provider_stopped")[0]; ev["why"] != WhyFailed || !strings.Contains(fmt.Sprint(ev["detail"]), "killed") {
		t.Fatalf("provider_stopped %v", ev)
	}
	_, _, err := s.Open(context.Background(), "fake", fakeEntry(), "t-1")
	var fe *FailedError
	if !errors.As(err, &fe) {
		t.Fatalf("open in the same turn: %v, want *FailedError", err)
	}
	c, r2 := open(t, s, "fake", fakeEntry(), "t-2")
	c.Close()
	if !r2.Started || r2.Pid == r.Pid {
		t.Fatalf("next turn: %+v", r2)
	}
}

// TestStopFailed: a gateway's stop (after a timeout, say) stops the
// server it names and keeps the provider out of the rest of the turn; a
// stop that names another pid leaves the server alone.
func TestStopFailed(t *testing.T) {
	s, audit := testHost(t, &Host{})
	c, r := open(t, s, "fake", fakeEntry(), "t-1")
	c.Close()
	if err := s.Stop(context.Background(), "fake", r.Pid+100000, "t-0", WhyFailed, "x"); err != nil {
		t.Fatal(err)
	}
	time.Sleep(100 * time.Millisecond)
	if !procs.Alive(r.Pid) {
		t.Fatal("a stop for another pid stopped the server")
	}
	if err := s.Stop(context.Background(), "fake", r.Pid, "t-1", WhyFailed, "did not answer tools/call within 1 s"); err != nil {
		t.Fatal(err)
	}
	waitFor(t, "the server to stop", func() bool { return !procs.Alive(r.Pid) })
	if _, _, err := s.Open(context.Background(), "fake", fakeEntry(), "t-1"); !errors.As(err, new(*FailedError)) {
		t.Fatalf("open after stop: %v", err)
	}
	waitFor(t, "provider_stopped", func() bool { return len(events(t, audit, "provider_stopped")) == 1 })
	if ev := events(t, audit, "provider_stopped")[0]; ev["why"] != WhyFailed || ev["detail"] != "did not answer tools/call within 1 s" {
		t.Fatalf("provider_stopped %v", ev)
	}
}

// TestConcurrent: sixteen callers at once share one server; each answer
// reaches the caller that asked, even when the server first answers under
// ids no one asked with.
func TestConcurrent(t *testing.T) {
	s, _ := testHost(t, &Host{})
	e := fakeEntry("-call-delay", "50ms", "-behave", "wrong-id")
	var wg sync.WaitGroup
	pids := make([]int, 16)
	errs := make(chan error, 16)
	for i := range pids {
		wg.Add(1)
		go func(i int) {
			defer wg.Done()
			conn, rep, err := s.Open(context.Background(), "fake", e, "t-1")
			if err != nil {
				errs <- err
				return
			}
			c, err := mcp.ConnectConn(context.Background(), conn, mcp.Options{Timeout: 5 * time.Second})
			if err != nil {
				errs <- err
				return
			}
			defer c.Close()
			text := fmt.Sprintf("caller %d", i)
			res, err := c.CallTool(context.Background(), "echo", json.RawMessage(fmt.Sprintf(`{"text":%q}`, text)))
			if err != nil {
				errs <- err
				return
			}
			if got := res.Content[0].Text; !strings.Contains(got, text+`"`) {
				errs <- fmt.Errorf("caller %d got %q", i, got)
			}
			pids[i] = rep.Pid
		}(i)
	}
	wg.Wait()
	close(errs)
	for err := range errs {
		t.Error(err)
	}
	for _, pid := range pids {
		if pid != pids[0] {
			t.Fatalf("callers reached several servers: %v", pids)
		}
	}
	st, _ := ask(context.Background(), s.Dir, OpStatus, time.Second)
	if len(st.Servers) != 1 || st.Servers[0].Calls != 16 {
		t.Fatalf("status %+v", st)
	}
}

// TestCancelled: a caller's notifications/cancelled reaches the server
// under the host's id for the request, and the caller's timeout leaves
// the server running for the gateway to stop.
func TestCancelled(t *testing.T) {
	s, _ := testHost(t, &Host{})
	record := filepath.Join(t.TempDir(), "record.jsonl")
	c, _ := open(t, s, "fake", fakeEntry("-record", record), "t-1")
	c.Close()
	conn, _, err := s.Open(context.Background(), "fake", fakeEntry("-record", record), "t-1")
	if err != nil {
		t.Fatal(err)
	}
	c, err = mcp.ConnectConn(context.Background(), conn, mcp.Options{Timeout: 200 * time.Millisecond})
	if err != nil {
		t.Fatal(err)
	}
	_, err = c.CallTool(context.Background(), "sleep", json.RawMessage(`{"seconds": 30}`))
	if !errors.As(err, new(*mcp.TimeoutError)) {
		t.Fatalf("call: %v", err)
	}
	waitFor(t, "the cancellation", func() bool {
		data, _ := os.ReadFile(record)
		return strings.Contains(string(data), "notifications/cancelled")
	})
	data, _ := os.ReadFile(record)
	var sleepID, cancelledID string
	for _, line := range strings.Split(string(data), "\n") {
		var m struct {
			ID     json.RawMessage `json:"id"`
			Method string          `json:"method"`
			Params struct {
				Name      string          `json:"name"`
				RequestID json.RawMessage `json:"requestId"`
			} `json:"params"`
		}
		json.Unmarshal([]byte(line), &m)
		switch {
		case m.Method == "tools/call" && m.Params.Name == "sleep":
			sleepID = string(m.ID)
		case m.Method == "notifications/cancelled":
			cancelledID = string(m.Params.RequestID)
		}
		if m.Method == "initialize" && string(m.ID) != "0" {
			t.Errorf("the server was initialized twice or by a caller: %s", line)
		}
	}
	if sleepID == "" || sleepID != cancelledID {
		t.Fatalf("the call went as %s and the cancellation named %s:\n%s", sleepID, cancelledID, data)
	}
}

// TestStartFailures: a server that cannot start, or that fails initialize,
// is told to the opener as the error a client of its own would meet.
func TestStartFailures(t *testing.T) {
	s, audit := testHost(t, &Host{})
	bad := fakeEntry()
	bad.Command = []string{"/nonexistent/server"}
	if _, _, err := s.Open(context.Background(), "bad", bad, "t-1"); !errors.As(err, new(*mcp.StartError)) {
		t.Errorf("no such server: %v", err)
	}
	if _, _, err := s.Open(context.Background(), "err", fakeEntry("-behave", "error-init"), "t-1"); !errors.As(err, new(*mcp.RPCError)) {
		t.Errorf("error-init: %v", err)
	}
	if _, _, err := s.Open(context.Background(), "exit", fakeEntry("-exit-at", "initialize"), "t-1"); !errors.As(err, new(*mcp.ExitError)) {
		t.Errorf("exit-at initialize: %v", err)
	}
	if _, _, err := s.Open(context.Background(), "garbage", fakeEntry("-behave", "garbage"), "t-1"); !errors.As(err, new(*mcp.ProtocolError)) || !strings.Contains(err.Error(), "not JSON-RPC") {
		t.Errorf("garbage: %v", err)
	}
	if _, _, err := s.Open(context.Background(), "loud", fakeEntry("-banner", "101"), "t-1"); !errors.As(err, new(*mcp.ProtocolError)) || !strings.Contains(err.Error(), "server wrote 101 lines that are not JSON on its stdout") {
		t.Errorf("101 banner lines: %v", err)
	}
	slow := fakeEntry("-hang-at", "initialize")
	slow.Timeout = 0.3
	start := time.Now()
	if _, _, err := s.Open(context.Background(), "slow", slow, "t-1"); !errors.As(err, new(*mcp.TimeoutError)) || time.Since(start) > 3*time.Second {
		t.Errorf("hang-at initialize: %v after %s", err, time.Since(start))
	}
	// A failed start is not a failure of the turn: the next open tries again.
	if _, _, err := s.Open(context.Background(), "bad", bad, "t-1"); !errors.As(err, new(*mcp.StartError)) {
		t.Errorf("no such server, again: %v", err)
	}
	if ev := events(t, audit, "provider_started"); len(ev) != 0 {
		t.Errorf("servers that never started recorded as started: %v", ev)
	}
	waitFor(t, "nothing left running", func() bool {
		st, _ := ask(context.Background(), s.Dir, OpStatus, time.Second)
		return st != nil && len(st.Servers) == 0
	})
}

// TestSkippedLines: a server that writes lines that are not JSON on its
// stdout works; provider_started records those it wrote while starting,
// and provider_stopped the total when it wrote more after.
func TestSkippedLines(t *testing.T) {
	s, audit := testHost(t, &Host{})
	quiet, _ := open(t, s, "quiet", fakeEntry("-banner", "1"), "t-1")
	whoami(t, quiet)
	quiet.Close()
	loud, r := open(t, s, "loud", fakeEntry("-banner", "2", "-behave", "log-calls"), "t-1")
	for i := 0; i < 3; i++ {
		whoami(t, loud)
	}
	loud.Close()
	started := events(t, audit, "provider_started")
	first := "No X display available. Running in headless mode. (1)"
	if len(started) != 2 || started[0]["skipped_lines"] != 1.0 || started[0]["skipped_bytes"] != float64(len(first)+1) || started[0]["skipped_first"] != first ||
		started[1]["skipped_lines"] != 2.0 || started[1]["skipped_first"] != first {
		t.Fatalf("provider_started: %v", started)
	}
	if _, err := ask(context.Background(), s.Dir, OpShutdown, 10*time.Second); err != nil {
		t.Fatal(err)
	}
	stopped := events(t, audit, "provider_stopped")
	if len(stopped) != 2 {
		t.Fatalf("provider_stopped: %v", stopped)
	}
	for _, ev := range stopped {
		switch {
		case ev["provider"] == "quiet" && ev["skipped_lines"] != nil:
			t.Errorf("provider_stopped repeats what provider_started said: %v", ev)
		case ev["provider"] == "loud" && (ev["skipped_lines"] != 5.0 || ev["skipped_first"] != first || ev["pid"] != float64(r.Pid)):
			t.Errorf("provider_stopped: %v", ev)
		}
	}
}

// TestRefusedPeer: a peer the host does not serve is told so, and the
// client may start the server itself.
func TestRefusedPeer(t *testing.T) {
	s, _ := testHost(t, &Host{Peer: func(*net.UnixConn) error { return errors.New("not you") }})
	_, _, err := s.Open(context.Background(), "fake", fakeEntry(), "t-1")
	var ue *UnreachableError
	if !errors.As(err, &ue) || !strings.Contains(err.Error(), "not you") {
		t.Fatalf("refused peer: %v", err)
	}
}

// TestSamePeer: this process is a peer its own host serves.
func TestSamePeer(t *testing.T) {
	dir := t.TempDir()
	ln, _, err := listen(dir)
	if err != nil {
		t.Fatal(err)
	}
	defer ln.Close()
	go func() {
		c, err := net.Dial("unix", filepath.Join(dir, SocketName))
		if err == nil {
			defer c.Close()
			time.Sleep(100 * time.Millisecond)
		}
	}()
	conn, err := ln.AcceptUnix()
	if err != nil {
		t.Fatal(err)
	}
	defer conn.Close()
	if err := SamePeer(conn); err != nil {
		t.Fatalf("SamePeer refused this process: %v", err)
	}
}

// TestHungHost: a host that takes the connection and never replies holds
// the client no longer than the provider's timeout and a second.
func TestHungHost(t *testing.T) {
	dir := t.TempDir()
	ln, _, err := listen(dir)
	if err != nil {
		t.Fatal(err)
	}
	defer ln.Close()
	go func() {
		for {
			c, err := ln.Accept()
			if err != nil {
				return
			}
			defer c.Close()
		}
	}()
	e := fakeEntry()
	e.Timeout = 0.5
	start := time.Now()
	_, _, err = (&Session{Dir: dir}).Open(context.Background(), "fake", e, "t-1")
	if !errors.As(err, new(*mcp.TimeoutError)) || time.Since(start) > 3*time.Second {
		t.Fatalf("hung host: %v after %s", err, time.Since(start))
	}
}

// TestNoHost: with no host and nothing that can start one, Open says the
// host is unreachable, quickly.
func TestNoHost(t *testing.T) {
	dir := t.TempDir()
	start := time.Now()
	_, _, err := (&Session{Dir: dir, Launcher: &Launcher{Path: "/bin/false", Argv0: "false"}}).Open(context.Background(), "fake", fakeEntry(), "t-1")
	if !errors.As(err, new(*UnreachableError)) || time.Since(start) > 2*time.Second {
		t.Fatalf("no host: %v after %s", err, time.Since(start))
	}
	start = time.Now()
	_, _, err = (&Session{Dir: dir, DialTimeout: 200 * time.Millisecond}).Open(context.Background(), "fake", fakeEntry(), "t-1")
	if !errors.As(err, new(*UnreachableError)) || time.Since(start) > 2*time.Second {
		t.Fatalf("no launcher: %v after %s", err, time.Since(start))
	}
}

// TestLaunched: a Launcher starts one host however many clients race to
// reach it; the host runs detached, holds the lock, and leaves neither a
// process nor a socket once stopped.
func TestLaunched(t *testing.T) {
	dir := filepath.Join(t.TempDir(), "sessions", "s-9")
	audit := filepath.Join(t.TempDir(), "audit.jsonl")
	exe, _ := os.Executable()
	sess := &Session{Name: "s-9", Dir: dir, AuditFile: audit, Idle: time.Minute, Launcher: &Launcher{Path: exe, Argv0: "warm.test"}}
	// The host is detached: whatever the test's end, it is stopped with
	// it, never left to idle out after go test.
	t.Cleanup(func() { StopSessions(context.Background(), filepath.Dir(filepath.Dir(dir)), "") })
	// A descriptor this process leaves open across exec, as a harness's
	// might be: the host must not keep it.
	var leak [2]int
	if err := syscall.Pipe(leak[:]); err != nil {
		t.Fatal(err)
	}
	defer syscall.Close(leak[0])
	defer syscall.Close(leak[1])
	var wg sync.WaitGroup
	pids := make([]int, 6)
	for i := range pids {
		wg.Add(1)
		go func(i int) {
			defer wg.Done()
			conn, rep, err := sess.Open(context.Background(), "fake", fakeEntry(), "t-1")
			if err != nil {
				t.Error(err)
				return
			}
			conn.Close()
			pids[i] = rep.Pid
		}(i)
	}
	wg.Wait()
	for _, p := range pids {
		if p != pids[0] {
			t.Fatalf("several servers: %v", pids)
		}
	}
	all, _ := List(context.Background(), filepath.Dir(filepath.Dir(dir)))
	if len(all) != 1 || all[0].Session != "s-9" || len(all[0].Servers) != 1 {
		t.Fatalf("list %+v", all)
	}
	host := all[0].Pid
	if sid := sessionOf(host); sid != host {
		t.Errorf("the host is not in a session of its own: sid %d", sid)
	}
	lock, _ := os.OpenFile(filepath.Join(dir, LockName), os.O_RDWR, 0)
	if err := syscall.Flock(int(lock.Fd()), syscall.LOCK_EX|syscall.LOCK_NB); err == nil {
		t.Error("the host does not hold the session's lock")
	}
	lock.Close()
	// Nothing of its starter's: its standard files are /dev/null (stderr
	// its log), and it
	// shares no pipe, socket or terminal with this process.
	ours := map[string]bool{}
	for _, fd := range openFiles(t, os.Getpid()) {
		ours[fd] = true
	}
	for i, target := range openFiles(t, host) {
		shared := ours[target] && (strings.HasPrefix(target, "pipe:") || strings.HasPrefix(target, "socket:") || strings.HasPrefix(target, "/dev/pts"))
		// Its stderr is its log, in the session's directory.
		if i == 2 && target == filepath.Join(dir, LogName) {
			continue
		}
		if i <= 2 && target != "/dev/null" || shared {
			t.Errorf("the host holds %s", target)
		}
	}
	stopped, err := StopSessions(context.Background(), filepath.Dir(filepath.Dir(dir)), "s-9")
	if err != nil || len(stopped) != 1 || len(stopped[0].Servers) != 1 {
		t.Fatalf("stop %+v, %v", stopped, err)
	}
	if procs.Alive(host) || procs.Alive(pids[0]) {
		t.Fatalf("left running: host %v, server %v", procs.Alive(host), procs.Alive(pids[0]))
	}
	if _, err := os.Stat(filepath.Join(dir, SocketName)); !os.IsNotExist(err) {
		t.Fatalf("socket left: %v", err)
	}
}

// TestLinger: a host with no server and no connection exits after Linger.
func TestLinger(t *testing.T) {
	dir := t.TempDir()
	ln, _, err := listen(dir)
	if err != nil {
		t.Fatal(err)
	}
	h := &Host{Session: "s", Idle: time.Minute, Linger: 200 * time.Millisecond}
	done := make(chan struct{})
	go func() { h.Serve(ln); close(done) }()
	select {
	case <-done:
	case <-time.After(5 * time.Second):
		t.Fatal("the host did not exit")
	}
}

// TestLingerWaitsForStop: a host that lingers out while a server that
// idled out is still stopping (one that ignores SIGTERM stops slowly)
// exits only once that server is gone and its stop recorded.
func TestLingerWaitsForStop(t *testing.T) {
	dir := t.TempDir()
	auditFile := filepath.Join(dir, "audit.jsonl")
	ln, _, err := listen(dir)
	if err != nil {
		t.Fatal(err)
	}
	h := &Host{Session: "s-1", AuditFile: auditFile, Idle: 200 * time.Millisecond, Linger: 200 * time.Millisecond}
	done := make(chan struct{})
	go func() { h.Serve(ln); close(done) }()
	c, r := open(t, &Session{Name: h.Session, Dir: dir, DialTimeout: time.Second}, "fake", fakeEntry("-behave", "ignore-term"), "t-1")
	c.Close()
	select {
	case <-done:
	case <-time.After(30 * time.Second):
		t.Fatal("the host did not exit")
	}
	if procs.Alive(r.Pid) {
		t.Fatalf("the host exited with its server %d still running", r.Pid)
	}
	ev := events(t, auditFile, "provider_stopped")
	if len(ev) != 1 || ev[0]["why"] != WhyIdle {
		t.Fatalf("the host exited with provider_stopped %v", ev)
	}
}

// TestLongPath: a session directory too deep for a socket address is
// still served and reached.
func TestLongPath(t *testing.T) {
	dir := filepath.Join(t.TempDir(), strings.Repeat("d", 60), strings.Repeat("e", 60))
	if err := os.MkdirAll(dir, 0o700); err != nil {
		t.Fatal(err)
	}
	h := &Host{Session: "s", Idle: time.Minute}
	ln, keep, err := listen(dir)
	if err != nil {
		t.Fatal(err)
	}
	go func() { h.Serve(ln); keep.Close() }()
	defer h.Shutdown(WhySessionStopped)
	if _, err := os.Stat(filepath.Join(dir, SocketName)); err != nil {
		t.Fatal(err)
	}
	if _, err := ask(context.Background(), dir, OpStatus, time.Second); err != nil {
		t.Fatal(err)
	}
}

// TestBadRequests: a request that does not decode gets a reply that says
// so, and the connection ends; nothing hangs.
func TestBadRequests(t *testing.T) {
	s, _ := testHost(t, &Host{})
	for _, line := range []string{"garbage\n", `{"v":2,"op":"status"}` + "\n", `{"v":1,"op":"open"}` + "\n", strings.Repeat("x", 10) + "\n"} {
		conn, err := net.Dial("unix", filepath.Join(s.Dir, SocketName))
		if err != nil {
			t.Fatal(err)
		}
		conn.SetDeadline(time.Now().Add(5 * time.Second))
		conn.Write([]byte(line))
		got, _ := bufio.NewReader(conn).ReadString('\n')
		conn.Close()
		rep, err := DecodeReply([]byte(got))
		if err != nil || rep.OK || (rep.Error.Kind != KindBad && rep.Error.Kind != KindVersion) {
			t.Errorf("%q: reply %q (%v)", line, got, err)
		}
	}
}

// sessionOf reads pid's session id from /proc.
func sessionOf(pid int) int {
	data, _ := os.ReadFile(fmt.Sprintf("/proc/%d/stat", pid))
	s := string(data)
	fields := strings.Fields(s[strings.LastIndexByte(s, ')')+1:])
	if len(fields) < 4 {
		return -1
	}
	var sid int
	fmt.Sscan(fields[3], &sid)
	return sid
}

// openFiles returns what pid's descriptors refer to, by number.
func openFiles(t *testing.T, pid int) map[int]string {
	t.Helper()
	out := map[int]string{}
	fds, err := os.ReadDir(fmt.Sprintf("/proc/%d/fd", pid))
	if err != nil && os.Geteuid() != 0 {
		t.Skipf("the host is not dumpable: reading its descriptors needs root (%v)", err)
	}
	if err != nil {
		t.Fatal(err)
	}
	for _, fd := range fds {
		n := 0
		fmt.Sscan(fd.Name(), &n)
		out[n], _ = os.Readlink(fmt.Sprintf("/proc/%d/fd/%s", pid, fd.Name()))
	}
	return out
}

// TestHostPid: the pid file names the host only while that very process
// runs: a pid file whose start time is not the process's (a pid reused)
// names none, and a missing or garbled one names none.
func TestHostPid(t *testing.T) {
	dir := t.TempDir()
	if hostPid(dir) != 0 {
		t.Error("no pid file named a host")
	}
	writePidFile(dir)
	if got := hostPid(dir); got != os.Getpid() {
		t.Errorf("hostPid %d, want %d", got, os.Getpid())
	}
	start, err := procs.StartTime(os.Getpid())
	if err != nil {
		t.Fatal(err)
	}
	for _, content := range []string{fmt.Sprintf("%d %d\n", os.Getpid(), start+1), "garbage\n", fmt.Sprintf("%d\n", os.Getpid()), "-1 5\n"} {
		os.WriteFile(filepath.Join(dir, PidName), []byte(content), 0o600)
		if got := hostPid(dir); got != 0 {
			t.Errorf("%q named %d", content, got)
		}
	}
}

// TestSlowSpawn: a server whose process takes longer to start than the
// session's idle time is not taken for idle while it starts: the open
// succeeds, and its one provider_stopped, once it idles out, names its
// real pid. (The idle check once saw a server not yet spawned as idle
// since the year 1, stopped nothing, recorded pid 0, and left the process
// it then spawned running, the turn told it exited during initialize.)
func TestSlowSpawn(t *testing.T) {
	slow := func(o mcp.Options) (*mcp.Process, error) {
		time.Sleep(700 * time.Millisecond)
		return mcp.StartProcess(o)
	}
	s, audit := testHost(t, &Host{Idle: 100 * time.Millisecond, Spawn: slow})
	c, r := open(t, s, "fake", fakeEntry(), "t-1")
	if pid, _ := whoami(t, c); pid != r.Pid {
		t.Fatalf("whoami says pid %d, the open said %d", pid, r.Pid)
	}
	c.Close()
	waitFor(t, "the idle server to stop", func() bool { return !procs.Alive(r.Pid) })
	waitFor(t, "provider_stopped", func() bool { return len(events(t, audit, "provider_stopped")) == 1 })
	ev := events(t, audit, "provider_stopped")[0]
	if ev["why"] != WhyIdle || ev["pid"] != float64(r.Pid) {
		t.Fatalf("provider_stopped %v, want why idle and pid %d", ev, r.Pid)
	}
}

// TestStoppedWhileSpawning: a server stopped while its process is being
// spawned (the session shut down, the registry changed) leaves nothing
// running once the spawn returns, and records nothing: its process never
// answered initialize, so it never started.
func TestStoppedWhileSpawning(t *testing.T) {
	spawning := make(chan struct{})
	pids := make(chan int, 1)
	var first sync.Once
	slow := func(o mcp.Options) (*mcp.Process, error) {
		isFirst := false
		first.Do(func() { isFirst = true; close(spawning) })
		if !isFirst {
			// The client tries again after a closing; later spawns
			// are not slow.
			return mcp.StartProcess(o)
		}
		time.Sleep(700 * time.Millisecond)
		p, err := mcp.StartProcess(o)
		if err == nil {
			pids <- p.Pid()
		}
		return p, err
	}
	h := &Host{Spawn: slow}
	s, audit := testHost(t, h)
	opened := make(chan error, 1)
	go func() {
		conn, _, err := s.Open(context.Background(), "fake", fakeEntry(), "t-1")
		if conn != nil {
			conn.Close()
		}
		opened <- err
	}()
	<-spawning
	// The server is in the host's tables, its process not yet spawned.
	var srv *server
	waitFor(t, "the server in the host's tables", func() bool {
		h.mu.Lock()
		defer h.mu.Unlock()
		srv = h.servers["fake"]
		return srv != nil
	})
	srv.stop(WhyRegistryChanged, "")
	pid := <-pids
	if procs.Alive(pid) {
		t.Fatalf("server %d was left running after a stop during its spawn", pid)
	}
	<-opened // the client may try again, and reach a new server
	if ev := events(t, audit, "provider_stopped"); len(ev) != 0 {
		t.Fatalf("a server that never started was recorded as stopped: %v", ev)
	}
	for _, ev := range events(t, audit, "provider_started") {
		if ev["pid"] == float64(pid) {
			t.Fatalf("a server stopped while it started was recorded as started: %v", ev)
		}
	}
}
