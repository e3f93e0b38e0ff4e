package gateway

import (
	"context"
	"encoding/json"
	"errors"
	"os"
	"path/filepath"
	"strings"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"spear/audit"
	"spear/deploy"
	"spear/internal/fakemcp"
	"spear/mcp"
)

// fakeCommand is the command a registry entry names to run the fake MCP
// server in the test's own process; what follows it are the fake's flags.
const fakeCommand = "fake"

// deployment is a deployment in a temporary directory: projects, provider
// registry, turn file, state directory and audit trail, with a gateway
// over it whose providers are fake servers served over pipes.
type deployment struct {
	t   *testing.T
	dir string
	ws  string // the turn's workspace, in project "web"
	g   *Gateway

	connects atomic.Int64 // how many times a provider was started

	mu   sync.Mutex
	opts []mcp.Options // what each start was given
}

func newDeployment(t *testing.T) *deployment {
	t.Helper()
	dir := t.TempDir()
	d := &deployment{t: t, dir: dir, ws: filepath.Join(dir, "ws")}
	if err := os.MkdirAll(d.ws, 0o755); err != nil {
		t.Fatal(err)
	}
	cfg := filepath.Join(dir, "config")
	d.g = &Gateway{
		Settings: deploy.Settings{
			ConfigDir:        cfg,
			ProjectsFile:     filepath.Join(cfg, "projects.json"),
			CapabilitiesFile: filepath.Join(cfg, "capabilities.json"),
			TurnFile:         filepath.Join(dir, "turn.json"),
			StateDir:         filepath.Join(dir, "state"),
			AuditFile:        filepath.Join(dir, "state", "audit.jsonl"),
			MaxOutput:        deploy.DefaultMaxOutput,
			ConfirmTimeout:   30 * time.Second,
		},
		Connect: d.connect,
	}
	d.writeJSON(d.g.Settings.ProjectsFile, map[string]any{"projects": []any{map[string]any{"name": "web", "root": d.ws}}})
	d.writeTurn(nil)
	return d
}

// connect runs the fake server in-process for a command that names it;
// any other command cannot be started.
func (d *deployment) connect(ctx context.Context, opts mcp.Options) (*mcp.Client, error) {
	d.connects.Add(1)
	d.mu.Lock()
	d.opts = append(d.opts, opts)
	d.mu.Unlock()
	if len(opts.Command) == 0 || opts.Command[0] != fakeCommand {
		return nil, &mcp.StartError{Command: strings.Join(opts.Command, " "), Err: errors.New("no such file or directory")}
	}
	return mcp.ConnectConn(ctx, fakemcp.Pipe(opts.Command[1:]...), opts)
}

func (d *deployment) writeJSON(path string, v any) {
	d.t.Helper()
	data, err := json.MarshalIndent(v, "", "  ")
	if err != nil {
		d.t.Fatal(err)
	}
	d.writeFile(path, string(data))
}

func (d *deployment) writeFile(path, content string) {
	d.t.Helper()
	if err := os.MkdirAll(filepath.Dir(path), 0o755); err != nil {
		d.t.Fatal(err)
	}
	if err := os.WriteFile(path, []byte(content), 0o644); err != nil {
		d.t.Fatal(err)
	}
}

// writeTurn writes the turn file: session s1, turn t1 of an implementation
// change in the workspace, with the fields given replacing those.
func (d *deployment) writeTurn(fields map[string]any) {
	d.t.Helper()
	turn := map[string]any{"session": "s1", "turn": "t1", "workspace": d.ws, "class": "implementation"}
	for k, v := range fields {
		turn[k] = v
	}
	d.writeJSON(d.g.Settings.TurnFile, turn)
}

// fake is a registry entry for the fake server with the given flags, in
// scope global.
func fake(id string, flags ...string) map[string]any {
	return map[string]any{"id": id, "command": append([]string{fakeCommand}, flags...), "scope": "global"}
}

// with returns a copy of entry with the keys given.
func with(entry map[string]any, kv ...any) map[string]any {
	out := map[string]any{}
	for k, v := range entry {
		out[k] = v
	}
	for i := 0; i+1 < len(kv); i += 2 {
		out[kv[i].(string)] = kv[i+1]
	}
	return out
}

// register writes the provider registry.
func (d *deployment) register(entries ...map[string]any) {
	d.t.Helper()
	if entries == nil {
		entries = []map[string]any{}
	}
	d.writeJSON(d.g.Settings.CapabilitiesFile, map[string]any{"providers": entries})
}

// tools writes a tools file for the fake's -tools-file and returns its path.
func (d *deployment) tools(name string, tools ...fakemcp.ToolSpec) string {
	d.t.Helper()
	path := filepath.Join(d.dir, "tools", name+".json")
	d.writeJSON(path, map[string]any{"tools": tools})
	return path
}

// answer answers one command in the turn, as spear-term would.
func (d *deployment) answer(args ...string) (status int, stdout, stderr string) {
	var out, errs strings.Builder
	status = d.g.Answer(context.Background(), args, &out, &errs)
	return status, out.String(), errs.String()
}

// open opens the turn session and closes it when the test ends.
func (d *deployment) open() *TurnSession {
	d.t.Helper()
	ts, err := d.g.Open(context.Background())
	if err != nil {
		d.t.Fatalf("Open: %v", err)
	}
	d.t.Cleanup(ts.Close)
	return ts
}

// trail reads the audit trail back.
func (d *deployment) trail() []audit.Entry {
	d.t.Helper()
	f, err := os.Open(d.g.Settings.AuditFile)
	if errors.Is(err, os.ErrNotExist) {
		return nil
	}
	if err != nil {
		d.t.Fatal(err)
	}
	defer f.Close()
	var out []audit.Entry
	if err := audit.Read(f, func(e audit.Entry) error { out = append(out, e); return nil }, nil); err != nil {
		d.t.Fatal(err)
	}
	return out
}

// events returns the trail's entries of one event.
func (d *deployment) events(event string) []audit.Entry {
	var out []audit.Entry
	for _, e := range d.trail() {
		if e.Event == event {
			out = append(out, e)
		}
	}
	return out
}

// lastEvent returns the trail's last entry of one event, failing the test
// when there is none.
func (d *deployment) lastEvent(event string) audit.Entry {
	d.t.Helper()
	es := d.events(event)
	if len(es) == 0 {
		d.t.Fatalf("no %s in the audit trail", event)
	}
	return es[len(es)-1]
}

// jsonOf is v as compact JSON, for comparing decoded fields.
func jsonOf(v any) string {
	data, _ := json.Marshal(v)
	return string(data)
}

// wantField fails the test unless e's field key encodes as want (JSON).
func wantField(t *testing.T, e audit.Entry, key, want string) {
	t.Helper()
	v, ok := e.Fields[key]
	if !ok {
		t.Errorf("%s has no %q: %s", e.Event, key, e.Raw)
		return
	}
	if got := jsonOf(v); got != want {
		t.Errorf("%s %s = %s, want %s", e.Event, key, got, want)
	}
}

// hasField reports whether e has the field key.
func hasField(e audit.Entry, key string) bool {
	_, ok := e.Fields[key]
	return ok
}

// statePath is where the turn's state is kept.
func (d *deployment) statePath(session, turn string) string {
	return filepath.Join(d.g.Settings.StateDir, "sessions", session, "turns", turn, "state.json")
}
