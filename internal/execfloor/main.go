// Command execfloor is the least a Go shell shim can do: exec bash with its
// own arguments. The pass-through benchmark runs it as the floor that
// spear-term's start-up is measured against.
//
// With EXECFLOOR_CONFINE=1 it is the floor of a confining shim: it
// confines bash as spear-term does (the deployment's settings, the same
// policy) but reads nothing of the command line, so spear-term against it
// is the cost of reading the line alone.
package main

import (
	"os"
	"syscall"

	"spear/confine"
	"spear/deploy"
	"spear/realshell"
)

func main() {
	args := os.Args[1:]
	if len(args) > 0 && args[0] == confine.LauncherArg {
		os.Exit(confine.LauncherMain(args[1:]))
	}
	if os.Getenv("EXECFLOOR_CONFINE") == "1" {
		s, err := deploy.SettingsFrom(os.Getenv)
		c := realshell.NewConfiner(s, err)
		os.Exit(realshell.Replace(os.Args[0], args, os.Environ(), os.Getenv, os.Stderr, c, syscall.Exec))
	}
	err := syscall.Exec("/bin/bash", append([]string{"/bin/bash"}, args...), os.Environ())
	os.Stderr.WriteString("execfloor: " + err.Error() + "\n")
	os.Exit(127)
}
