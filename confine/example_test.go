package confine_test

import (
	"fmt"
	"os"

	"spear/confine"
)

// A binary that uses Command hands the launcher its arguments first thing in
// main, before anything else runs.
func ExampleLauncherMain() {
	if len(os.Args) > 1 && os.Args[1] == confine.LauncherArg {
		os.Exit(confine.LauncherMain(os.Args[2:]))
	}
	// ... the program proper ...
}

// Running a shell confined, with the deployment's configuration hidden and
// the turn file read-only.
func ExampleCommand() {
	p := confine.Policy{
		Hide:     []string{"/home/dev/.config/spear"},
		ReadOnly: []string{"/home/dev/.local/state/spear/turn.json"},
	}
	cmd, err := confine.Command(p, "/bin/bash", "--noprofile", "--norc")
	if err != nil {
		fmt.Fprintln(os.Stderr, err) // a path is missing, say
		return
	}
	cmd.Stdin, cmd.Stdout, cmd.Stderr = os.Stdin, os.Stdout, os.Stderr
	_ = cmd.Run()
}
