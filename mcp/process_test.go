package mcp

import (
	"bufio"
	"os"
	"path/filepath"
	"regexp"
	"strconv"
	"strings"
	"sync"
	"testing"
	"time"

	"spear/internal/procs"
)

// TestStartProcess: a process without a client is the stdio transport on
// its own: lines go in and come out as written, and Close, from several
// goroutines at once, stops the server once and reaps it.
func TestStartProcess(t *testing.T) {
	p, err := StartProcess(fake())
	if err != nil {
		t.Fatal(err)
	}
	if p.Pid() <= 1 || p.State() != "still running" {
		t.Fatalf("pid %d, state %q", p.Pid(), p.State())
	}
	if _, err := p.Write([]byte(`{"jsonrpc":"2.0","id":7,"method":"ping"}` + "\n")); err != nil {
		t.Fatal(err)
	}
	line, err := bufio.NewReader(p).ReadString('\n')
	if err != nil || !strings.Contains(line, `"id":7`) || !strings.Contains(line, `"result":{}`) {
		t.Fatalf("answer %q, %v", line, err)
	}
	var wg sync.WaitGroup
	for i := 0; i < 3; i++ {
		wg.Add(1)
		go func() { defer wg.Done(); p.Close() }()
	}
	wg.Wait()
	select {
	case <-p.Exited():
	case <-time.After(3 * time.Second):
		t.Fatal("not reaped after Close")
	}
	if p.State() == "still running" {
		t.Fatalf("state %q after Close", p.State())
	}
	assertGone(t, p.Pid())
}

// TestStartProcessError: a server that cannot start is a *StartError.
func TestStartProcessError(t *testing.T) {
	_, err := StartProcess(Options{Command: []string{"/nonexistent/server"}})
	if _, ok := err.(*StartError); !ok {
		t.Fatalf("error %T %v, want *StartError", err, err)
	}
}

// TestLookPathSkipsRelative: a command planted in the directory a server
// starts in is never found through an empty or relative PATH entry.
func TestLookPathSkipsRelative(t *testing.T) {
	dir := t.TempDir()
	t.Chdir(dir)
	if err := os.WriteFile(filepath.Join(dir, "planted"), []byte("#!/bin/sh\n"), 0o755); err != nil {
		t.Fatal(err)
	}
	os.Mkdir(filepath.Join(dir, "bin"), 0o755)
	os.WriteFile(filepath.Join(dir, "bin", "planted"), []byte("#!/bin/sh\n"), 0o755)
	for _, path := range []string{":/usr/bin", "/usr/bin::/bin", ".:/usr/bin", "bin:/usr/bin", ""} {
		if got, err := lookPath("planted", path); err == nil {
			t.Errorf("PATH=%q found %q", path, got)
		}
	}
	abs := filepath.Join(dir, "bin")
	if got, err := lookPath("planted", ":"+abs); err != nil || got != filepath.Join(abs, "planted") {
		t.Errorf("an absolute entry: %q %v", got, err)
	}
}

// TestCloseStopsDetachedGrandchildren: Close stops the grandchild a
// server started however it left the server's process group: a group of
// its own (setpgid), a session of its own (setsid), or orphaned in a
// session of its own by a parent that exited (daemon); with Client.Close
// and Process.Close alike, whether the server heeds stdin or not.
func TestCloseStopsDetachedGrandchildren(t *testing.T) {
	for _, detach := range []string{"setpgid", "setsid", "daemon"} {
		for _, behave := range []string{"grandchild", "ignore-term,grandchild"} {
			t.Run(detach+"/"+behave, func(t *testing.T) {
				t.Parallel()
				opts := fake("-behave", behave, "-detach", detach)
				opts.CloseGrace = 100 * time.Millisecond
				p, err := StartProcess(opts)
				if err != nil {
					t.Fatal(err)
				}
				defer p.Close()
				grandchild := reportedGrandchild(t, p.Stderr)
				if !procs.Alive(grandchild) {
					t.Fatalf("the grandchild %d is not running before Close", grandchild)
				}
				p.Close()
				assertGone(t, p.Pid())
				assertGone(t, grandchild)
			})
		}
	}
	c := connect(t, fake("-behave", "grandchild", "-detach", "daemon"))
	grandchild := reportedGrandchild(t, c.Stderr)
	c.Close()
	assertGone(t, c.Pid())
	assertGone(t, grandchild)
}

// reportedGrandchild waits for the fake server to say its grandchild's pid
// on stderr.
func reportedGrandchild(t *testing.T, stderr func() string) int {
	t.Helper()
	re := regexp.MustCompile(`grandchild (\d+)`)
	for deadline := time.Now().Add(5 * time.Second); time.Now().Before(deadline); time.Sleep(10 * time.Millisecond) {
		if m := re.FindStringSubmatch(stderr()); m != nil {
			pid, _ := strconv.Atoi(m[1])
			return pid
		}
	}
	t.Fatal("the fake server did not report its grandchild")
	return 0
}

// TestProgramOnServerPath: a bare command is looked up in the PATH the
// server is given: Env's when Env names PATH, else the one Getenv
// supplies; a path is taken as it is.
func TestProgramOnServerPath(t *testing.T) {
	dir := t.TempDir()
	for _, d := range []string{"env", "getenv"} {
		os.Mkdir(filepath.Join(dir, d), 0o755)
		if err := os.WriteFile(filepath.Join(dir, d, "server"), []byte("#!/bin/sh\n"), 0o755); err != nil {
			t.Fatal(err)
		}
	}
	getenv := func(k string) string {
		if k == "PATH" {
			return filepath.Join(dir, "getenv")
		}
		return ""
	}
	for _, tc := range []struct {
		command string
		env     map[string]string
		want    string // "" for not found
	}{
		{"server", nil, filepath.Join(dir, "getenv", "server")},
		{"server", map[string]string{"TOKEN": "x"}, filepath.Join(dir, "getenv", "server")},
		{"server", map[string]string{"PATH": filepath.Join(dir, "env")}, filepath.Join(dir, "env", "server")},
		{"server", map[string]string{"PATH": "/nonexistent"}, ""},
		{"server", map[string]string{"PATH": ""}, ""},
		{"./server", map[string]string{"PATH": filepath.Join(dir, "env")}, "./server"},
	} {
		got, err := Options{Command: []string{tc.command}, Env: tc.env, Getenv: getenv}.Program()
		if got != tc.want || (err == nil) != (tc.want != "") {
			t.Errorf("%s with env %v: %q, %v; want %q", tc.command, tc.env, got, err, tc.want)
		}
	}
}
