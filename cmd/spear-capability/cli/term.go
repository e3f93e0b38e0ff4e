package cli

import (
	"context"
	"fmt"
	"os"
	"syscall"

	"spear/gateway"
	"spear/intercept"
	"spear/internal/handoff"
	"spear/outcome"
	"spear/realshell"
	"spear/turnshell"
	"spear/warm"
)

// termMain is the entry point spear-term hands to (package handoff), given
// the arguments after handoff.Arg: it answers one invocation, or runs
// spear-term itself (stream mode, a refused line) with the gateway in
// process. Inside a turn's shell it answers nothing, as spear-term would
// not: the nested check runs before any invocation is answered.
func termMain(args []string) int {
	mode, rest, err := handoff.Parse(args)
	if err != nil {
		fmt.Fprintf(os.Stderr, "spear-capability: %s is spear-term's way in and %v; run spear-term instead\n", handoff.Arg, err)
		return outcome.ExitRefused
	}
	gw := gateway.New(os.Getenv)
	gw.Warm = warm.Self()
	t := &intercept.Shim{
		Argv0: os.Args[0], Env: os.Environ(), Getenv: os.Getenv,
		Stdin: os.Stdin, Stdout: os.Stdout, Stderr: os.Stderr,
		Interceptor: &intercept.Interceptor{Gateway: gw, Nested: func() bool { return turnshell.Inside(os.Getenv) }},
		Exec:        syscall.Exec,
	}
	if mode == handoff.Answer {
		return t.Answer(context.Background(), rest)
	}
	// Only a shell needs confining; an answer starts none.
	t.Confiner = realshell.NewConfiner(gw.Settings, gw.SettingsErr)
	t.Argv0, t.Args = rest[0], rest[1:]
	return t.Run(context.Background())
}
