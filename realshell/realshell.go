// Package realshell starts the real shell a turn's commands go to: it reads
// bash's command line, finds the shell, and runs it confined away from the
// deployment.
//
// It is spear-term's pass-through path and links nothing of the gateway:
// an ordinary command pays only for reading its line (docs/design.md,
// "Two binaries").
package realshell

import (
	"fmt"
	"io"
	"os/exec"
	"path/filepath"
	"strings"

	"golang.org/x/sys/unix"

	"spear/turnshell"
)

// Path returns the shell ordinary submissions go to: $SPEAR_REAL_SHELL,
// else /bin/bash.
func Path(getenv func(string) string) string {
	if s := getenv("SPEAR_REAL_SHELL"); s != "" {
		return s
	}
	return "/bin/bash"
}

// Confiner starts the real shell, and so everything it starts, confined
// away from the deployment's files and processes (docs/security.md).
type Confiner interface {
	// Exec replaces the process with path, confined; it returns only on
	// failure, when nothing has run.
	Exec(path string, argv, env []string) error
	// Command returns a command that starts path confined; the caller
	// sets its standard files, extra files and environment.
	Command(path string, args ...string) (*exec.Cmd, error)
}

// Replace runs the real shell, given the very same arguments spear-term
// got: stdin, signals and exit status as running the shell directly.
// argv0 is how spear-term was invoked; one that starts with "-" makes a
// login shell, as bash sees it. The shell runs confined by c (under the
// confinement's launcher, a child that ends the shell's whole tree should
// spear-term be killed: see confine.Exec), or through exec, with the same
// pid, when c is nil. Replace returns only when
// the shell could not be started, with the exit status to report, having
// said why on stderr.
func Replace(argv0 string, args, env []string, getenv func(string) string, stderr io.Writer, c Confiner, exec func(path string, argv, env []string) error) int {
	shell := Path(getenv)
	first := shell
	if strings.HasPrefix(filepath.Base(argv0), "-") {
		first = "-" + filepath.Base(shell)
	}
	argv, env := append([]string{first}, args...), turnshell.ChildEnv(env)
	if c != nil {
		// Said here, as the exec below says it unconfined: the
		// confinement's launcher executes the shell, and could only say
		// it bare.
		if status := cannotRun(shell, stderr); status != 0 {
			return status
		}
		err := c.Exec(shell, argv, env)
		fmt.Fprintf(stderr, "spear-term: cannot start the real shell %s confined: %v (nothing ran; SPEAR_CONFINE=off runs it unconfined, at the risk docs/security.md describes)\n", shell, err)
		return 126
	}
	err := exec(shell, argv, env)
	fmt.Fprintf(stderr, "spear-term: cannot run the real shell %s: %v (set SPEAR_REAL_SHELL to a bash)\n", shell, err)
	return 127
}

// cannotRun says on stderr why shell cannot be executed and returns the
// status for it (127 not found, 126 otherwise), or returns 0 when it can.
// The confinement's launcher executes the shell, and could only say it
// bare.
func cannotRun(shell string, stderr io.Writer) int {
	err := unix.Access(shell, unix.X_OK)
	if err == nil {
		return 0
	}
	fmt.Fprintf(stderr, "spear-term: cannot run the real shell %s: %v (set SPEAR_REAL_SHELL to a bash)\n", shell, err)
	if err == unix.ENOENT {
		return 127
	}
	return 126
}
