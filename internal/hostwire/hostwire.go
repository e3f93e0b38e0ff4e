// Package hostwire is what a session process and the processes that reach
// it agree on without the rest of package warm: where its socket is, the
// header protocol's version, and the messages of the answer operation, by
// which spear-term's entry point has the session process answer an
// invocation (package entry).
//
// An answer goes:
//
//	client: {"v":1,"op":"answer","answer":{"args":[…],"env":[…]}}\n
//	host:   {"ok":true}\n                     (or {"ok":false,"error":…}\n)
//	client: one byte, Commit                  (the client is committed)
//	host:   {"status":N,"hand_back":B,"parts":[{"fd":1,"len":X},{"fd":2,"len":Y},…]}\n,
//	        then the parts' bytes, in the order they were written
//
// Until the client has sent Commit, nothing of the invocation has run: a
// client that gives up before then may answer it elsewhere. A host that
// reads anything but Commit, or nothing, runs nothing.
package hostwire

import (
	"io"
	"os"
	"path/filepath"
	"strconv"
	"syscall"
)

// Version is the header protocol's version.
const Version = 1

// SocketName is the session process's socket, in the session's state
// directory.
const SocketName = "host.sock"

// OpAnswer is the operation that has the session process answer one
// invocation.
const OpAnswer = "answer"

// Commit is the byte by which a client commits to an answer.
const Commit = '!'

// AnswerRequest is an invocation to answer.
type AnswerRequest struct {
	// Args are the words after the command name.
	Args []string `json:"args"`
	// Env is the invoking process's environment, SPEAR_TURN_FILE made
	// absolute: the gateway is configured from it alone.
	Env []string `json:"env"`
}

// Answer says how an invocation was answered; its output follows it.
type Answer struct {
	// Status is the exit status.
	Status int `json:"status"`
	// HandBack says the invocation is left to the client, which answers
	// it itself after showing the output (nothing of the call ran).
	HandBack bool `json:"hand_back,omitempty"`
	// Parts are the runs of output that follow, in the order they were
	// written.
	Parts []Part `json:"parts"`
}

// Part is a run of output on one descriptor: 1 (standard output) or 2
// (standard error).
type Part struct {
	FD  int `json:"fd"`
	Len int `json:"len"`
}

// maxParts bounds the runs an Output keeps apart; past it, what is
// written joins the last run of its descriptor.
const maxParts = 256

// Output keeps what is written to standard output and standard error, in
// the order it is written, so that a client shows it as the invoking
// process would have written it. Its zero value is ready to use.
type Output struct {
	parts []Part
	data  [][]byte
}

// Writer is the writer for descriptor fd (1 or 2).
func (o *Output) Writer(fd int) io.Writer { return outputWriter{o, fd} }

type outputWriter struct {
	o  *Output
	fd int
}

func (w outputWriter) Write(p []byte) (int, error) {
	o := w.o
	if len(p) == 0 {
		return 0, nil
	}
	last := len(o.parts) - 1
	switch {
	case last >= 0 && o.parts[last].FD == w.fd:
	case len(o.parts) < maxParts:
		o.parts = append(o.parts, Part{FD: w.fd})
		o.data = append(o.data, nil)
		last++
	default:
		// Full: runs alternate between the two descriptors, so the one
		// before the last is this descriptor's.
		last--
	}
	o.parts[last].Len += len(p)
	o.data[last] = append(o.data[last], p...)
	return len(p), nil
}

// Parts are the runs kept, in order.
func (o *Output) Parts() []Part { return o.parts }

// Bytes is every run's bytes, in order.
func (o *Output) Bytes() []byte {
	var b []byte
	for _, d := range o.data {
		b = append(b, d...)
	}
	return b
}

// MaxLine bounds the header lines a client reads.
const MaxLine = 64 << 10

// SocketPath returns the path by which the socket in dir is reached, and a
// directory to close once it has been used (nil when there is none). A
// path too long for a socket address (108 bytes) is reached through the
// directory's descriptor in /proc/self/fd.
func SocketPath(dir string) (string, *os.File, error) {
	path := filepath.Join(dir, SocketName)
	if len(path) < 100 {
		return path, nil, nil
	}
	d, err := os.OpenFile(dir, syscall.O_RDONLY|syscall.O_DIRECTORY|syscall.O_CLOEXEC, 0)
	if err != nil {
		return "", nil, err
	}
	return "/proc/self/fd/" + strconv.Itoa(int(d.Fd())) + "/" + SocketName, d, nil
}

// SessionDir is the state directory of session under stateDir.
func SessionDir(stateDir, session string) string {
	return filepath.Join(stateDir, "sessions", session)
}
