// Package entry is spear-term's quick way in for an invocation: it has the
// session process, whose gateway is loaded already, answer it, in
// spear-term's own process; whenever that cannot be done, spear-term hands
// the invocation to spear-capability (package handoff).
//
// It links no part of the gateway, so spear-term stays small
// (TestPassThroughDeps). It decides nothing: every check, the audit trail
// and the output are the gateway's, in the session process (docs/design.md,
// "The way in").
package entry

import (
	"bufio"
	"encoding/json"
	"fmt"
	"io"
	"os"
	"strings"
	"syscall"
	"time"

	"spear/deploy"
	"spear/internal/hostwire"
	"spear/internal/lineread"
	"spear/internal/procs"
	"spear/outcome"
	"spear/turnshell"
)

// acceptWait bounds how long the session process may take to accept an
// answer request before the invocation is handed on.
var acceptWait = 5 * time.Second

// maxRequest bounds an answer request; a larger one (a huge environment)
// is handed on.
const maxRequest = 1 << 20

// Answer has the session process answer the invocation words (the words
// after the command name) and writes its output. answered is false when
// nothing of the invocation ran: outside a turn, inside a turn's shell,
// with no session process to ask, or when it hands the invocation back
// (after the output written so far); the caller then answers it itself.
func Answer(words []string, getenv func(string) string, environ []string, stdout, stderr io.Writer) (status int, answered bool) {
	// Inside a turn's shell nothing is answered: spear-capability says so.
	if turnshell.Inside(getenv) {
		return 0, false
	}
	s, err := deploy.SettingsFrom(getenv)
	if err != nil || s.TurnFile == "" {
		return 0, false
	}
	// A turn file that cannot be used is spear-capability's to report;
	// its workspace, when it can, is absolute (deploy.LoadTurn), so the
	// session process, in a directory of its own, reads it alike.
	t, err := deploy.LoadTurn(s.TurnFile)
	if err != nil {
		return 0, false
	}
	req, err := json.Marshal(struct {
		V      int                    `json:"v"`
		Op     string                 `json:"op"`
		Answer hostwire.AnswerRequest `json:"answer"`
	}{hostwire.Version, hostwire.OpAnswer, hostwire.AnswerRequest{Args: words, Env: withTurnFile(environ, s.TurnFile)}})
	if err != nil || len(req) >= maxRequest {
		return 0, false
	}
	conn, err := dial(hostwire.SessionDir(s.StateDir, t.Session))
	if err != nil {
		return 0, false
	}
	defer conn.Close()
	r, ok := propose(conn, append(req, '\n'))
	if !ok {
		return 0, false
	}
	return receive(conn, r, stdout, stderr)
}

// withTurnFile is environ with SPEAR_TURN_FILE set to path, which is
// absolute: the session process runs in a directory of its own.
func withTurnFile(environ []string, path string) []string {
	out := make([]string, 0, len(environ)+1)
	for _, kv := range environ {
		if !strings.HasPrefix(kv, "SPEAR_TURN_FILE=") {
			out = append(out, kv)
		}
	}
	return append(out, "SPEAR_TURN_FILE="+path)
}

// dial connects to the socket of the session process of the session whose
// state directory is dir.
func dial(dir string) (*os.File, error) {
	path, d, err := hostwire.SocketPath(dir)
	if err != nil {
		return nil, err
	}
	if d != nil {
		defer d.Close()
	}
	fd, err := syscall.Socket(syscall.AF_UNIX, syscall.SOCK_STREAM|syscall.SOCK_CLOEXEC, 0)
	if err != nil {
		return nil, err
	}
	if err := syscall.Connect(fd, &syscall.SockaddrUnix{Name: path}); err != nil {
		syscall.Close(fd)
		return nil, err
	}
	// Non-blocking, the file takes deadlines.
	if err := syscall.SetNonblock(fd, true); err != nil {
		syscall.Close(fd)
		return nil, err
	}
	return os.NewFile(uintptr(fd), "session process"), nil
}

// propose sends the request and waits for it to be accepted, then commits
// to it. ok is false when nothing ran: the request was not accepted in
// time or at all, or the commitment could not be sent.
func propose(conn *os.File, req []byte) (*bufio.Reader, bool) {
	conn.SetDeadline(time.Now().Add(acceptWait))
	if _, err := conn.Write(req); err != nil {
		return nil, false
	}
	r := bufio.NewReaderSize(conn, 64<<10)
	line, err := lineread.Read(r, hostwire.MaxLine)
	if err != nil {
		return nil, false
	}
	var rep struct {
		OK bool `json:"ok"`
	}
	if json.Unmarshal(line, &rep) != nil || !rep.OK {
		return nil, false
	}
	if _, err := conn.Write([]byte{hostwire.Commit}); err != nil {
		return nil, false
	}
	conn.SetDeadline(time.Time{})
	return r, true
}

// receive reads the answer to a committed request and writes its output.
// A signal that would end the process (SIGINT, SIGTERM, SIGHUP, unless it
// was ignored from the start) closes the connection first, which ends the
// call in the session process, and then ends the process as it would have.
func receive(conn io.Closer, r *bufio.Reader, stdout, stderr io.Writer) (int, bool) {
	caught, stop := procs.CatchEnding(func() { conn.Close() })
	defer stop()
	lost := func(err error) (int, bool) {
		if sig := caught(); sig != nil {
			procs.Reraise(sig)
		}
		fmt.Fprintf(stderr, "%s: unavailable: the session process stopped answering (%v); the call may have run: its audit trail says\n", outcome.Command, err)
		return outcome.ExitUnavailable, true
	}
	line, err := lineread.Read(r, hostwire.MaxLine)
	if err != nil {
		return lost(err)
	}
	var a hostwire.Answer
	if err := json.Unmarshal(line, &a); err != nil || !validParts(a.Parts) {
		if len(line) > 64 {
			line = append(line[:64:64], "…"...)
		}
		return lost(fmt.Errorf("its answer does not decode: %q", line))
	}
	// Output that cannot be written is lost as spear-capability would
	// lose it; the answer still stands.
	for _, p := range a.Parts {
		w := stdout
		if p.FD == 2 {
			w = stderr
		}
		if _, err := io.CopyN(heedless{w}, r, int64(p.Len)); err != nil {
			return lost(err)
		}
	}
	if sig := caught(); sig != nil {
		procs.Reraise(sig)
	}
	if a.HandBack {
		return 0, false
	}
	return a.Status, true
}

// validParts says every part is a run of standard output or standard
// error of a length that can be.
func validParts(parts []hostwire.Part) bool {
	for _, p := range parts {
		if (p.FD != 1 && p.FD != 2) || p.Len < 0 {
			return false
		}
	}
	return true
}

// heedless writes to w and takes no notice of its errors, so that an
// error of the invocation's own output is never taken for one of the
// session process.
type heedless struct{ w io.Writer }

func (h heedless) Write(p []byte) (int, error) {
	h.w.Write(p)
	return len(p), nil
}
