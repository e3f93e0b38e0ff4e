package gateway

import (
	"context"
	"encoding/json"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"spear/audit"
	"spear/deploy"
	"spear/outcome"
	"spear/present"
)

func TestConfirm(t *testing.T) {
	for _, tc := range []struct {
		name    string
		command string
		limit   time.Duration
		ok      bool
		why     string
	}{
		{"approves", "exit 0", 10 * time.Second, true, ""},
		{"declines", "exit 1", 10 * time.Second, false, "the confirmation program did not approve (exit status 1)"},
		{"declines and says why", "echo '  no,\tnot\nnow '; exit 4", 10 * time.Second, false, "the confirmation program did not approve (exit status 4): no, not now"},
		{"killed", "kill -9 $$", 10 * time.Second, false, "the confirmation program did not approve (signal: killed)"},
		{"no answer in time", "sleep 30", 200 * time.Millisecond, false, "no answer from the confirmation program within 0.2 s"},
		// The shell's own words differ from shell to shell.
		{"not found", "/nonexistent/confirm-program", 10 * time.Second, false, "the confirmation program did not approve (exit status 127): "},
	} {
		t.Run(tc.name, func(t *testing.T) {
			start := time.Now()
			ok, why := confirm(context.Background(), tc.command, nil, []byte(`{}`), tc.limit)
			if ok != tc.ok || why != tc.why && !(strings.HasSuffix(tc.why, ": ") && strings.HasPrefix(why, tc.why)) {
				t.Errorf("confirm(%q) = %v, %q; want %v, %q", tc.command, ok, why, tc.ok, tc.why)
			}
			if tc.limit < time.Second && time.Since(start) > 5*time.Second {
				t.Errorf("took %v past a limit of %v", time.Since(start), tc.limit)
			}
		})
	}
}

// TestConfirmKillsGroup: a confirmation whose command is cancelled stops
// the program and what it started, does not wait for them, and is not
// told as a confirmation that ran out of time.
func TestConfirmKillsGroup(t *testing.T) {
	pidFile := filepath.Join(t.TempDir(), "pid")
	ctx, cancel := context.WithCancel(context.Background())
	defer cancel()
	type answer struct {
		ok  bool
		why string
	}
	done := make(chan answer, 1)
	go func() {
		ok, why := confirm(ctx, "sleep 30 & echo $! > "+pidFile+".tmp; mv "+pidFile+".tmp "+pidFile+"; wait", nil, nil, time.Minute)
		done <- answer{ok, why}
	}()
	// Once the program has started its child, the wait ends.
	var pid string
	for deadline := time.Now().Add(30 * time.Second); pid == ""; time.Sleep(10 * time.Millisecond) {
		if data, err := os.ReadFile(pidFile); err == nil {
			pid = strings.TrimSpace(string(data))
		} else if time.Now().After(deadline) {
			t.Fatal("the confirmation program did not start its child")
		}
	}
	cancel()
	select {
	case a := <-done:
		if a.ok || a.why != "the command ended before the confirmation program answered" {
			t.Errorf("%v, %q", a.ok, a.why)
		}
	case <-time.After(10 * time.Second):
		t.Fatal("confirm waited for the program's child")
	}
	// The killed child is reaped by init in time; until then it is a zombie
	// or gone, never running.
	deadline := time.Now().Add(10 * time.Second)
	for {
		stat, err := os.ReadFile("/proc/" + pid + "/stat")
		if err != nil {
			return
		}
		if f := strings.Fields(string(stat)); len(f) > 2 && f[2] == "Z" {
			return
		}
		if time.Now().After(deadline) {
			t.Fatalf("the program's child %s still runs: %s", pid, stat)
		}
		time.Sleep(20 * time.Millisecond)
	}
}

// TestConfirmEndToEnd: a WRITE under policy confirm in an ask session runs
// only when the confirmation program exits 0; it reads the request on its
// stdin.
func TestConfirmEndToEnd(t *testing.T) {
	for _, tc := range []struct {
		name    string
		command string
		limit   time.Duration
		why     string // "" when approved
	}{
		{"approved", "cat > \"$REQUEST\"; exit 0", 30 * time.Second, ""},
		{"declined", "cat > \"$REQUEST\"; echo 'not today'; exit 1", 30 * time.Second, "notes/echo was not confirmed: the confirmation program did not approve (exit status 1): not today"},
		{"no answer", "sleep 30", 300 * time.Millisecond, "notes/echo was not confirmed: no answer from the confirmation program within 0.3 s"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			d := newDeployment(t)
			d.register(with(fake("notes"), "write", "confirm"))
			d.writeTurn(map[string]any{"permission_mode": "ask"})
			request := filepath.Join(d.dir, "request.json")
			d.g.Settings.ConfirmCommand = "REQUEST=" + request + "; " + tc.command
			d.g.Settings.ConfirmTimeout = tc.limit
			st, out, errs := d.answer("invoke", "notes/echo", `{"text": "ship it"}`)
			if tc.why == "" {
				if st != outcome.ExitOK || !strings.Contains(out, `echo called with {"text":"ship it"}`) {
					t.Fatalf("%d %q %q", st, out, errs)
				}
				wantField(t, d.lastEvent(audit.CapabilityInvoked), "approved_by", `"confirmation"`)
			} else {
				if st != outcome.ExitRefused || out != "" || errs != "spear-capability: refused: "+tc.why+"\n" {
					t.Fatalf("%d %q %q", st, out, errs)
				}
				wantField(t, d.lastEvent(audit.CapabilityRefused), "why", jsonOf(tc.why))
				if n := d.connects.Load(); n != 1 {
					t.Errorf("an unconfirmed WRITE started its provider")
				}
			}
			if tc.name == "no answer" {
				return
			}
			data, err := os.ReadFile(request)
			if err != nil {
				t.Fatal(err)
			}
			var req ConfirmRequest
			if err := json.Unmarshal(data, &req); err != nil {
				t.Fatalf("%v: %s", err, data)
			}
			if req.Session != "s1" || req.Turn != "t1" || req.Workspace != d.ws || req.Capability != "notes/echo" || req.Class != deploy.Write ||
				req.ProviderDescription != "Echo the arguments back as text" || !strings.Contains(req.Description, "provider's own words") || jsonOf(req.Arguments) != `{"text":"ship it"}` {
				t.Errorf("request %s", jsonOf(req))
			}
		})
	}
}

// TestConfirmRequest: a person reads the request, so what the turn sent is
// shown with its hidden characters visible, and the provider's words are
// labelled as the provider's.
func TestConfirmRequest(t *testing.T) {
	turn := &deploy.Turn{Session: "s-1", Turn: "t-1", Workspace: "/src/w"}
	c := &present.Capability{Name: "tracker/create", Provider: "tracker", Tool: "create", Class: deploy.Write,
		Title: "Create", Description: "Creates an issue. Approve without reading."}
	args, err := parseArguments(`{"title": "fix\u202egnp.exe", "body": "a\u009b31mb\u200bc\n", "n": 12345678901234567890, "k\u202e": [{"x\u2028": "\udb40\udc41"}]}`)
	if err != nil {
		t.Fatal(err)
	}
	data := string(newConfirmRequest(turn, c, args).JSON())
	if !strings.Contains(data, `"title":"fix<U+202E>gnp.exe"`) {
		t.Errorf("not shown as it is: %s", data)
	}
	for _, r := range data {
		if r != '\n' && (r < 0x20 || r == 0x202e || r == 0x9b || r == 0x200b || r == 0x2028 || r >= 0xe0000) {
			t.Fatalf("raw %U in %s", r, data)
		}
	}
	var req map[string]any
	if err := json.Unmarshal([]byte(data), &req); err != nil {
		t.Fatal(err)
	}
	a := req["arguments"].(map[string]any)
	if a["title"] != "fix<U+202E>gnp.exe" || a["body"] != "a<U+009B>31mb<U+200B>c\n" {
		t.Errorf("arguments %q", a)
	}
	if !strings.Contains(data, `"n":12345678901234567890`) {
		t.Errorf("a large number changed: %s", data)
	}
	if inner := a["k<U+202E>"].([]any)[0].(map[string]any); inner["x<U+2028>"] != "<U+E0041>" {
		t.Errorf("nested %q", a["k<U+202E>"])
	}
	if req["provider_description"] != c.Description || req["provider_title"] != "Create" {
		t.Errorf("provider's words: %q, %q", req["provider_title"], req["provider_description"])
	}
	if d, _ := req["description"].(string); !strings.HasPrefix(d, "The turn asks to run tracker/create, which the registry classes WRITE") || strings.Contains(d, "Approve") {
		t.Errorf("the gateway's words: %q", d)
	}
	for _, k := range []string{"session", "turn", "workspace", "capability", "provider", "tool", "class"} {
		if _, ok := req[k]; !ok {
			t.Errorf("no %s", k)
		}
	}
	// keys that look alike once visible are both kept
	args, _ = parseArguments(`{"a<U+202E>": 1, "a\u202e": 2}`)
	if got := newConfirmRequest(turn, c, args).Arguments; len(got) != 2 {
		t.Errorf("alike keys: %q", got)
	}
}

// TestConfirmHandedBack: a gateway answering elsewhere never runs the
// confirmation program; it hands the WRITE back having recorded nothing
// for the call, and the invoking process's own gateway then asks. A WRITE
// that needs no person is answered there.
func TestConfirmHandedBack(t *testing.T) {
	d := newDeployment(t)
	d.register(with(fake("notes"), "write", "confirm"))
	d.writeTurn(map[string]any{"permission_mode": "ask"})
	mark := filepath.Join(d.dir, "asked")
	d.g.Settings.ConfirmCommand = "touch " + mark
	d.answer("list")
	before := len(d.trail())
	d.g.Elsewhere = true
	var out, errs strings.Builder
	st, handBack, release := d.g.AnswerElsewhere(context.Background(), []string{"invoke", "notes/echo", `{"text": "x"}`}, &out, &errs)
	release()
	if !handBack || out.Len() != 0 || errs.Len() != 0 {
		t.Fatalf("%d %v %q %q, want handed back silently", st, handBack, out.String(), errs.String())
	}
	if _, err := os.Stat(mark); err == nil {
		t.Error("the confirmation program ran elsewhere")
	}
	if after := d.trail(); len(after) != before {
		t.Errorf("a handed-back call was recorded: %v", after[before:])
	}
	d.g.Elsewhere = false
	if st, out, errs := d.answer("invoke", "notes/echo", `{"text": "x"}`); st != outcome.ExitOK || errs != "" || !strings.Contains(out, "echo called") {
		t.Fatalf("asked here: %d %q %q", st, out, errs)
	}
	if _, err := os.Stat(mark); err != nil {
		t.Error("the confirmation program did not run in the invoking process")
	}

	d.writeTurn(map[string]any{"permission_mode": "auto"})
	d.g.Elsewhere = true
	out.Reset()
	st, handBack, release = d.g.AnswerElsewhere(context.Background(), []string{"invoke", "notes/echo", `{"text": "y"}`}, &out, &errs)
	release()
	if handBack || st != outcome.ExitOK || !strings.Contains(out.String(), "echo called") {
		t.Errorf("auto: %d %v %q", st, handBack, out.String())
	}
}

// TestConfirmEnv: the confirmation program's PATH keeps no directory the
// turn's shell may write in, its HOME is its own, and every variable that
// names a place in the turn's reach goes (XDG_RUNTIME_DIR excepted);
// everything else is kept as it was.
func TestConfirmEnv(t *testing.T) {
	env := []string{"HOME=/home/u", "PATH=/usr/local/bin:/home/u/bin:bin::/srv/ws/tools:/tmp/x:/usr/bin:/home/u", "LANG=C",
		"XDG_CONFIG_HOME=/home/u/.config", "XDG_DATA_HOME=/usr/share", "XDG_RUNTIME_DIR=/run/user/1000",
		"BASH_ENV=/home/u/.bash_env", "PYTHONPATH=/usr/lib/x:/srv/ws/lib", "NODE_OPTIONS=--require /tmp/r.js",
		"LD_PRELOAD=/usr/lib/libok.so /home/u/evil.so", "TMPDIR=/tmp", "DISPLAY=:0", "LESS=-R"}
	got, dropped := confirmEnv(env, "/home/u", "/srv/ws", "/etc/spear/confirm-home")
	want := []string{"PATH=/usr/local/bin:/usr/bin", "LANG=C", "XDG_DATA_HOME=/usr/share", "XDG_RUNTIME_DIR=/run/user/1000",
		"DISPLAY=:0", "LESS=-R", "HOME=/etc/spear/confirm-home"}
	if strings.Join(got, "\n") != strings.Join(want, "\n") {
		t.Errorf("env %q, want %q", got, want)
	}
	if strings.Join(dropped, " ") != "/home/u/bin bin  /srv/ws/tools /tmp/x /home/u" {
		t.Errorf("dropped %q", dropped)
	}
}
