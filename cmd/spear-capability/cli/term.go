package cli

import (
	"bytes"
	"context"
	"fmt"
	"os"
	"strings"
	"syscall"

	"spear/gateway"
	"spear/intercept"
	"spear/internal/handoff"
	"spear/internal/hostwire"
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

// hostAnswer is how a session process answers an invocation that
// spear-term's entry point (package entry) hands it: with a gateway
// configured from the invoking process's environment alone, its output
// kept until the answer is complete, and a command that would ask a person
// for confirmation handed back, untouched, for the invoking process to ask.
func hostAnswer(ctx context.Context, req *hostwire.AnswerRequest) warm.Answered {
	env := make(map[string]string, len(req.Env))
	for _, kv := range req.Env {
		if k, v, ok := strings.Cut(kv, "="); ok {
			env[k] = v
		}
	}
	gw := gateway.New(func(k string) string { return env[k] })
	gw.Warm = warm.Self()
	gw.Elsewhere = true
	var stdout, stderr bytes.Buffer
	status, handBack, release := gw.AnswerElsewhere(ctx, req.Args, &stdout, &stderr)
	return warm.Answered{Status: status, HandBack: handBack, Stdout: stdout.Bytes(), Stderr: stderr.Bytes(), Release: release}
}
