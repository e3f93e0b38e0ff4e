package gateway

import (
	"context"
	"fmt"
	"io"
	"os"
	"path/filepath"
	"strings"
	"sync"
	"testing"

	"spear/internal/fakemcp"
	"spear/mcp"
)

// order records, in turn, what happened to a call's output and server.
type order struct {
	mu     sync.Mutex
	events []string
}

func (o *order) add(e string) {
	o.mu.Lock()
	defer o.mu.Unlock()
	o.events = append(o.events, e)
}

// output is the turn's stdout, recording when the result is written.
type output struct{ o *order }

func (w output) Write(b []byte) (int, error) {
	w.o.add("result written")
	return len(b), nil
}

// stopped is a server's connection that records when it is closed.
type stopped struct {
	io.ReadWriteCloser
	o *order
}

func (s *stopped) Close() error {
	s.o.add("server stopped")
	return s.ReadWriteCloser.Close()
}

// testGateway writes a registry with one provider, a project and a turn
// under a directory of its own, and returns a gateway for them (no
// session process: every server is started for its use) and the audit
// trail's path.
func testGateway(t *testing.T, connect Connector) (*Gateway, string) {
	dir := t.TempDir()
	ws := filepath.Join(dir, "ws")
	os.MkdirAll(ws, 0o755)
	write := func(name, content string) {
		if err := os.WriteFile(filepath.Join(dir, name), []byte(content), 0o644); err != nil {
			t.Fatal(err)
		}
	}
	write("projects.json", fmt.Sprintf(`{"projects": [{"name": "p", "root": %q}]}`, ws))
	write("capabilities.json", `{"providers": [{"id": "fake", "command": ["fake-mcp"], "scope": "global", "read": ["echo"]}]}`)
	write("turn.json", fmt.Sprintf(`{"session": "s", "turn": "t", "workspace": %q, "class": "implementation"}`, ws))
	env := map[string]string{"HOME": dir, "SPEAR_PROJECTS_FILE": filepath.Join(dir, "projects.json"), "SPEAR_STATE_DIR": filepath.Join(dir, "state"), "SPEAR_TURN_FILE": filepath.Join(dir, "turn.json")}
	g := New(func(k string) string { return env[k] })
	g.Connect = connect
	return g, filepath.Join(dir, "state", "audit.jsonl")
}

// TestResultBeforeStop: a server started for one call is stopped only
// after the result has been written, and both its start and its stop are
// recorded.
func TestResultBeforeStop(t *testing.T) {
	o := &order{}
	g, audit := testGateway(t, func(ctx context.Context, opts mcp.Options) (*mcp.Client, error) {
		return mcp.ConnectConn(ctx, &stopped{fakemcp.Pipe(), o}, opts)
	})
	var stderr strings.Builder
	if st := g.Answer(context.Background(), []string{"list"}, io.Discard, &stderr); st != 0 {
		t.Fatalf("list: status %d: %s", st, stderr.String())
	}
	o.events = nil
	if st := g.Answer(context.Background(), []string{"invoke", "fake/echo", `{"text": "x"}`}, output{o}, &stderr); st != 0 {
		t.Fatalf("invoke: status %d: %s", st, stderr.String())
	}
	if got := strings.Join(o.events, ", "); got != "result written, server stopped" {
		t.Fatalf("order: %s", got)
	}
	data, _ := os.ReadFile(audit)
	for _, want := range []string{`"event":"provider_started"`, `"event":"provider_stopped"`, `"why":"call done"`} {
		if strings.Count(string(data), want) != 2 { // the family's listing, then the call
			t.Errorf("the trail has %d lines with %s, want 2:\n%s", strings.Count(string(data), want), want, data)
		}
	}
}

// TestFailedCallStops: a call whose server fails is told as unavailable,
// its server stopped first and recorded as failed.
func TestFailedCallStops(t *testing.T) {
	o := &order{}
	g, audit := testGateway(t, func(ctx context.Context, opts mcp.Options) (*mcp.Client, error) {
		return mcp.ConnectConn(ctx, &stopped{fakemcp.Pipe("-exit-at", "tools/call"), o}, opts)
	})
	var stderr strings.Builder
	if st := g.Answer(context.Background(), []string{"invoke", "fake/echo", `{}`}, output{o}, &stderr); st != 3 {
		t.Fatalf("status %d: %s", st, stderr.String())
	}
	if !strings.Contains(stderr.String(), "unavailable: fake: exited during tools/call") {
		t.Fatalf("stderr %s", stderr.String())
	}
	if data, _ := os.ReadFile(audit); !strings.Contains(string(data), `"why":"failed"`) {
		t.Fatalf("no failed stop in the trail:\n%s", data)
	}
}

// TestSkippedLinesRecorded: a server the gateway starts itself that writes
// lines that are not JSON on its stdout still serves; provider_started
// says how many it wrote while starting, provider_stopped how many in all
// when it wrote more after; one that writes more than a client skips is
// unavailable, and the trail says why.
func TestSkippedLinesRecorded(t *testing.T) {
	d := newDeployment(t)
	d.register(
		with(fake("banner", "-banner", "1", "-behave", "log-calls"), "read", []string{"echo"}),
		with(fake("loud", "-banner", "101"), "read", []string{"echo"}),
	)
	if st, _, errs := d.answer("invoke", "banner/echo", `{"text":"hi"}`); st != 0 {
		t.Fatalf("invoke: status %d: %s", st, errs)
	}
	first := `"No X display available. Running in headless mode. (1)"`
	started, stopped := d.events("provider_started"), d.events("provider_stopped")
	if len(started) != 2 || len(stopped) != 2 { // the family's listing, then the call
		t.Fatalf("provider_started %d, provider_stopped %d", len(started), len(stopped))
	}
	for _, e := range started {
		wantField(t, e, "skipped_lines", "1")
		wantField(t, e, "skipped_bytes", fmt.Sprint(len(first)-2+1))
		wantField(t, e, "skipped_first", first)
	}
	if hasField(stopped[0], "skipped_lines") {
		t.Errorf("the listing's stop repeats what its start said: %s", stopped[0].Raw)
	}
	wantField(t, stopped[1], "skipped_lines", "2") // the banner, and the line before the call's answer
	wantField(t, stopped[1], "skipped_first", first)

	if st, _, errs := d.answer("invoke", "loud/echo", `{}`); st != 3 || !strings.Contains(errs, "unavailable: loud") {
		t.Fatalf("loud: status %d: %s", st, errs)
	}
	failed := d.lastEvent("provider_failed")
	wantField(t, failed, "provider", `"loud"`)
	if why := fmt.Sprint(failed.Fields["why"]); !strings.Contains(why, "server wrote 101 lines that are not JSON on its stdout") {
		t.Errorf("provider_failed why %s", why)
	}
}
