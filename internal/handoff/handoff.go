// Package handoff is how spear-term hands what it does not pass through to
// the gateway's entry point: the spear-capability binary beside it, executed
// in its place.
//
// spear-term's own binary links only what deciding that a line is ordinary,
// starting the real shell and asking the session process for an answer
// (package entry) take. An invocation the session process cannot answer, a
// refusal and stream mode need the gateway: spear-term then executes
//
//	spear-capability Arg answer WORD…      answer one invocation
//	spear-capability Arg shell ARGV0 ARG…  be spear-term with these arguments
//
// with the same pid, standard files and environment. The binary is found
// beside spear-term's own executable, never through PATH.
package handoff

import (
	"errors"
	"fmt"
	"io/fs"
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

// Path returns where the gateway's entry point is: beside the running
// executable.
func Path() (string, error) {
	self, err := os.Executable()
	if err != nil {
		return "", fmt.Errorf("cannot tell where spear-term itself is: %w", err)
	}
	return filepath.Join(filepath.Dir(self), Binary), nil
}

// TermBinary is the file name of spear-term.
const TermBinary = "spear-term"

// Installed returns the installed binaries that run outside the turn's
// confinement and that the turn must not be able to replace: the running
// executable, and spear-term and spear-capability beside it, those that
// exist. A turn that could write one of them would have its own code run,
// unconfined, by the next command.
func Installed() []string {
	self, err := os.Executable()
	if err != nil {
		return nil
	}
	dir := filepath.Dir(self)
	files := []string{self}
	for _, name := range []string{TermBinary, Binary} {
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

// MissingEntry returns spear-term's directory when the entry point is not
// beside it (a spear-term installed alone): the turn must not be able to
// put one there, which the next invocation would run outside the
// confinement. It returns "" otherwise, and in spear-capability itself.
func MissingEntry() string {
	self, err := os.Executable()
	if err != nil || filepath.Base(self) == Binary {
		return ""
	}
	dir := filepath.Dir(self)
	if _, err := os.Lstat(filepath.Join(dir, Binary)); errors.Is(err, fs.ErrNotExist) {
		return dir
	}
	return ""
}

// WrapperVar and SubmissionVar tell the entry point, for an invocation
// found inside a harness's wrapper, which wrapper it was (harness.Wrapper's
// Name) and the whole submission, for the audit trail.
const (
	WrapperVar    = "SPEAR_TERM_WRAPPER"
	SubmissionVar = "SPEAR_TERM_SUBMISSION"
)

// Exec replaces the process with the entry point in mode, given args and
// env. It returns only when that could not be done, with an error that
// says what to do.
func Exec(mode string, args, env []string) error {
	path, err := Path()
	if err != nil {
		return err
	}
	argv := append([]string{path, Arg, mode}, args...)
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
