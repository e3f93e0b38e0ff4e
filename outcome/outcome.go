// Package outcome defines what an answered spear-capability command comes
// to: its exit statuses, and the refusal and unavailable errors that every
// layer, from the shell parser to the operators' command, returns.
//
// See docs/design.md, "Contracts".
package outcome

import (
	"errors"
	"fmt"
)

// Exit statuses of an answered spear-capability command, as a turn sees them.
const (
	ExitOK          = 0 // a result, framed on stdout
	ExitToolError   = 1 // the tool reported an error (isError), framed on stdout
	ExitRefused     = 2 // refused: spear-capability: refused: <why>, on stderr
	ExitUnavailable = 3 // the provider is unavailable, on stderr
)

// Refusal is a refused command: what is wrong and, where it is knowable,
// the command written the right way.
type Refusal struct {
	// Why says what is wrong: lower case, no final period.
	Why string
	// Hint is the command written the right way, or empty.
	Hint string
	// Line and Col place the problem in a submission's text; zero when it
	// concerns the whole text.
	Line, Col int
	// Detail, when set, is the cause in full for the operator; it may name
	// the deployment's paths and never reaches the turn.
	Detail string
}

func (r *Refusal) Error() string {
	if r.Line > 0 {
		return fmt.Sprintf("%s (line %d, column %d)", r.Why, r.Line, r.Col)
	}
	return r.Why
}

// Refused returns a *Refusal with a formatted reason and a hint.
func Refused(hint, format string, args ...any) *Refusal {
	return &Refusal{Why: fmt.Sprintf(format, args...), Hint: hint}
}

// Unavailable is a provider left out of a turn, and why. It is kept in the
// turn's state, so it has JSON tags.
type Unavailable struct {
	Provider string `json:"provider"`
	// Phase is where it failed: start, initialize, list or call.
	Phase string `json:"phase"`
	// Reason is shown to the turn: never a command, a path or stderr.
	Reason string `json:"reason"`
	// Detail is the cause in full, for the audit trail and the operator.
	Detail string `json:"detail"`
}

func (u *Unavailable) Error() string { return u.Provider + ": " + u.Reason }

// Status returns the exit status an error from answering a command comes
// to: ExitUnavailable for an *Unavailable, ExitRefused for anything else
// (a *Refusal, or trouble the turn is refused over), ExitOK for nil.
func Status(err error) int {
	var u *Unavailable
	switch {
	case err == nil:
		return ExitOK
	case errors.As(err, &u):
		return ExitUnavailable
	default:
		return ExitRefused
	}
}

// Command is the name a turn types.
const Command = "spear-capability"

// InvokeForm shows the form of an invocation.
const InvokeForm = Command + " invoke <provider>/<tool> '<arguments as one JSON object>'"

// ListForm shows how a turn sees what it is offered.
const ListForm = Command + " list"
