package gateway

import (
	"context"
	"errors"
	"fmt"
	"strings"
	"testing"
	"time"

	"spear/deploy"
	"spear/mcp"
)

// TestFailure: each kind of error is told to the turn as what it is, a
// cancelled request is not a timeout, and a closed client did not break
// the protocol.
func TestFailure(t *testing.T) {
	p := &deploy.Provider{ID: "p"}
	for _, tc := range []struct {
		phase string
		err   error
		want  string
	}{
		{"start", &mcp.StartError{Command: "x", Err: errors.New("no such file")}, "could not be started"},
		{"call", &mcp.TimeoutError{Method: "tools/call", After: 2 * time.Second}, "did not answer tools/call within 2 s"},
		{"initialize", &mcp.VersionError{Got: "2024-11-05"}, `answered protocol version "2024-11-05", and only 2025-06-18 is supported`},
		{"list", &mcp.ExitError{State: "exit status 3", Stderr: "secret path"}, "exited during tools/list"},
		{"call", fmt.Errorf("calling: %w", mcp.ErrClosed), "was closed during tools/call"},
		{"call", &mcp.ProtocolError{Msg: "garbage"}, "broke the protocol during tools/call"},
		{"list", &mcp.RPCError{Code: -1, Message: "no"}, "answered tools/list with an error"},
		{"call", fmt.Errorf("x: %w", context.Canceled), "was cancelled during tools/call"},
		{"call", fmt.Errorf("x: %w", context.DeadlineExceeded), "ran out of time during tools/call"},
		{"call", errors.New("odd"), "failed during tools/call"},
	} {
		u := failure(p, tc.phase, tc.err)
		if u.Reason != tc.want || u.Provider != "p" || u.Phase != tc.phase {
			t.Errorf("%v: %+v, want reason %q", tc.err, u, tc.want)
		}
		if strings.Contains(u.Detail, "secret path") {
			t.Errorf("%v: the server's stderr reached the detail: %q", tc.err, u.Detail)
		}
	}
}
