package gateway

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"strings"
	"testing"
	"time"

	"spear/deploy"
	"spear/mcp"
	"spear/outcome"
	"spear/present"
)

// TestFailure: each kind of error is told to the turn as what it is, a
// cancelled request is not a timeout, and a closed client did not break
// the protocol.
func TestFailure(t *testing.T) {
	p := &deploy.Provider{ID: "p"}
	for _, tc := range []struct {
		phase string
		err   error
		want  string
	}{
		{"start", &mcp.StartError{Command: "x", Err: errors.New("no such file")}, "could not be started"},
		{"call", &mcp.TimeoutError{Method: "tools/call", After: 2 * time.Second}, "did not answer tools/call within 2 s"},
		{"initialize", &mcp.VersionError{Got: "2024-11-05"}, `answered protocol version "2024-11-05", and only 2025-06-18 is supported`},
		{"list", &mcp.ExitError{State: "exit status 3", Stderr: "secret path"}, "exited during tools/list"},
		{"call", fmt.Errorf("calling: %w", mcp.ErrClosed), "was closed during tools/call"},
		{"call", &mcp.ProtocolError{Msg: "garbage"}, "broke the protocol during tools/call"},
		{"list", &mcp.RPCError{Code: -1, Message: "no"}, "answered tools/list with an error"},
		{"call", fmt.Errorf("x: %w", context.Canceled), "was cancelled during tools/call"},
		{"call", fmt.Errorf("x: %w", context.DeadlineExceeded), "ran out of time during tools/call"},
		{"call", errors.New("odd"), "failed during tools/call"},
	} {
		u := failure(p, tc.phase, tc.err)
		if u.Reason != tc.want || u.Provider != "p" || u.Phase != tc.phase {
			t.Errorf("%v: %+v, want reason %q", tc.err, u, tc.want)
		}
		if strings.Contains(u.Detail, "secret path") {
			t.Errorf("%v: the server's stderr reached the detail: %q", tc.err, u.Detail)
		}
	}
}

// TestProbe: a provider is started, lists its tools and is stopped; a
// failure says in which phase.
func TestProbe(t *testing.T) {
	d := newDeployment(t)
	for _, tc := range []struct {
		command []string
		tools   int
		phase   string
		err     string
	}{
		{[]string{fakeCommand}, 6, "", ""},
		{[]string{fakeCommand, "-tools", "3", "-page", "2"}, 9, "", ""},
		{[]string{"/opt/none"}, 0, "start", "starting /opt/none: no such file or directory"},
		{[]string{fakeCommand, "-version", "1999-01-01"}, 0, "initialize", `server answered protocol version "1999-01-01"`},
		{[]string{fakeCommand, "-behave", "error-init"}, 0, "initialize", "initialize failed: server error -32603: cannot initialize"},
		{[]string{fakeCommand, "-exit-at", "tools/list"}, 0, "list", "server closed its output"},
		{[]string{fakeCommand, "-behave", "endless", "-page", "1"}, 0, "list", "protocol error"},
	} {
		tools, phase, err := Probe(context.Background(), d.connect, &deploy.Provider{ID: "p", Command: tc.command, Timeout: 5 * time.Second})
		if len(tools) != tc.tools || phase != tc.phase || (err == nil) != (tc.err == "") || err != nil && !strings.Contains(err.Error(), tc.err) {
			t.Errorf("%q: %d tools, phase %q, %v; want %d, %q, %q", tc.command, len(tools), phase, err, tc.tools, tc.phase, tc.err)
		}
	}
}

// TestBuildFamily: admitted providers are listed in parallel, their tools
// kept in registry order; a failure makes its provider unavailable; a
// read-only turn keeps READs only.
func TestBuildFamily(t *testing.T) {
	d := newDeployment(t)
	admitted := []*deploy.Provider{
		{ID: "slow", Command: []string{fakeCommand, "-start-delay", "50ms"}, Read: []string{"echo", "big"}, Timeout: 5 * time.Second},
		{ID: "gone", Command: []string{"/opt/gone"}, Timeout: 5 * time.Second},
		{ID: "fast", Command: []string{fakeCommand}, Read: []string{"env"}, Timeout: 5 * time.Second},
	}
	f := buildFamily(context.Background(), listWith(d.connect), admitted, false)
	var names []string
	for _, c := range f.Capabilities {
		names = append(names, c.Name)
	}
	if strings.Join(names, " ") != "slow/echo slow/fail slow/sleep slow/big slow/env slow/mixed fast/echo fast/fail fast/sleep fast/big fast/env fast/mixed" {
		t.Errorf("capabilities %v", names)
	}
	if len(f.Unavailable) != 1 || f.Unavailable[0].Provider != "gone" || f.Unavailable[0].Phase != "start" || f.Unavailable[0].Reason != "could not be started" {
		t.Errorf("unavailable %+v", f.Unavailable)
	}
	if f.Exposure != present.Index || f.Tokens == 0 {
		t.Errorf("12 capabilities: %s, %d tokens", f.Exposure, f.Tokens)
	}
	f = buildFamily(context.Background(), listWith(d.connect), admitted, true)
	names = nil
	for _, c := range f.Capabilities {
		names = append(names, c.Name)
	}
	if strings.Join(names, " ") != "slow/echo slow/big fast/env" || f.Exposure != present.Whole {
		t.Errorf("read-only: %v, %s", names, f.Exposure)
	}
	// Nothing admitted is an empty family, shown whole.
	f = buildFamily(context.Background(), listWith(d.connect), nil, false)
	if f.Capabilities == nil || f.Unavailable == nil || len(f.Capabilities) != 0 || f.Exposure != present.Whole {
		t.Errorf("empty: %+v", f)
	}
}

// TestBuildFamilyCancelled: a build whose context ends is told as such.
func TestBuildFamilyCancelled(t *testing.T) {
	d := newDeployment(t)
	ctx, cancel := context.WithCancel(context.Background())
	cancel()
	f := buildFamily(ctx, listWith(d.connect), []*deploy.Provider{{ID: "p", Command: []string{fakeCommand}, Timeout: 5 * time.Second}}, false)
	if len(f.Unavailable) != 1 || f.Unavailable[0].Reason != "was cancelled during initialize" || f.Unavailable[0].Phase != "initialize" {
		t.Errorf("%+v", f.Unavailable)
	}
}

func TestPhaseOf(t *testing.T) {
	if got := phaseOf(fmt.Errorf("x: %w", &mcp.StartError{Command: "c", Err: errors.New("e")}), "list"); got != "start" {
		t.Errorf("a start error: %q", got)
	}
	if got := phaseOf(&mcp.TimeoutError{Method: "initialize"}, "initialize"); got != "initialize" {
		t.Errorf("otherwise: %q", got)
	}
}

func TestSeconds(t *testing.T) {
	for d, want := range map[time.Duration]string{time.Second: "1 s", 90 * time.Second: "90 s", 1500 * time.Millisecond: "1.5 s", 200 * time.Millisecond: "0.2 s", 0: "0 s"} {
		if got := seconds(d); got != want {
			t.Errorf("seconds(%v) = %q, want %q", d, got, want)
		}
	}
}

func TestKeepTools(t *testing.T) {
	p := &deploy.Provider{ID: "p", Read: []string{"r"}}
	schema := func(n int) json.RawMessage {
		return json.RawMessage(fmt.Sprintf(`{"type":"object","description":%q}`, strings.Repeat("x", n)))
	}
	tools := []mcp.Tool{
		{Name: "r", InputSchema: schema(10)},
		{Name: "w", InputSchema: schema(10)},
		{Name: "bad name", InputSchema: schema(10)},
		{Name: "huge", InputSchema: schema(MaxSchemaBytes)},
		{Name: "hugeout", InputSchema: schema(10), OutputSchema: schema(MaxSchemaBytes)},
	}
	k := keepTools(p, tools, false)
	if len(k.caps) != 2 || k.over != nil {
		t.Fatalf("kept %d, over %v", len(k.caps), k.over)
	}
	want := []string{
		`p: a tool named "bad name"`,
		"p/huge: its schema takes 64.1 KiB, over the 64 KiB a schema may take",
		"p/hugeout: its schema takes 64.1 KiB",
	}
	if len(k.excluded) != len(want) {
		t.Fatalf("excluded %q", k.excluded)
	}
	for i, w := range want {
		if !strings.HasPrefix(k.excluded[i], w) {
			t.Errorf("excluded[%d] = %q, want %q…", i, k.excluded[i], w)
		}
	}
	if k := keepTools(p, tools, true); len(k.caps) != 1 || k.caps[0].Tool != "r" {
		t.Errorf("read-only kept %v", k.caps)
	}

	// Tools within bounds each, over MaxProviderBytes in all: the
	// provider is left out, and says why.
	var many []mcp.Tool
	for i := 0; i < 70; i++ {
		many = append(many, mcp.Tool{Name: fmt.Sprintf("t%d", i), InputSchema: schema(60000)})
	}
	k = keepTools(p, many, false)
	if k.caps != nil || k.over == nil || k.over.Phase != "list" ||
		k.over.Reason != "offers tools that take 4.1 MiB in all, over the 4 MiB a provider may take" {
		t.Fatalf("over: %+v, kept %d", k.over, len(k.caps))
	}
	if got := k.excluded[len(k.excluded)-1]; got != "p: the whole provider, which "+k.over.Reason {
		t.Errorf("excluded %q", got)
	}
	// READ ones only, for a general turn, fit.
	if k := keepTools(&deploy.Provider{ID: "p", Read: []string{"t1"}}, many, true); k.over != nil || len(k.caps) != 1 {
		t.Errorf("read-only: %+v", k.over)
	}
}

func TestListTime(t *testing.T) {
	for timeout, want := range map[time.Duration]time.Duration{
		time.Second: 3 * time.Second, 10 * time.Second: 30 * time.Second,
		20 * time.Second: 60 * time.Second, 300 * time.Second: 60 * time.Second,
	} {
		if got := ListTime(&deploy.Provider{Timeout: timeout}); got != want {
			t.Errorf("ListTime(%s) = %s, want %s", timeout, got, want)
		}
	}
}

func TestByteSize(t *testing.T) {
	for n, want := range map[int]string{900: "900 bytes", 64 << 10: "64 KiB", 70000: "68.4 KiB", 4<<20 + 1: "4.1 MiB", 4 << 20: "4 MiB"} {
		if got := byteSize(n); got != want {
			t.Errorf("byteSize(%d) = %q, want %q", n, got, want)
		}
	}
}

// listWith lists a provider's tools the cold way, through connect.
func listWith(connect Connector) func(context.Context, *deploy.Provider) ([]mcp.Tool, *outcome.Unavailable) {
	return func(ctx context.Context, p *deploy.Provider) ([]mcp.Tool, *outcome.Unavailable) {
		return listProvider(ctx, connect, p)
	}
}
