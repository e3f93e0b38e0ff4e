// Command spear-capability is the operators' command: it lists, describes
// and checks the registered providers, prints a turn's context block and
// reads the audit trail. Inside a turn, the same words are answered by
// spear-term, which executes this binary in its place with a hidden first
// argument (package handoff); it is also the session process that keeps
// servers warm.
package main

import (
	"os"

	"spear/cmd/spear-capability/cli"
)

func main() { os.Exit(cli.Main()) }
