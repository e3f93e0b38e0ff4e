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
			ok, why := confirm(context.Background(), tc.command, []byte(`{}`), tc.limit)
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
		ok, why := confirm(ctx, "sleep 30 & echo $! > "+pidFile+".tmp; mv "+pidFile+".tmp "+pidFile+"; wait", nil, time.Minute)
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
			want := ConfirmRequest{Session: "s1", Turn: "t1", Workspace: d.ws, Capability: "notes/echo", Class: deploy.Write,
				Description: "Echo the arguments back as text", Arguments: map[string]any{"text": "ship it"}}
			if jsonOf(req) != jsonOf(want) {
				t.Errorf("request %s, want %s", jsonOf(req), jsonOf(want))
			}
		})
	}
}
