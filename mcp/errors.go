package mcp

import (
	"errors"
	"fmt"
	"time"
)

// VersionError reports a server that answered initialize with a protocol
// version other than ProtocolVersion.
type VersionError struct {
	Got string
}

func (e *VersionError) Error() string {
	return fmt.Sprintf("server answered protocol version %q; only %s is supported", e.Got, ProtocolVersion)
}

// TimeoutError reports a request that got no answer within
// Options.Timeout. The server has been sent notifications/cancelled (except
// for initialize) and the connection closed. A request whose ctx ends first
// returns an error wrapping ctx.Err() instead, never a *TimeoutError.
type TimeoutError struct {
	Method string
	After  time.Duration
}

func (e *TimeoutError) Error() string {
	return fmt.Sprintf("%s did not answer within %s", e.Method, e.After)
}

// ProtocolError reports a message or a sequence of messages that breaks the
// protocol: a line that is JSON but not JSON-RPC, a batch, an oversized
// message, more lines that are not JSON at all than a client skips (see
// SkippedLines), a pagination that does not end.
type ProtocolError struct {
	Msg string
}

func (e *ProtocolError) Error() string { return "protocol error: " + e.Msg }

// RPCError is a JSON-RPC error response from the server.
type RPCError struct {
	Method  string
	Code    int
	Message string
}

func (e *RPCError) Error() string {
	return fmt.Sprintf("%s failed: server error %d: %s", e.Method, e.Code, e.Message)
}

// ExitError reports a server whose output ended, usually because it exited,
// while the client still expected an answer. Stderr is the bounded tail of
// what the server wrote to its stderr.
type ExitError struct {
	// State says how the process ended, such as "exit status 1", or
	// "still running"; over a connection (NewClient), how the connection
	// ended, such as "connection closed".
	State  string
	Stderr string
}

func (e *ExitError) Error() string {
	msg := "server closed its output (" + e.State + ")"
	if e.Stderr != "" {
		msg += "; its stderr ends: " + e.Stderr
	}
	return msg
}

// StartError reports a server that could not be started.
type StartError struct {
	Command string
	Err     error
}

func (e *StartError) Error() string { return fmt.Sprintf("starting %s: %v", e.Command, e.Err) }

func (e *StartError) Unwrap() error { return e.Err }

// ErrClosed is returned by requests on a client that has been closed.
var ErrClosed = errors.New("client is closed")
