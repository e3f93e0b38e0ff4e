package fakemcp

import (
	"bufio"
	"bytes"
	"context"
	"errors"
	"io"
	"strings"
	"testing"
	"time"
)

const (
	initReq   = `{"jsonrpc":"2.0","id":0,"method":"initialize","params":{}}` + "\n"
	listReq   = `{"jsonrpc":"2.0","id":1,"method":"tools/list","params":{}}` + "\n"
	callReq   = `{"jsonrpc":"2.0","id":2,"method":"tools/call","params":{"name":"echo","arguments":{"a":1}}}` + "\n"
	whoamiReq = `{"jsonrpc":"2.0","id":3,"method":"tools/call","params":{"name":"whoami"}}` + "\n"
)

func TestServe(t *testing.T) {
	cases := []struct {
		name   string
		args   []string
		in     string
		status int
		want   []string // substrings of the output, in order
		not    string   // a substring the output must not have
	}{
		{"answers", nil, initReq + listReq, 0,
			[]string{`"protocolVersion":"2025-06-18"`, `"name":"echo"`}, ""},
		{"version", []string{"-version", "2024-11-05"}, initReq, 0, []string{`"protocolVersion":"2024-11-05"`}, ""},
		{"pages", []string{"-tools", "3", "-page", "4"}, listReq, 0, []string{`"nextCursor":"at-4"`}, ""},
		{"hang", []string{"-hang-at", "tools/list"}, initReq + listReq, 0, []string{`"id":0`}, `"id":1`},
		{"exit", []string{"-exit-at", "tools/list"}, initReq + listReq + callReq, 3, []string{`"id":0`}, `"id":2`},
		{"bad cursor", nil, `{"jsonrpc":"2.0","id":1,"method":"tools/list","params":{"cursor":"at-99"}}` + "\n", 0, []string{`"tools":[]`}, ""},
		{"whoami", []string{"-whoami"}, listReq, 0, []string{`"name":"whoami"`}, ""},
		{"no whoami", nil, listReq, 0, []string{`"name":"echo"`}, `whoami`},
		{"unknown behaviour", []string{"-behave", "sulk"}, initReq, 2, nil, `"id"`},
		{"needs a process", []string{"-behave", "ignore-term"}, initReq, 2, nil, `"id"`},
		{"bad flag", []string{"-nope"}, initReq, 2, nil, `"id"`},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			var out bytes.Buffer
			status := Serve(context.Background(), strings.NewReader(tc.in), &out, tc.args)
			if status != tc.status {
				t.Errorf("status %d, want %d", status, tc.status)
			}
			rest := out.String()
			for _, w := range tc.want {
				i := strings.Index(rest, w)
				if i < 0 {
					t.Fatalf("output lacks %s:\n%s", w, out.String())
				}
				rest = rest[i+len(w):]
			}
			if tc.not != "" && strings.Contains(out.String(), tc.not) {
				t.Errorf("output has %s:\n%s", tc.not, out.String())
			}
		})
	}
}

func TestServeContextCutsWaits(t *testing.T) {
	ctx, cancel := context.WithTimeout(context.Background(), 100*time.Millisecond)
	defer cancel()
	start := time.Now()
	Serve(ctx, strings.NewReader(initReq), io.Discard, []string{"-start-delay", "1m"})
	if d := time.Since(start); d > 10*time.Second {
		t.Fatalf("Serve took %s", d)
	}
}

func TestPipe(t *testing.T) {
	conn := Pipe()
	r := bufio.NewReader(conn)
	for _, x := range []struct{ req, want string }{
		{initReq, `"fake-mcp"`},
		{callReq, `echo called with {\"a\":1}`},
	} {
		if _, err := io.WriteString(conn, x.req); err != nil {
			t.Fatal(err)
		}
		if line, err := r.ReadString('\n'); err != nil || !strings.Contains(line, x.want) {
			t.Fatalf("read %q, %v", line, err)
		}
	}
	conn.Close()
}

func TestPipeCloseCutsWaits(t *testing.T) {
	conn := Pipe("-call-delay", "1h")
	// A call that waits an hour does not hold Close up.
	io.WriteString(conn, callReq)
	done := make(chan struct{})
	go func() {
		conn.Close()
		close(done)
	}()
	select {
	case <-done:
	case <-time.After(5 * time.Second):
		t.Fatal("Close did not return")
	}
	if _, err := io.WriteString(conn, initReq); err == nil {
		t.Error("write after Close succeeded")
	}
}

func TestPipeServerEnds(t *testing.T) {
	conn := Pipe("-exit-at", "initialize")
	defer conn.Close()
	io.WriteString(conn, initReq)
	_, err := io.ReadAll(conn)
	if err == nil || !strings.Contains(err.Error(), "status 3") {
		t.Fatalf("read error %v", err)
	}
	if _, err := io.WriteString(conn, initReq); !errors.Is(err, io.ErrClosedPipe) {
		t.Fatalf("write error %v", err)
	}
}

func TestPipePanicsOnWhatServeRefuses(t *testing.T) {
	for _, args := range [][]string{{"-behave", "grandchild"}, {"-behave", "sulk"}, {"-tools-file", "/nonexistent"}} {
		func() {
			defer func() {
				if recover() == nil {
					t.Errorf("Pipe(%q) did not panic", args)
				}
			}()
			Pipe(args...).Close()
		}()
	}
}

// TestPipeWhoamiWrongID: whoami counts the calls the server has received;
// wrong-id sends each answer first under an id no one asked with.
func TestPipeWhoamiWrongID(t *testing.T) {
	conn := Pipe("-whoami", "-behave", "wrong-id")
	defer conn.Close()
	r := bufio.NewReader(conn)
	for i, want := range []string{`"id":1000001`, `calls 1`, `"id":1000002`, `calls 2`} {
		if i%2 == 0 {
			if _, err := io.WriteString(conn, whoamiReq); err != nil {
				t.Fatal(err)
			}
		}
		line, err := r.ReadString('\n')
		if err != nil || !strings.Contains(line, want) {
			t.Fatalf("line %d: %q, %v; want %s", i+1, line, err, want)
		}
	}
}

// TestPipeBanner: -banner writes lines that are not JSON before anything
// is read; log-calls writes one before each answer to tools/call.
func TestPipeBanner(t *testing.T) {
	conn := Pipe("-whoami", "-banner", "2", "-behave", "log-calls")
	defer conn.Close()
	r := bufio.NewReader(conn)
	for i, want := range []string{
		"No X display available. Running in headless mode. (1)\n",
		"No X display available. Running in headless mode. (2)\n",
		"calling whoami (1)\n",
		`calls 1`,
	} {
		if i == 2 {
			// io.Pipe holds nothing: the banner is read before the request is written.
			if _, err := io.WriteString(conn, whoamiReq); err != nil {
				t.Fatal(err)
			}
		}
		line, err := r.ReadString('\n')
		if err != nil || !strings.Contains(line, want) {
			t.Fatalf("line %d: %q, %v; want %q", i+1, line, err, want)
		}
	}
}
