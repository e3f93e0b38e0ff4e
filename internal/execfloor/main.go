// Command execfloor is the least a Go shell shim can do: exec bash with its
// own arguments. The pass-through benchmark runs it as the floor that
// spear-term's start-up is measured against.
package main

import (
	"os"
	"syscall"
)

func main() {
	err := syscall.Exec("/bin/bash", append([]string{"/bin/bash"}, os.Args[1:]...), os.Environ())
	os.Stderr.WriteString("execfloor: " + err.Error() + "\n")
	os.Exit(127)
}
