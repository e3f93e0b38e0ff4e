package mcp

import (
	"bufio"
	"strings"
	"sync"
	"testing"
	"time"
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
