// Package intercept decides what to do with each submission to a turn's
// terminal and carries it out: answer a spear-capability command, or hand
// everything else untouched to the real shell.
package intercept

import (
	"context"
	"fmt"
	"io"

	"spear/outcome"
	"spear/present"
	"spear/shellparse"
	"spear/turnshell"
)

// Answerer answers recognised invocations; the gateway is one.
type Answerer interface {
	// Answer runs one invocation, given its words after the command name,
	// writes its output and returns its exit status.
	Answer(ctx context.Context, args []string, stdout, stderr io.Writer) int
	// RecordRefusal records a submission refused before it reached the
	// gateway's own checks.
	RecordRefusal(ctx context.Context, args []string, text, reason string) error
}

// Refuse writes a refusal of a submission, with the command written the
// right way, and returns the refused exit status.
func Refuse(stderr io.Writer, reason, hint string) int {
	if hint != "" {
		hint = "write it alone on one line: " + hint
	}
	return present.WriteRefusal(stderr, reason, hint)
}

// Interceptor answers the submissions that are not ordinary.
type Interceptor struct {
	// Gateway answers invocations; nil means no gateway is configured.
	Gateway Answerer
	// Nested reports whether spear-term itself runs inside a turn's
	// shell: then it answers no invocation. It is asked only when a
	// submission is not ordinary, so a pass-through never pays for the
	// walk up the process tree; nil means never.
	Nested func() bool
}

// Respond answers a submission that Classify did not find ordinary and
// returns its exit status. Nothing of the submission is run.
func (ic *Interceptor) Respond(ctx context.Context, v shellparse.Verdict, stdout, stderr io.Writer) int {
	switch {
	case ic.Nested != nil && ic.Nested():
		// Inside a turn's shell nothing is answered, and nothing can be
		// recorded: the audit trail is out of reach there.
		fmt.Fprint(stderr, turnshell.NestedMessage)
		return outcome.ExitRefused
	case v.Kind == shellparse.Refused:
		if ic.Gateway != nil {
			if err := ic.Gateway.RecordRefusal(ctx, v.Args, v.Text, v.Refusal.Error()); err != nil {
				fmt.Fprintf(stderr, "%s: warning: %v\n", shellparse.Name, err)
			}
		}
		return Refuse(stderr, v.Refusal.Error(), v.Refusal.Hint)
	case ic.Gateway == nil:
		return Refuse(stderr, "no capability gateway is configured for this terminal", "")
	default:
		return ic.Gateway.Answer(ctx, v.Args, stdout, stderr)
	}
}
