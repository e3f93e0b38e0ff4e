package warm

import (
	"bufio"
	"bytes"
	"encoding/json"
	"errors"
	"reflect"
	"strings"
	"testing"
	"time"

	"spear/deploy"
	"spear/mcp"
)

const goodOpen = `{"v":1,"op":"open","provider":"notes","turn":"t-1","entry":{"command":["/bin/x"],"dir":"/","path":"/bin","home":"/h","timeout":10,"lifetime":"session","scope":"global","tasks":[],"read":[],"write":"refuse","enabled":true}}`

func TestDecodeRequest(t *testing.T) {
	for _, tc := range []struct {
		line, want string // want: a substring of the error, or "" for none
	}{
		{goodOpen, ""},
		{`{"v":1,"op":"status"}`, ""},
		{`{"v":1,"op":"shutdown"}`, ""},
		{`{"v":1,"op":"stop","provider":"notes","turn":"t-1","pid":42,"why":"failed","detail":"x"}`, ""},
		{`{"v":2,"op":"status"}`, "version 2"},
		{`{"op":"status"}`, "version 0"},
		{`{"v":1,"op":"dance"}`, `"dance" is not an operation`},
		{`{"v":1,"op":"status","extra":1}`, "unknown field"},
		{`{"v":1,"op":"status"} {}`, "more than one JSON value"},
		{`[1]`, "not a JSON object"},
		{``, "not a JSON object"},
		{"{\"v\":1,\"op\":\"status\",\"turn\":\"\xff\"}", "not UTF-8"},
		{`{"v":1,"op":"open","provider":"notes","turn":"t-1"}`, "needs an entry"},
		{`{"v":1,"op":"open","provider":"Notes","turn":"t-1","entry":{}}`, "not a provider id"},
		{`{"v":1,"op":"open","provider":"notes","turn":"../x","entry":{}}`, "not a turn id"},
		{strings.Replace(goodOpen, `["/bin/x"]`, `[]`, 1), "no command"},
		{strings.Replace(goodOpen, `"timeout":10`, `"timeout":0`, 1), "out of range"},
		{strings.Replace(goodOpen, `"timeout":10`, `"timeout":301`, 1), "out of range"},
		{strings.Replace(goodOpen, `"session"`, `"forever"`, 1), "not a lifetime"},
		{strings.Replace(goodOpen, `"/bin/x"`, `"/bin/x\u0000y"`, 1), "NUL"},
		{`{"v":1,"op":"stop","provider":"notes","turn":"t-1","why":"bored"}`, "not a reason"},
		{`{"v":1,"op":"stop","provider":"notes","turn":"t-1","why":"failed","pid":-1}`, "negative pid"},
		{`{"v":1,"op":"status","pid":1e400}`, "cannot unmarshal"},
		{strings.Repeat(" ", maxHeader+1) + "{}", "longer than"},
	} {
		_, err := DecodeRequest([]byte(tc.line))
		switch {
		case tc.want == "" && err != nil:
			t.Errorf("%.80s: %v", tc.line, err)
		case tc.want != "" && (err == nil || !strings.Contains(err.Error(), tc.want)):
			t.Errorf("%.80s: error %v, want %q", tc.line, err, tc.want)
		}
	}
}

func TestDecodeReply(t *testing.T) {
	for _, tc := range []struct {
		line, want string
	}{
		{`{"ok":true,"pid":7,"started":true}`, ""},
		{`{"ok":false,"error":{"kind":"timeout","message":"m","method":"initialize","after_ms":1000}}`, ""},
		{`{"ok":true,"status":{"session":"s","pid":1,"servers":[{"provider":"p","pid":2,"lifetime":"session","started":"2026-01-02T03:04:05Z","calls":3,"idle_s":1.5,"turn":"t"}]}}`, ""},
		{`{"ok":true,"error":{"kind":"x","message":"m"}}`, "neither ok nor an error, or both"},
		{`{"ok":false}`, "neither ok nor an error, or both"},
		{`{"ok":false,"error":{"message":"m"}}`, "of no kind"},
		{`{"ok":true,"pid":-3}`, "negative pid"},
		{`{"ok":true,"more":1}`, "unknown field"},
		{`nope`, "not a JSON object"},
	} {
		_, err := DecodeReply([]byte(tc.line))
		switch {
		case tc.want == "" && err != nil:
			t.Errorf("%.80s: %v", tc.line, err)
		case tc.want != "" && (err == nil || !strings.Contains(err.Error(), tc.want)):
			t.Errorf("%.80s: error %v, want %q", tc.line, err, tc.want)
		}
	}
}

// TestFailureErr: each kind of failure comes back as the error a client of
// the server itself would have met, and back again.
func TestFailureErr(t *testing.T) {
	for _, err := range []error{
		&mcp.StartError{Command: "x", Err: errors.New("no such file")},
		&mcp.TimeoutError{Method: "initialize", After: 2 * time.Second},
		&mcp.ExitError{State: "exit status 3"},
		&mcp.ProtocolError{Msg: "garbage"},
		&mcp.RPCError{Method: "initialize", Code: -32603, Message: "no"},
	} {
		got := failureOf(err).Err()
		if reflect.TypeOf(got) != reflect.TypeOf(err) {
			t.Errorf("%T came back as %T", err, got)
		}
	}
	if te, ok := failureOf(&mcp.TimeoutError{Method: "initialize", After: 2 * time.Second}).Err().(*mcp.TimeoutError); !ok || te.After != 2*time.Second || te.Method != "initialize" {
		t.Errorf("timeout: %+v", te)
	}
	if _, ok := (&Failure{Kind: KindFailed, Message: "m"}).Err().(*FailedError); !ok {
		t.Error("failed is not a *FailedError")
	}
	for _, k := range []string{KindClosing, KindVersion, KindRefused, KindBad, "unheard-of"} {
		if _, ok := (&Failure{Kind: k}).Err().(*UnreachableError); !ok {
			t.Errorf("%s is not an *UnreachableError", k)
		}
	}
}

// TestEntryIdentity: the entry carries every key of a registry entry, and
// a change in any of them changes its hash.
func TestEntryIdentity(t *testing.T) {
	// A key added to deploy.Provider must reach Entry (EntryOf) too.
	if n := reflect.TypeOf(deploy.Provider{}).NumField(); n != 12 {
		t.Fatalf("deploy.Provider has %d fields; EntryOf knows 12 (ID travels as the provider): update EntryOf and this test", n)
	}
	reg, err := deploy.ParseRegistry("/etc/spear/capabilities.json", []byte(`{"providers": [
		{"id": "a", "command": ["/bin/x", "-v"], "scope": "global", "tasks": ["implementation"], "env": {"K": "v"},
		 "read": ["r"], "write": "allow", "enabled": true, "timeout": 5, "private": ["/p"], "lifetime": "session"}]}`))
	if err != nil || len(reg.Providers) != 1 {
		t.Fatal(err, reg.Problems)
	}
	env := map[string]string{"PATH": "/bin", "HOME": "/h"}
	getenv := func(k string) string { return env[k] }
	base := EntryOf(reg.Providers[0], getenv)
	if base.Hash() != EntryOf(reg.Providers[0], getenv).Hash() {
		t.Fatal("one entry, two hashes")
	}
	changes := map[string]func(p *deploy.Provider){
		"command":  func(p *deploy.Provider) { p.Command = []string{"/bin/x"} },
		"scope":    func(p *deploy.Provider) { p.Scope = deploy.Scope{Kind: "path", Path: "/src"} },
		"tasks":    func(p *deploy.Provider) { p.Tasks = []deploy.Task{deploy.TaskGeneral} },
		"env":      func(p *deploy.Provider) { p.Env = map[string]string{"K": "w"} },
		"read":     func(p *deploy.Provider) { p.Read = nil },
		"write":    func(p *deploy.Provider) { p.Write = deploy.WriteRefuse },
		"enabled":  func(p *deploy.Provider) { p.Enabled = false },
		"timeout":  func(p *deploy.Provider) { p.Timeout = 6 * time.Second },
		"private":  func(p *deploy.Provider) { p.Private = nil },
		"lifetime": func(p *deploy.Provider) { p.Lifetime = deploy.LifetimeCall },
		"dir":      func(p *deploy.Provider) { p.Dir = "/elsewhere" },
	}
	for key, change := range changes {
		p := *reg.Providers[0]
		change(&p)
		if EntryOf(&p, getenv).Hash() == base.Hash() {
			t.Errorf("changing %s keeps the hash", key)
		}
	}
	env["PATH"] = "/usr/bin"
	if EntryOf(reg.Providers[0], getenv).Hash() == base.Hash() {
		t.Error("another PATH keeps the hash")
	}
}

func TestParseRPC(t *testing.T) {
	for _, tc := range []struct {
		line string
		kind kind
		err  bool
	}{
		{`{"jsonrpc":"2.0","id":1,"method":"tools/call"}`, kindRequest, false},
		{`{"jsonrpc":"2.0","id":"a","method":"ping"}`, kindRequest, false},
		{`{"jsonrpc":"2.0","method":"notifications/cancelled","params":{"requestId":3}}`, kindNotification, false},
		{`{"jsonrpc":"2.0","id":null,"method":"x"}`, kindNotification, false},
		{`{"jsonrpc":"2.0","id":4,"result":{}}`, kindResponse, false},
		{`{"jsonrpc":"2.0","id":null,"error":{"code":-32700,"message":"parse error"}}`, kindResponse, false},
		{`{"jsonrpc":"2.0","id":{},"result":{}}`, 0, true},
		{`{"jsonrpc":"2.0","id":true,"method":"x"}`, 0, true},
		{`{"jsonrpc":"1.0","id":1,"method":"x"}`, 0, true},
		{`{"jsonrpc":"2.0"}`, 0, true},
		{`{"jsonrpc":"2.0","method":3}`, 0, true},
		{`[{"jsonrpc":"2.0","id":1,"method":"x"}]`, 0, true},
		{`Server starting up...`, 0, true},
	} {
		m, err := parseRPC([]byte(tc.line))
		if (err != nil) != tc.err || (err == nil && m.kind != tc.kind) {
			t.Errorf("%s: %+v, %v", tc.line, m, err)
		}
	}
	m, _ := parseRPC([]byte(`{"jsonrpc":"2.0","method":"notifications/cancelled","params":{"requestId":"c-1","reason":"r"}}`))
	id, ok := m.cancelledID()
	if !ok || string(id) != `"c-1"` {
		t.Fatalf("cancelledID %s %v", id, ok)
	}
	line := m.withCancelledID(json.RawMessage("12"))
	if !bytes.Contains(line, []byte(`"requestId":12`)) || !bytes.Contains(line, []byte(`"reason":"r"`)) {
		t.Fatalf("withCancelledID %s", line)
	}
}

func TestReadLine(t *testing.T) {
	r := bufio.NewReaderSize(strings.NewReader("short\n"+strings.Repeat("x", 100)+"\nlast"), 16)
	for _, want := range []string{"short\n", "", "last"} {
		line, err := mcp.ReadLine(r, 50)
		if want == "" {
			if !errors.As(err, new(*mcp.LineTooLongError)) {
				t.Fatalf("a long line: %q, %v", line, err)
			}
			// What is left of it is the rest of the stream.
			for {
				b, err := r.ReadByte()
				if err != nil || b == '\n' {
					break
				}
			}
			continue
		}
		if string(line) != want || err != nil {
			t.Fatalf("line %q, %v; want %q", line, err, want)
		}
	}
}

// FuzzDecodeRequest: no input panics or hangs, and a request that decodes
// encodes to one that decodes to the same.
func FuzzDecodeRequest(f *testing.F) {
	f.Add([]byte(goodOpen))
	f.Add([]byte(`{"v":1,"op":"stop","provider":"notes","turn":"t-1","pid":42,"why":"failed"}`))
	f.Add([]byte(`{"v":1,"op":"status"}`))
	f.Add([]byte(`{"v":1,"op":"open","entry":{"env":{"A":"b"},"timeout":1e308}}`))
	f.Fuzz(func(t *testing.T, line []byte) {
		r, err := DecodeRequest(line)
		if err != nil {
			return
		}
		again, err := DecodeRequest(encodeLine(r))
		if err != nil {
			t.Fatalf("%s re-encoded does not decode: %v", line, err)
		}
		if !reflect.DeepEqual(r, again) {
			t.Fatalf("round trip: %+v became %+v", r, again)
		}
		if r.Op == OpOpen && (r.Entry == nil || len(r.Entry.Command) == 0 || r.Entry.timeout() <= 0 || !validProvider(r.Provider)) {
			t.Fatalf("an unusable open passed: %+v", r)
		}
	})
}

// FuzzDecodeReply: no input panics, and a reply that decodes says ok or
// an error of some kind, never both.
func FuzzDecodeReply(f *testing.F) {
	f.Add([]byte(`{"ok":true,"pid":7,"started":true}`))
	f.Add([]byte(`{"ok":false,"error":{"kind":"rpc","message":"m","code":-1}}`))
	f.Add([]byte(`{"ok":true,"status":{"session":"s","pid":1,"servers":[]}}`))
	f.Fuzz(func(t *testing.T, line []byte) {
		r, err := DecodeReply(line)
		if err != nil {
			return
		}
		if r.OK == (r.Error != nil) || (r.Error != nil && r.Error.Kind == "") {
			t.Fatalf("%s decoded to %+v", line, r)
		}
		if r.Error != nil && r.Error.Err() == nil {
			t.Fatal("a failure with no error")
		}
	})
}

// FuzzParseRPC: no message panics the relay's parser, and replacing the
// id of one that parses keeps it the same kind of message, with that id.
func FuzzParseRPC(f *testing.F) {
	f.Add([]byte(`{"jsonrpc":"2.0","id":1,"method":"tools/call","params":{"name":"x"}}`))
	f.Add([]byte(`{"jsonrpc":"2.0","id":"a","result":{}}`))
	f.Add([]byte(`{"jsonrpc":"2.0","method":"notifications/cancelled","params":{"requestId":3}}`))
	f.Fuzz(func(t *testing.T, line []byte) {
		m, err := parseRPC(line)
		if err != nil {
			return
		}
		if m.kind == kindNotification {
			if id, ok := m.cancelledID(); ok {
				m.withCancelledID(id)
			}
			return
		}
		out, err := parseRPC(m.withID(json.RawMessage("77")))
		if err != nil || out.kind != m.kind || string(out.id) != "77" {
			t.Fatalf("%s with id 77: %+v, %v", line, out, err)
		}
	})
}
