// Package turnshell is the contract between spear-term and the shell it
// runs for a turn: the marker every child carries, how a process tells it
// runs inside a turn's shell, and what a spear-capability reached through
// the shell says instead of acting.
//
// Neither binary acts as a gateway inside a turn's shell. The marker and
// the ancestor check catch a spear-capability that the shell itself runs
// (through a pipe, eval, xargs, bash -c…); what makes the rule hold against
// a turn that removes them is the confinement (docs/design.md,
// "Confinement"). This package links nothing of the shell parser.
package turnshell

import (
	"os"
	"strings"

	"spear/confine"
	"spear/internal/procs"
	"spear/outcome"
)

// Marker is the environment variable every child of spear-term carries.
const Marker = "SPEAR_TURN_SHELL"

// TermName is the command name of spear-term, looked for among ancestors.
const TermName = "spear-term"

// gatewayComm is the command name of spear-capability as the kernel keeps
// it (15 bytes at most): spear-term in stream mode runs as that binary
// (package handoff), so it is looked for among ancestors too.
const gatewayComm = "spear-capabilit"

// Inside reports whether this process runs inside a turn's shell: it is
// inside the confinement (which the turn cannot leave or forge, see
// confine.Inside), the marker is in its environment, or an ancestor
// process is spear-term or spear-capability (which spear-term becomes to
// answer an invocation or to run stream mode).
func Inside(getenv func(string) string) bool {
	if getenv(Marker) != "" || confine.Inside() {
		return true
	}
	for _, name := range procs.Ancestors(os.Getpid()) {
		if name == TermName || name == gatewayComm {
			return true
		}
	}
	return false
}

// NestedMessage is what a spear-capability reached through the shell says.
const NestedMessage = outcome.Command + " was run by the turn's shell (through a pipe, a script, eval, xargs, bash -c, a variable or the like), so it does nothing.\n" +
	"It is answered only when it stands alone at a command position of a submission, on one line:\n" +
	"  " + outcome.InvokeForm + "\n"

// ChildEnv is env with the marker set, for the shell spear-term starts.
func ChildEnv(env []string) []string {
	out := make([]string, 0, len(env)+1)
	for _, kv := range env {
		if !strings.HasPrefix(kv, Marker+"=") {
			out = append(out, kv)
		}
	}
	return append(out, Marker+"=1")
}
