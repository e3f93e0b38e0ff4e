package gateway

import (
	"context"
	"fmt"
	"io"

	"spear/outcome"
	"spear/present"
)

// answer runs one command's words. Every refusal it makes is recorded as
// one capability_refused event: here for the words themselves, in the
// turn session's checks for the rest (docs/audit.md).
func answer(ctx context.Context, g *Gateway, args []string, stdout, stderr io.Writer) int {
	refuse := func(why, hint string) int {
		g.RecordRefusal(ctx, args, why)
		return present.WriteRefusal(stderr, why, hint)
	}
	if len(args) == 0 {
		return refuse("spear-capability needs a command: list, describe or invoke", "spear-capability list")
	}
	switch args[0] {
	case "help", "-h", "--help":
		fmt.Fprint(stdout, present.TurnUsage)
		return outcome.ExitOK
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
		g.RecordRefusal(ctx, args, present.Detail(err))
		return present.WriteError(stderr, err)
	}
	defer ts.Close()
	ts.takeNotes()
	for _, n := range ts.Notes {
		fmt.Fprintf(stderr, "%s: note: %s\n", outcome.Command, n)
	}
	switch args[0] {
	case "list":
		if !ts.State.Offered {
			fmt.Fprintf(stdout, "No external capabilities are offered to this turn: %s.\n", ts.State.Why)
			return outcome.ExitOK
		}
		fmt.Fprint(stdout, present.IndexText(ts.State.Family))
		return outcome.ExitOK
	case "describe":
		c, err := ts.Describe(args[1])
		if err != nil {
			return present.WriteError(stderr, err)
		}
		fmt.Fprint(stdout, present.DescribeText(c))
		return outcome.ExitOK
	default:
		argText := ""
		if len(args) == 3 {
			argText = args[2]
		}
		out, err := ts.Invoke(ctx, args[1], argText)
		if err != nil {
			return present.WriteError(stderr, err)
		}
		fmt.Fprint(stdout, out.Framed)
		out.Release() // after the result: stopping a server never delays it
		return out.Status
	}
}
