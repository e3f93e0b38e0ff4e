package warm

import (
	"bufio"
	"context"
	"encoding/json"
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
	"spear/mcp"
)

// answerConn connects to the host at s and sends an answer request for
// args; it returns the connection and the host's first line.
func answerConn(t *testing.T, s *Session, args ...string) (net.Conn, *bufio.Reader, string) {
	t.Helper()
	conn, err := net.Dial("unix", filepath.Join(s.Dir, SocketName))
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { conn.Close() })
	req, _ := json.Marshal(Request{V: Version, Op: OpAnswer, Answer: &hostwire.AnswerRequest{Args: args, Env: []string{"A=1"}}})
	conn.Write(append(req, '\n'))
	conn.SetDeadline(time.Now().Add(5 * time.Second))
	r := bufio.NewReader(conn)
	line, err := mcp.ReadLine(r, maxHeader)
	if err != nil {
		t.Fatalf("no reply: %v", err)
	}
	return conn, r, string(line)
}

// An answer runs only once the client has committed to it; its output
// follows its header, and the host counts it.
func TestAnswerCommitted(t *testing.T) {
	var runs atomic.Int32
	h := &Host{Answer: func(ctx context.Context, req *hostwire.AnswerRequest) Answered {
		runs.Add(1)
		a := Answered{Status: 1}
		io.WriteString(a.Output.Writer(2), "note\n")
		io.WriteString(a.Output.Writer(1), "out\n")
		io.WriteString(a.Output.Writer(2), "err: "+strings.Join(req.Args, " ")+" "+strings.Join(req.Env, " ")+"\n")
		return a
	}}
	s, _ := testHost(t, h)

	// Accepted, then abandoned: nothing runs.
	conn, _, line := answerConn(t, s, "list")
	if !strings.Contains(line, `"ok":true`) {
		t.Fatalf("accept %q", line)
	}
	conn.Close()
	// Accepted, then anything but the commitment: nothing runs.
	conn, _, _ = answerConn(t, s, "list")
	conn.Write([]byte("x"))
	buf := make([]byte, 1)
	if n, err := conn.Read(buf); n != 0 || err == nil {
		t.Errorf("after a wrong commitment the host sent %q, %v", buf[:n], err)
	}
	time.Sleep(50 * time.Millisecond)
	if n := runs.Load(); n != 0 {
		t.Fatalf("%d answers ran without a commitment", n)
	}

	conn, r, _ := answerConn(t, s, "invoke", "p/t")
	conn.Write([]byte{hostwire.Commit})
	head, err := mcp.ReadLine(r, maxHeader)
	if err != nil {
		t.Fatal(err)
	}
	var a hostwire.Answer
	if err := json.Unmarshal(head, &a); err != nil || a.Status != 1 || a.HandBack {
		t.Fatalf("answer %s: %v", head, err)
	}
	want := []hostwire.Part{{FD: 2, Len: 5}, {FD: 1, Len: 4}, {FD: 2, Len: 20}}
	if !slices.Equal(a.Parts, want) {
		t.Errorf("parts %v, want %v: in the order written", a.Parts, want)
	}
	body := make([]byte, 29)
	if _, err := io.ReadFull(r, body); err != nil {
		t.Fatal(err)
	}
	if want := "note\nout\nerr: invoke p/t A=1\n"; string(body) != want {
		t.Errorf("output %q, want %q", body, want)
	}
	if n := runs.Load(); n != 1 {
		t.Errorf("%d answers ran, want 1", n)
	}
	st, err := ask(context.Background(), s.Dir, OpStatus, time.Second)
	if err != nil || st.Answered != 1 {
		t.Errorf("status %+v, %v: want 1 answered", st, err)
	}
}

// A client that goes ends its answer's context; a panicking answer ends
// the connection without an answer, and the host goes on serving.
func TestAnswerClientGoneAndPanic(t *testing.T) {
	ended := make(chan struct{})
	h := &Host{Log: filepath.Join(t.TempDir(), LogName), Answer: func(ctx context.Context, req *hostwire.AnswerRequest) Answered {
		if req.Args[0] == "panic" {
			panic("boom")
		}
		<-ctx.Done()
		close(ended)
		return Answered{}
	}}
	s, _ := testHost(t, h)
	conn, _, _ := answerConn(t, s, "wait")
	conn.Write([]byte{hostwire.Commit})
	time.Sleep(20 * time.Millisecond)
	conn.Close()
	select {
	case <-ended:
	case <-time.After(5 * time.Second):
		t.Fatal("the answer went on after its client had gone")
	}

	conn, r, _ := answerConn(t, s, "panic")
	conn.Write([]byte{hostwire.Commit})
	if line, err := mcp.ReadLine(r, maxHeader); err == nil {
		t.Errorf("a panicking answer sent %q", line)
	}
	st, err := ask(context.Background(), s.Dir, OpStatus, time.Second)
	if err != nil {
		t.Fatalf("the host stopped serving after a panic: %v", err)
	}
	// The panic is counted, and written with its stack to the host's log.
	if st.Panics != 1 || st.Log != h.Log {
		t.Errorf("status after a panic: %+v", st)
	}
	log, _ := os.ReadFile(h.Log)
	if !strings.Contains(string(log), "panic answering an invocation (recovered): boom") || !strings.Contains(string(log), "runAnswer") {
		t.Errorf("the host's log after a panic:\n%s", log)
	}
}

// A host that answers no invocation says so at once, and a request with
// no invocation or a malformed environment is refused.
func TestAnswerRefused(t *testing.T) {
	s, _ := testHost(t, &Host{})
	_, _, line := answerConn(t, s, "list")
	if !strings.Contains(line, `"kind":"bad"`) || !strings.Contains(line, "answers no invocation") {
		t.Errorf("reply %q", line)
	}
	for _, req := range []string{
		`{"v":1,"op":"answer"}`,
		`{"v":1,"op":"answer","answer":{"args":["list"],"env":["NOEQUALS"]}}`,
	} {
		if _, err := DecodeRequest([]byte(req)); err == nil {
			t.Errorf("%s decoded", req)
		}
	}
}
