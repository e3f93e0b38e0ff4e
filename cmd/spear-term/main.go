// Command spear-term is a turn's terminal: a bash-compatible shell that
// answers spear-capability commands itself and hands every other command,
// untouched, to the real shell ($SPEAR_REAL_SHELL, default /bin/bash).
//
//	spear-term -c 'COMMAND' [argv0 [args…]]   one submission, like bash -c
//	spear-term [bash options]                 stream mode: submissions on stdin
package main

import (
	"os"

	"spear/cmd/spear-term/term"
)

func main() { os.Exit(term.Main()) }
