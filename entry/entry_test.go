package entry

import (
	"bufio"
	"bytes"
	"context"
	"fmt"
	"io"
	"net"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"sync/atomic"
	"testing"
	"time"

	"spear/internal/hostwire"
	"spear/outcome"
	"spear/turnshell"
	"spear/warm"
)

// deployment is a state directory, a turn file and the environment that
// names them, with a session process for the turn's session when serve
// is called.
type deployment struct {
	t     *testing.T
	env   map[string]string
	state string
	dir   string // the session's state directory
	calls atomic.Int32
	got   *hostwire.AnswerRequest
}

func newDeployment(t *testing.T, workspace string) *deployment {
	dir := t.TempDir()
	turn := filepath.Join(dir, "turn.json")
	if err := os.WriteFile(turn, []byte(fmt.Sprintf(`{"session": "s-1", "turn": "t-1", "workspace": %q, "class": "implementation"}`, workspace)), 0o600); err != nil {
		t.Fatal(err)
	}
	d := &deployment{t: t, state: filepath.Join(dir, "state"), env: map[string]string{
		"HOME": dir, "SPEAR_CONFIG_DIR": filepath.Join(dir, "cfg"), "SPEAR_STATE_DIR": filepath.Join(dir, "state"), "SPEAR_TURN_FILE": turn,
	}}
	d.dir = hostwire.SessionDir(d.state, "s-1")
	if err := os.MkdirAll(d.dir, 0o700); err != nil {
		t.Fatal(err)
	}
	return d
}

// serve runs a session process whose answers are answer's.
func (d *deployment) serve(answer warm.Answerer) {
	ln, err := net.ListenUnix("unix", &net.UnixAddr{Name: filepath.Join(d.dir, hostwire.SocketName), Net: "unix"})
	if err != nil {
		d.t.Fatal(err)
	}
	h := &warm.Host{Session: "s-1", Idle: time.Minute, Answer: func(ctx context.Context, req *hostwire.AnswerRequest) warm.Answered {
		d.calls.Add(1)
		d.got = req
		return answer(ctx, req)
	}}
	served := make(chan struct{})
	go func() {
		h.Serve(ln)
		close(served)
	}()
	d.t.Cleanup(func() {
		h.Shutdown(warm.WhySessionStopped)
		<-served
	})
}

func (d *deployment) environ() []string {
	var out []string
	for k, v := range d.env {
		out = append(out, k+"="+v)
	}
	return out
}

func (d *deployment) answer(words ...string) (int, bool, string, string) {
	var stdout, stderr bytes.Buffer
	status, answered := Answer(words, func(k string) string { return d.env[k] }, d.environ(), &stdout, &stderr)
	return status, answered, stdout.String(), stderr.String()
}

func fixed(a warm.Answered) warm.Answerer {
	return func(context.Context, *hostwire.AnswerRequest) warm.Answered { return a }
}

// answered is an answer with output written in turn to descriptors 1 and
// 2, from "1:text" and "2:text".
func answered(status int, handBack bool, writes ...string) warm.Answered {
	a := warm.Answered{Status: status, HandBack: handBack}
	for _, w := range writes {
		fd, text, _ := strings.Cut(w, ":")
		io.WriteString(a.Output.Writer(map[string]int{"1": 1, "2": 2}[fd]), text)
	}
	return a
}

func TestAnswered(t *testing.T) {
	d := newDeployment(t, "/ws")
	d.serve(fixed(answered(outcome.ExitToolError, false, "2:note\n", "1:framed\n")))
	// A turn file named relative to this directory reaches the session
	// process made absolute.
	abs := d.env["SPEAR_TURN_FILE"]
	t.Chdir(filepath.Dir(abs))
	rel := filepath.Base(abs)
	d.env["SPEAR_TURN_FILE"] = rel
	status, answered, out, errOut := d.answer("invoke", "p/t", `{"q": 1}`)
	if !answered || status != outcome.ExitToolError || out != "framed\n" || errOut != "note\n" {
		t.Fatalf("answer: %d %v %q %q", status, answered, out, errOut)
	}
	if !slices.Equal(d.got.Args, []string{"invoke", "p/t", `{"q": 1}`}) {
		t.Errorf("args %q", d.got.Args)
	}
	if !slices.Contains(d.got.Env, "SPEAR_TURN_FILE="+abs) || slices.Contains(d.got.Env, "SPEAR_TURN_FILE="+rel) {
		t.Errorf("env %q: want SPEAR_TURN_FILE=%s once", d.got.Env, abs)
	}
}

// Handed back: the output so far is shown, and the caller answers.
func TestHandBack(t *testing.T) {
	d := newDeployment(t, "/ws")
	d.serve(fixed(answered(0, true, "2:note\n")))
	if status, answered, out, errOut := d.answer("invoke", "p/w", "{}"); answered || out != "" || errOut != "note\n" {
		t.Errorf("hand-back: %d %v %q %q", status, answered, out, errOut)
	}
}

// Whenever the session process cannot answer, nothing is written, nothing
// runs there, and the caller answers.
func TestNotAnswered(t *testing.T) {
	cases := []struct {
		name  string
		setup func(d *deployment)
	}{
		{"no session process", func(d *deployment) {}},
		{"inside a turn's shell", func(d *deployment) {
			d.serve(fixed(warm.Answered{}))
			d.env[turnshell.Marker] = "1"
		}},
		{"no turn file", func(d *deployment) {
			d.serve(fixed(warm.Answered{}))
			delete(d.env, "SPEAR_TURN_FILE")
		}},
		{"settings that cannot be used", func(d *deployment) {
			d.serve(fixed(warm.Answered{}))
			d.env["SPEAR_CONFINE"] = "maybe"
		}},
		{"a session process that answers none", func(d *deployment) {
			ln, err := net.ListenUnix("unix", &net.UnixAddr{Name: filepath.Join(d.dir, hostwire.SocketName), Net: "unix"})
			if err != nil {
				t.Fatal(err)
			}
			h := &warm.Host{Session: "s-1", Idle: time.Minute}
			go h.Serve(ln)
			t.Cleanup(func() { h.Shutdown(warm.WhySessionStopped) })
		}},
		{"a socket nobody accepts on", func(d *deployment) {
			// It takes the connection and never replies: after acceptWait
			// the caller answers.
			ln, err := net.ListenUnix("unix", &net.UnixAddr{Name: filepath.Join(d.dir, hostwire.SocketName), Net: "unix"})
			if err != nil {
				t.Fatal(err)
			}
			t.Cleanup(func() { ln.Close() })
			old := acceptWait
			acceptWait = 100 * time.Millisecond
			t.Cleanup(func() { acceptWait = old })
		}},
		{"a huge environment", func(d *deployment) {
			d.serve(fixed(warm.Answered{}))
			d.env["BIG"] = strings.Repeat("x", maxRequest)
		}},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			d := newDeployment(t, "/ws")
			tc.setup(d)
			status, answered, out, errOut := d.answer("list")
			if answered || out != "" || errOut != "" || d.calls.Load() != 0 {
				t.Errorf("%d %v %q %q, %d answers ran", status, answered, out, errOut, d.calls.Load())
			}
		})
	}
	t.Run("a relative workspace", func(t *testing.T) {
		d := newDeployment(t, "ws")
		d.serve(fixed(warm.Answered{}))
		if _, answered, _, _ := d.answer("list"); answered || d.calls.Load() != 0 {
			t.Error("answered in the session process, which runs elsewhere")
		}
	})
}

// A session process that fails once committed: the call may have run, and
// the caller must not run it again.
func TestLostAfterCommit(t *testing.T) {
	d := newDeployment(t, "/ws")
	d.serve(func(context.Context, *hostwire.AnswerRequest) warm.Answered { panic("boom") })
	status, answered, out, errOut := d.answer("invoke", "p/t", "{}")
	if !answered || status != outcome.ExitUnavailable || out != "" || !strings.Contains(errOut, "the call may have run") {
		t.Errorf("%d %v %q %q", status, answered, out, errOut)
	}
}

type nopCloser struct{}

func (nopCloser) Close() error { return nil }

// FuzzReceive: whatever a session process sends once the client has
// committed is an answer with its output, or a call that may have run;
// never a panic, and never more output than was sent.
func FuzzReceive(f *testing.F) {
	f.Add([]byte("{\"status\":0,\"parts\":[{\"fd\":1,\"len\":3},{\"fd\":2,\"len\":2}]}\nabcde"))
	f.Add([]byte("{\"status\":2,\"hand_back\":true,\"parts\":[{\"fd\":2,\"len\":4}]}\nnote"))
	f.Add([]byte("{\"status\":1,\"parts\":[{\"fd\":1,\"len\":-1}]}\n"))
	f.Add([]byte("{\"status\":1,\"parts\":[{\"fd\":3,\"len\":1}]}\nx"))
	f.Add([]byte("{\"status\":0,\"parts\":[{\"fd\":1,\"len\":9999999999}]}\nabc"))
	f.Add([]byte("not json\n"))
	f.Add([]byte(""))
	f.Fuzz(func(t *testing.T, data []byte) {
		var stdout, stderr bytes.Buffer
		status, answered := receive(nopCloser{}, bufio.NewReader(bytes.NewReader(data)), &stdout, &stderr)
		if stdout.Len()+stderr.Len() > len(data)+600 {
			t.Fatalf("%d bytes of output from %d", stdout.Len()+stderr.Len(), len(data))
		}
		if answered && status == outcome.ExitUnavailable && strings.Contains(stderr.String(), "may have run") {
			return
		}
		if !answered && status != 0 {
			t.Fatalf("handed back with status %d", status)
		}
	})
}
