// Package handoff is how spear-term hands what it does not pass through to
// the gateway's entry point: a binary beside it, executed in its place.
//
// spear-term's own binary links only what deciding that a line is ordinary
// and starting the real shell take. An invocation, a refusal and stream
// mode need the gateway: spear-term then executes
//
//	spear-answer Arg answer WORD…          answer one invocation
//	spear-capability Arg shell ARGV0 ARG…  be spear-term with these arguments
//
// with the same pid, standard files and environment. spear-answer is small:
// it has the session process, whose gateway is loaded already, answer the
// invocation (package entry), and hands it on to
//
//	spear-capability Arg answer WORD…
//
// whenever that cannot be done. The binaries are found beside the running
// executable, never through PATH; without spear-answer there, an
// invocation goes to spear-capability at once.
package handoff

import (
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"syscall"
)

// Arg is the first argument that makes spear-capability the entry point;
// what follows is a mode and its arguments.
const Arg = "__spear_term_handoff_5b1e"

// The modes of the entry point.
const (
	// Answer answers one invocation; its arguments are the words after the
	// command name.
	Answer = "answer"
	// Shell runs spear-term itself; its arguments are spear-term's argv[0]
	// and arguments.
	Shell = "shell"
)

// Binary is the file name of the gateway's entry point.
const Binary = "spear-capability"

// AnswerBinary is the file name of the quick entry point for invocations.
const AnswerBinary = "spear-answer"

// Path returns where the gateway's entry point is: beside the running
// executable.
func Path() (string, error) {
	return beside(Binary)
}

func beside(name string) (string, error) {
	self, err := os.Executable()
	if err != nil {
		return "", fmt.Errorf("cannot tell where spear-term itself is: %w", err)
	}
	return filepath.Join(filepath.Dir(self), name), nil
}

// TermBinary is the file name of spear-term.
const TermBinary = "spear-term"

// Installed returns the installed binaries that run outside the turn's
// confinement and that the turn must not be able to replace: the running
// executable, and spear-term, spear-capability and spear-answer beside
// it, those that exist. A turn that could write one of them would have its own code run,
// unconfined, by the next command.
func Installed() []string {
	self, err := os.Executable()
	if err != nil {
		return nil
	}
	dir := filepath.Dir(self)
	files := []string{self}
	for _, name := range []string{TermBinary, Binary, AnswerBinary} {
		path := filepath.Join(dir, name)
		if path == self {
			continue
		}
		if fi, err := os.Stat(path); err == nil && fi.Mode().IsRegular() {
			files = append(files, path)
		}
	}
	return files
}

// Exec replaces the process with the entry point in mode, given args and
// env: an invocation goes to spear-answer, when it is there. It returns
// only when that could not be done, with an error that says what to do.
func Exec(mode string, args, env []string) error {
	if mode == Answer {
		if path, err := beside(AnswerBinary); err == nil {
			argv := append([]string{path, Arg, mode}, args...)
			syscall.Exec(path, argv, env)
			// not there, or not runnable: the gateway's own entry point
			// answers
		}
	}
	return HandBack(append([]string{Arg, mode}, args...), env)
}

// HandBack replaces the process with spear-capability, given its
// arguments and env; it returns only when that could not be done, with an
// error that says what to do.
func HandBack(args, env []string) error {
	path, err := Path()
	if err != nil {
		return err
	}
	argv := append([]string{path}, args...)
	err = syscall.Exec(path, argv, env)
	if errors.Is(err, syscall.ENOENT) {
		return fmt.Errorf("the gateway's entry point %s is missing; spear-term needs %s installed beside it (make install puts both in place)", path, Binary)
	}
	return fmt.Errorf("cannot run the gateway's entry point %s: %w", path, err)
}

// Parse reads the arguments after Arg: the mode and its arguments.
func Parse(args []string) (mode string, rest []string, err error) {
	if len(args) == 0 {
		return "", nil, errors.New("no mode given")
	}
	switch args[0] {
	case Answer:
		return Answer, args[1:], nil
	case Shell:
		if len(args) < 2 {
			return "", nil, errors.New("shell: no argv[0] given")
		}
		return Shell, args[1:], nil
	}
	return "", nil, fmt.Errorf("unknown mode %q", args[0])
}
