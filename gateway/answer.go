package gateway

import (
	"context"
	"errors"
	"fmt"
	"io"

	"spear/outcome"
	"spear/present"
)

// answer runs one command's words. Every refusal it makes is recorded as
// one capability_refused event: here for the words themselves, in the
// turn session's checks for the rest (docs/audit.md). It returns the exit
// status and what ends the call's use of its server once the result is
// delivered (never nil); the error is ErrHandBack alone, when a gateway
// answering elsewhere leaves the command to the invoking process.
func answer(ctx context.Context, g *Gateway, args []string, stdout, stderr io.Writer) (int, func(), error) {
	status, release, err := answerWords(ctx, g, args, stdout, stderr)
	if release == nil {
		release = func() {}
	}
	return status, release, err
}

func answerWords(ctx context.Context, g *Gateway, args []string, stdout, stderr io.Writer) (int, func(), error) {
	refuse := func(why, hint string) (int, func(), error) {
		g.RecordRefusal(ctx, args, "", why)
		return present.WriteRefusal(stderr, why, hint), nil, nil
	}
	if len(args) == 0 {
		return refuse("spear-capability needs a command: list, describe or invoke", "spear-capability list")
	}
	switch args[0] {
	case "help", "-h", "--help":
		fmt.Fprint(stdout, present.TurnUsage)
		return outcome.ExitOK, nil, nil
	case "list":
		if len(args) != 1 {
			return refuse("list takes no arguments", "spear-capability list")
		}
	case "describe":
		if len(args) != 2 {
			return refuse("describe takes one capability name", "spear-capability describe <provider>/<tool>")
		}
	case "invoke":
		if len(args) < 2 || len(args) > 3 {
			return refuse(fmt.Sprintf("invoke takes a capability name and one JSON object, found %d words; put the whole JSON object in single quotes", len(args)-1), outcome.InvokeForm)
		}
	case "context", "check", "audit", "version", "completion":
		return refuse(fmt.Sprintf("%s is an operator's command and is not answered inside a turn", present.OneLine(args[0], 40)), "spear-capability list")
	default:
		return refuse(fmt.Sprintf("%q is not a command inside a turn; use list, describe or invoke", present.OneLine(args[0], 40)), "spear-capability list")
	}
	ts, err := g.Open(ctx)
	if err != nil {
		g.RecordRefusal(ctx, args, "", present.Detail(err))
		return present.WriteError(stderr, err), nil, nil
	}
	status, release, err := answerTurn(ctx, ts, args, stdout, stderr)
	// The turn session stays open until the call's use of its server has
	// ended, which is recorded in its trail.
	if release == nil {
		ts.Close()
		return status, nil, err
	}
	return status, func() { release(); ts.Close() }, err
}

func answerTurn(ctx context.Context, ts *TurnSession, args []string, stdout, stderr io.Writer) (int, func(), error) {
	if args[0] == "list" || args[0] == "describe" {
		// What invoke would find, list and describe show: a provider
		// whose server failed since the last command is unavailable.
		ts.catchUpFailures(ctx)
	}
	ts.takeNotes()
	for _, n := range ts.Notes {
		fmt.Fprintf(stderr, "%s: note: %s\n", outcome.Command, n)
	}
	switch args[0] {
	case "list":
		if !ts.State.Offered {
			fmt.Fprintf(stdout, "No external capabilities are offered to this turn: %s.\n", ts.State.Why)
			return outcome.ExitOK, nil, nil
		}
		fmt.Fprint(stdout, present.IndexText(ts.State.Family))
		return outcome.ExitOK, nil, nil
	case "describe":
		c, err := ts.Describe(args[1])
		if err != nil {
			return present.WriteError(stderr, err), nil, nil
		}
		fmt.Fprint(stdout, present.DescribeText(c))
		return outcome.ExitOK, nil, nil
	default:
		argText := ""
		if len(args) == 3 {
			argText = args[2]
		}
		out, err := ts.Invoke(ctx, args[1], argText)
		if errors.Is(err, ErrHandBack) {
			return outcome.ExitRefused, nil, err
		}
		if err != nil {
			return present.WriteError(stderr, err), nil, nil
		}
		fmt.Fprint(stdout, out.Framed)
		if out.Unrecorded != "" {
			// The turn is not told where the trail is (see auditRefusal).
			fmt.Fprintln(stderr, "spear-capability: the call ran, but its end could not be recorded in the audit trail, which has its start; tell the operator")
		}
		return out.Status, out.Release, nil
	}
}
