// Package term wires spear-term's parts together; the binary's main calls
// Main, and tests run it in-process.
package term

import (
	"context"
	"os"
	"syscall"

	"spear/confine"
	"spear/gateway"
	"spear/intercept"
	"spear/turnshell"
	"spear/warm"
)

// Main runs spear-term with the process's arguments, environment and
// standard files and returns its exit status. Given warm.HostArg first, it
// is a session's host instead; given confine.LauncherArg, the launcher
// that confines the shell of stream mode.
func Main() int {
	if len(os.Args) > 1 && os.Args[1] == warm.HostArg {
		return warm.HostMain(os.Args[2:])
	}
	if len(os.Args) > 1 && os.Args[1] == confine.LauncherArg {
		return confine.LauncherMain(os.Args[2:])
	}
	nested := func() bool { return turnshell.Inside(os.Getenv) }
	gw := gateway.New(os.Getenv)
	gw.Warm = warm.Self()
	ic := &intercept.Interceptor{Gateway: gw, Nested: nested}
	t := &intercept.Shim{
		Argv0: os.Args[0], Args: os.Args[1:], Env: os.Environ(), Getenv: os.Getenv,
		Stdin: os.Stdin, Stdout: os.Stdout, Stderr: os.Stderr,
		Interceptor: ic, Exec: syscall.Exec,
		Confiner: intercept.NewConfiner(gw.Settings, gw.SettingsErr),
	}
	return t.Run(context.Background())
}
