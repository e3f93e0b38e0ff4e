// Package term is spear-term's pass-through path: it reads the command
// line, hands an ordinary command to the real shell, has the session
// process answer an invocation when one runs (package entry), and hands
// everything else to the gateway's entry point (package handoff). The binary's main
// calls Main, and tests run it in-process.
//
// It links no part of the gateway; TestPassThroughDeps keeps it so.
package term

import (
	"fmt"
	"os"
	"syscall"

	"spear/confine"
	"spear/deploy"
	"spear/entry"
	"spear/harness"
	"spear/internal/handoff"
	"spear/netwall"
	"spear/realshell"
	"spear/shellparse"
)

// Main runs spear-term with the process's arguments, environment and
// standard files and returns its exit status when it does not replace
// itself. Given confine.LauncherArg first, it is the launcher that
// confines the real shell.
func Main() int {
	args := os.Args[1:]
	if len(args) > 0 {
		switch args[0] {
		case confine.LauncherArg:
			return confine.LauncherMain(args[1:])
		case netwall.HolderArg:
			return netwall.HolderMain(args[1:])
		case netwall.KeeperArg:
			return netwall.KeeperMain(args[1:])
		}
	}
	sa := realshell.ParseArgs(args)
	mode, rest := handoff.Shell, append([]string{os.Args[0]}, args...)
	if sa.NoExec {
		// bash -n (or -o noexec) only reads: nothing is run, so nothing
		// is answered, and the shell gets it all as given, stdin too.
		return replace(args)
	}
	if sa.HasCommand || sa.Script {
		v := shellparse.Verdict{Kind: shellparse.Ordinary}
		var wrapper *harness.Match
		if sa.HasCommand {
			v, wrapper = harness.Classify(sa.Command)
		}
		switch {
		case v.Kind == shellparse.Ordinary:
			// bash FILE reads its commands from the file; its own
			// spear-capability commands meet the confinement and refuse.
			return replace(args)
		case v.Kind == shellparse.Invocation && wrapper != nil:
			// A harness's wrapper around an invocation: the gateway's
			// entry point runs the wrapper and answers the invocation at
			// its place (realshell.Meet), with the gateway in process.
		case v.Kind == shellparse.Invocation:
			// The session process answers, when it can; spear-capability
			// otherwise.
			if status, answered := entry.Answer(v.Args, os.Getenv, os.Environ(), os.Stdout, os.Stderr); answered {
				return status
			}
			mode, rest = handoff.Answer, v.Args
		}
	}
	err := handoff.Exec(mode, rest, os.Environ())
	fmt.Fprintf(os.Stderr, "spear-term: cannot answer this submission: %v\n", err)
	return 127
}

// replace hands the command line to the real shell, confined as the
// settings say.
func replace(args []string) int {
	s, err := deploy.SettingsFrom(os.Getenv)
	c := realshell.NewConfiner(s, err)
	return realshell.Replace(os.Args[0], args, os.Environ(), os.Getenv, os.Stderr, c, syscall.Exec)
}
