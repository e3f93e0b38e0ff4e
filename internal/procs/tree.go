package procs

import (
	"bufio"
	"errors"
	"fmt"
	"io"
	"os"
	"os/exec"
	"strconv"
	"strings"
	"syscall"
	"time"
)

// Program is what StartTree starts.
type Program struct {
	// Path is the executable; a relative one is found from Dir.
	Path string
	// Args is its argument list, Args[0] included.
	Args []string
	// Env is its whole environment; nil is an empty one.
	Env []string
	// Dir is the directory it starts in; empty means this process's.
	Dir string
	// Stdin, Stdout and Stderr are its descriptors 0, 1 and 2 (nil is
	// /dev/null); it gets no other.
	Stdin, Stdout, Stderr *os.File
}

// Tree is a program started under a reaper of its own, together with every
// process it starts. The reaper is a re-execution of the running binary
// (this package's init takes it over before main runs) that makes itself
// a child subreaper and starts the program in a process group of its own:
// whatever the program starts stays below the reaper, in whatever process
// group or session it moves to and whichever of its parents exits, because
// an orphan is handed to the nearest subreaper above it rather than to
// init. When the program exits, the reaper kills everything left below it
// and exits with the program's status, so Exited means the whole tree is
// gone. The reaper starts nothing else, so nothing it finds below itself
// belongs to anyone else. (The package's documentation says what stays out
// of reach.)
type Tree struct {
	cmd     *exec.Cmd
	pid     int
	exited  chan struct{}
	waitErr error
}

// StartTree starts p under a reaper and returns once p has been started,
// or with the error starting it met: an *os.PathError as os/exec would
// return for an executable that is missing, say. Should this process die,
// the reaper kills the tree at once.
func StartTree(p Program) (*Tree, error) {
	if p.Path == "" || len(p.Args) == 0 {
		return nil, errors.New("no program to start: the path or the argument list is empty")
	}
	repR, repW, err := os.Pipe()
	if err != nil {
		return nil, err
	}
	defer repR.Close()
	cmd := &exec.Cmd{
		Path:       "/proc/self/exe",
		Args:       append([]string{p.Args[0], reaperArg, p.Path}, p.Args...),
		Env:        p.Env,
		Dir:        p.Dir,
		ExtraFiles: []*os.File{repW},
		// The reaper is in a session (so a group, and an autogroup) of
		// its own, apart from the program's and its starter's: nothing
		// meant for the program's group reaches it, and a turn that
		// renices its own session's autogroup does not slow it. SIGHUP,
		// its parent-death signal, tells it to kill the tree at once.
		SysProcAttr: &syscall.SysProcAttr{Setsid: true, Pdeathsig: syscall.SIGHUP},
	}
	if p.Env == nil {
		cmd.Env = []string{}
	}
	// A nil *os.File in an io.Reader would not be nil to os/exec.
	if p.Stdin != nil {
		cmd.Stdin = p.Stdin
	}
	if p.Stdout != nil {
		cmd.Stdout = p.Stdout
	}
	if p.Stderr != nil {
		cmd.Stderr = p.Stderr
	}
	err = cmd.Start()
	repW.Close()
	if err != nil {
		return nil, fmt.Errorf("starting the reaper: %w", err)
	}
	t := &Tree{cmd: cmd, exited: make(chan struct{})}
	go func() {
		t.waitErr = cmd.Wait()
		close(t.exited)
	}()
	line, _ := bufio.NewReader(io.LimitReader(repR, 64)).ReadString('\n')
	word, arg, _ := strings.Cut(strings.TrimSpace(line), " ")
	n, convErr := strconv.Atoi(arg)
	switch {
	case word == reportStarted && convErr == nil && n > 1:
		t.pid = n
		return t, nil
	case word == reportFailed && convErr == nil:
		<-t.exited
		return nil, &os.PathError{Op: "fork/exec", Path: p.Path, Err: syscall.Errno(n)}
	case word == reportNoSubreaper && convErr == nil:
		<-t.exited
		return nil, fmt.Errorf("the reaper cannot be a child subreaper: %w", syscall.Errno(n))
	}
	// The reaper said nothing sensible: it could not run at all.
	cmd.Process.Kill()
	<-t.exited
	return nil, fmt.Errorf("the reaper did not start the program (%v)", t.waitErr)
}

// What the reaper says on descriptor 3, one line, before it closes it.
const (
	reportStarted     = "started"      // the program's pid
	reportFailed      = "failed"       // the errno starting it returned
	reportNoSubreaper = "no-subreaper" // the errno prctl returned
)

// Pid returns the program's process id, which is also its process group
// id. The reaper's own is kept to the Tree: only Stop signals it.
func (t *Tree) Pid() int { return t.pid }

// Exited is closed once the program has exited and everything it left
// behind is gone (or, for a tree that forked faster than it could be
// killed, once the reaper gave up on it; see the package's limits), and
// the reaper has been reaped.
func (t *Tree) Exited() <-chan struct{} { return t.exited }

// Err returns, once Exited is closed, how the program ended, as
// exec.Cmd.Wait would say it: nil, or an *exec.ExitError whose state is
// the program's own exit status or signal.
func (t *Tree) Err() error { return t.waitErr }

// Stop stops the tree, politely first: it closes stdin (unless nil) and
// waits up to grace for the program to exit; then the reaper sends SIGTERM
// to every process of the tree and Stop waits up to grace again; then the
// reaper sends SIGKILL to every process of the tree, again and again until
// none is left. Whenever the program exits, what it left behind is killed
// at once. Stop then waits up to a second for the reaper and reports
// whether the tree is gone; it never blocks for much more than 2×grace
// plus a second. A reaper still killing then goes on without Stop (see
// the package's limits); it is never killed, which would leave what
// remains to init. Stop signals the reaper through os.Process, which does
// so only until the reaper has been reaped (through a pidfd where the
// kernel has them), so no signal reaches another process that took its
// pid.
func (t *Tree) Stop(stdin io.Closer, grace time.Duration) bool {
	if stdin != nil {
		stdin.Close()
	}
	if !within(t.exited, grace) {
		t.cmd.Process.Signal(syscall.SIGTERM)
		if !within(t.exited, grace) {
			t.cmd.Process.Signal(syscall.SIGHUP)
		}
	}
	return within(t.exited, time.Second)
}
