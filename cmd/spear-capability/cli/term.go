package cli

import (
	"context"
	"fmt"
	"io"
	"os"
	"strings"
	"syscall"

	"spear/gateway"
	"spear/intercept"
	"spear/internal/handoff"
	"spear/internal/hostwire"
	"spear/internal/procs"
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
		return answerUntilSignalled(t, rest)
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
	a := warm.Answered{}
	a.Status, a.HandBack, a.Release = gw.AnswerElsewhere(ctx, req.Args, a.Output.Writer(1), a.Output.Writer(2))
	return a
}

// answerUntilSignalled answers one invocation. A signal that ends a command
// ends the call instead, which is then recorded as interrupted, as when
// the session process answers for spear-term; the process then ends by
// that signal, having written nothing more.
func answerUntilSignalled(t *intercept.Shim, words []string) int {
	ctx, cancel := context.WithCancel(context.Background())
	defer cancel()
	caught, stop := procs.CatchEnding(cancel)
	defer stop()
	quiet := func(w io.Writer) io.Writer {
		return writerFunc(func(p []byte) (int, error) {
			if caught() != nil {
				return len(p), nil
			}
			return w.Write(p)
		})
	}
	status := t.Answer(ctx, words, quiet(t.Stdout), quiet(t.Stderr))
	if sig := caught(); sig != nil {
		procs.Reraise(sig)
	}
	return status
}

type writerFunc func([]byte) (int, error)

func (f writerFunc) Write(p []byte) (int, error) { return f(p) }
