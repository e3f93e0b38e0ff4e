package intercept

import (
	"bufio"
	"context"
	"crypto/rand"
	"encoding/hex"
	"errors"
	"fmt"
	"io"
	"os"
	"os/exec"
	"os/signal"
	"strconv"
	"strings"
	"syscall"

	"golang.org/x/sys/unix"

	"spear/harness"
	"spear/internal/handoff"
	"spear/internal/procs"
	"spear/realshell"
	"spear/shellparse"
	"spear/turnshell"
)

// Shim is spear-term: a bash-compatible shell that answers spear-capability
// itself. Its zero value is not usable; set every field.
type Shim struct {
	Argv0  string   // how spear-term was invoked (os.Args[0])
	Args   []string // its arguments (os.Args[1:])
	Env    []string // its environment
	Getenv func(string) string
	Stdin  io.Reader
	Stdout *os.File
	Stderr *os.File
	// Interceptor answers what is not ordinary.
	Interceptor *Interceptor
	// Exec replaces the process; syscall.Exec in production.
	Exec func(path string, argv, env []string) error
	// Confiner starts the real shell confined away from the deployment;
	// nil runs it unconfined, through Exec and os/exec.
	Confiner realshell.Confiner
}

// Run runs spear-term and returns its exit status. An ordinary -c
// submission does not return: the real shell replaces the process.
func (t *Shim) Run(ctx context.Context) int {
	sa := realshell.ParseArgs(t.Args)
	switch {
	case sa.HasCommand:
		v, wrapper := harness.Classify(sa.Command)
		switch {
		case v.Kind == shellparse.Ordinary:
			return t.passThrough()
		case v.Kind == shellparse.Invocation && wrapper != nil:
			return t.meet(ctx, sa, wrapper, v)
		}
		return t.respond(ctx, v)
	case sa.Script:
		// bash FILE reads its commands from the file; its own
		// spear-capability commands meet the marker and refuse.
		return t.passThrough()
	default:
		return t.stream(ctx, sa)
	}
}

// meet runs a harness's wrapper around an invocation in the wrapper's
// order: the real shell runs it, confined, with a meeting point in the
// invocation's place, and the invocation is answered when the shell gets
// there, its exit status the shell's $? from then on (realshell.Meet). The
// answer's audit records name the wrapper and hold the whole submission.
func (t *Shim) meet(ctx context.Context, sa realshell.Args, m *harness.Match, v shellparse.Verdict) int {
	args := append([]string{}, t.Args...)
	args[sa.CommandIndex] = m.Replace(realshell.MeetingPoint)
	answer := func() int {
		os.Setenv(handoff.WrapperVar, m.Wrapper.Name)
		os.Setenv(handoff.SubmissionVar, sa.Command)
		defer os.Unsetenv(handoff.WrapperVar)
		defer os.Unsetenv(handoff.SubmissionVar)
		return t.respond(ctx, v)
	}
	return realshell.Meet(t.Argv0, args, t.Env, t.Getenv, t.Stderr, t.Confiner, answer)
}

// Answer answers one invocation, given its words after the command name,
// as Run answers a -c line that invokes the capability, writing its output
// to stdout and stderr.
func (t *Shim) Answer(ctx context.Context, args []string, stdout, stderr io.Writer) int {
	return t.respondTo(ctx, shellparse.Verdict{Kind: shellparse.Invocation, Args: args}, stdout, stderr)
}

// respond answers the -c line that v classifies. The real shell of bash -c
// gets every descriptor spear-term got; a provider gets 0, 1 and 2 only.
func (t *Shim) respond(ctx context.Context, v shellparse.Verdict) int {
	return t.respondTo(ctx, v, t.Stdout, t.Stderr)
}

func (t *Shim) respondTo(ctx context.Context, v shellparse.Verdict, stdout, stderr io.Writer) int {
	if err := procs.CloseInheritedOnExec(); err != nil {
		fmt.Fprintf(stderr, "spear-term: cannot keep inherited descriptors from providers: %v\n", err)
		return 127
	}
	return t.Interceptor.Respond(ctx, v, stdout, stderr)
}

// passThrough replaces spear-term with the real shell, given the very same
// arguments.
func (t *Shim) passThrough() int {
	return realshell.Replace(t.Argv0, t.Args, t.Env, t.Getenv, t.Stderr, t.Confiner, t.Exec)
}

// The persistent shell's prelude: fd 3 (the script) is closed once bash has
// opened it, the status pipe moves to fd 99, and Ctrl-C interrupts a command
// without ending the shell. A status goes out as "N TAG", TAG being the
// submission's own random tag (see shell.run), on a line of its own: it
// starts with a newline, so text a submission left there without one
// cannot swallow it.
const prelude = `exec 3<&- 99>&4 4>&-
__spear_status() { builtin printf '\n%d %s\n' "$1" "$2" >&99; return "$1"; }
__spear_return() { return "$1"; }
trap : INT
`

// shell is the persistent real shell of stream mode.
type shell struct {
	cmd    *exec.Cmd
	script *os.File      // we write submissions here
	status chan report   // it reports each status here; closed when that ends
	exited chan struct{} // closed once it has exited and been reaped
	err    error         // what reaping it returned, once exited is closed
}

func (t *Shim) startShell(sa realshell.Args) (*shell, error) {
	scriptR, scriptW, err := os.Pipe()
	if err != nil {
		return nil, err
	}
	statusR, statusW, err := os.Pipe()
	if err != nil {
		closeFiles(scriptR, scriptW)
		return nil, err
	}
	devnull, err := os.Open(os.DevNull)
	if err != nil {
		closeFiles(scriptR, scriptW, statusR, statusW)
		return nil, err
	}
	defer closeFiles(scriptR, statusW, devnull)
	args := append(append([]string{}, sa.Options...), "/dev/fd/3")
	args = append(args, sa.Positional...)
	cmd := exec.Command(realshell.Path(t.Getenv), args...)
	if t.Confiner != nil {
		if cmd, err = t.Confiner.Command(realshell.Path(t.Getenv), args...); err != nil {
			closeFiles(scriptW, statusR)
			return nil, fmt.Errorf("confining it: %w", err)
		}
	}
	cmd.Stdin, cmd.Stdout, cmd.Stderr = devnull, t.Stdout, t.Stderr
	cmd.ExtraFiles = []*os.File{scriptR, statusW}
	cmd.Env = turnshell.ChildEnv(t.Env)
	if err := cmd.Start(); err != nil {
		closeFiles(scriptW, statusR)
		return nil, err
	}
	sh := &shell{cmd: cmd, script: scriptW, status: make(chan report), exited: make(chan struct{})}
	go func() {
		sh.err = cmd.Wait()
		close(sh.exited)
	}()
	go sh.readStatus(statusR)
	if _, err := io.WriteString(scriptW, prelude); err != nil {
		return nil, err
	}
	return sh, nil
}

func closeFiles(files ...*os.File) {
	for _, f := range files {
		f.Close()
	}
}

// report is one line of the status pipe: a status and the tag it came with.
type report struct {
	status int
	tag    string
}

// maxReportLine bounds a line of the status pipe; a longer one is no status.
const maxReportLine = 64

// run hands one ordinary submission to the shell and waits for its status.
// The text travels in a here-document under a delimiter it cannot contain
// and runs through eval, so a syntax error is reported by bash without
// ending the shell, and $? is the previous submission's status.
//
// The submission runs without the status pipe at 99 (99>&- on the eval),
// so what it starts cannot write there. Bash keeps a close-on-exec copy to
// restore 99 afterwards (at 10 or the next free descriptor), which the
// shell's own builtins can still write: so its status comes back with a tag
// drawn for it alone, on a line of its own. A line without that tag (a
// forged status, a stray write, text left without a newline) is dropped,
// and never shifts or holds up the statuses that follow. A turn that takes over its own shell (its functions or
// traps, or its input on descriptor 255) can still misreport its own
// submissions' statuses, as `; true` would, or keep later ones from
// running; an answered invocation's status never comes from the shell.
func (sh *shell) run(src string) (status int, alive bool) {
	delim := newDelimiter(src)
	tag := newTag()
	block := "__spear_last=$?\nIFS= builtin read -r -d '' __spear_cmd <<'" + delim + "'\n" + src
	if !strings.HasSuffix(src, "\n") {
		block += "\n"
	}
	block += delim + "\n__spear_return \"$__spear_last\"; builtin eval \"$__spear_cmd\" 99>&-; __spear_status \"$?\" " + tag + "\n"
	if _, err := io.WriteString(sh.script, block); err != nil {
		return 0, false
	}
	// A command the shell left running may hold the status pipe open
	// after the shell itself has gone.
	for {
		select {
		case r, ok := <-sh.status:
			if !ok {
				return 0, false
			}
			if r.tag == tag {
				return r.status, true
			}
		case <-sh.exited:
			return 0, false
		}
	}
}

// readStatus passes on each status the shell reports, with its tag, until
// the pipe ends or the shell has exited. A line that is not "N TAG", or is
// longer than maxReportLine, is dropped.
func (sh *shell) readStatus(r *os.File) {
	defer r.Close()
	defer close(sh.status)
	br := bufio.NewReaderSize(r, maxReportLine)
	for {
		line, err := br.ReadSlice('\n')
		if err == bufio.ErrBufferFull {
			// too long for a status: drop it through its end
			for err == bufio.ErrBufferFull {
				_, err = br.ReadSlice('\n')
			}
			continue
		}
		if err != nil {
			return
		}
		num, tag, ok := strings.Cut(strings.TrimSpace(string(line)), " ")
		n, nerr := strconv.Atoi(num)
		if !ok || nerr != nil {
			continue
		}
		select {
		case sh.status <- report{n, tag}:
		case <-sh.exited:
			return
		}
	}
}

// newTag is a status tag no one can guess.
func newTag() string {
	var b [16]byte
	rand.Read(b[:])
	return hex.EncodeToString(b[:])
}

func newDelimiter(src string) string {
	for {
		var b [8]byte
		rand.Read(b[:])
		d := "__SPEAR_END_" + hex.EncodeToString(b[:])
		if !strings.Contains(src, d) {
			return d
		}
	}
}

// wait ends the shell and returns its exit status: 128 plus the signal's
// number when a signal ended it.
func (sh *shell) wait() int {
	sh.script.Close()
	<-sh.exited
	err := sh.err
	var ee *exec.ExitError
	if errors.As(err, &ee) {
		if ws, ok := ee.Sys().(syscall.WaitStatus); ok && ws.Signaled() {
			return 128 + int(ws.Signal())
		}
		return ee.ExitCode()
	}
	if err != nil {
		return 1
	}
	return 0
}

// stream reads submissions from stdin one complete command at a time,
// answers invocations, runs everything else in one persistent shell, and
// reports each submission's exit status.
func (t *Shim) stream(ctx context.Context, sa realshell.Args) int {
	// The shell and providers get descriptors 0-2 and what spear-term
	// makes for them, never SPEAR_STATUS_FD or another it inherited.
	if err := procs.CloseInheritedOnExec(); err != nil {
		fmt.Fprintf(t.Stderr, "spear-term: cannot keep inherited descriptors from the shell: %v\n", err)
		return 127
	}
	interactive := sa.Interactive || isTerminal(t.Stdin)
	report, err := t.statusReporter(interactive)
	if err != nil {
		fmt.Fprintf(t.Stderr, "spear-term: %v\n", err)
		return 2
	}
	sh, err := t.startShell(sa)
	if err != nil {
		fmt.Fprintf(t.Stderr, "spear-term: cannot start the real shell %s: %v (set SPEAR_REAL_SHELL to a bash)\n", realshell.Path(t.Getenv), err)
		return 127
	}
	sigs := make(chan os.Signal, 4)
	signal.Notify(sigs, syscall.SIGINT, syscall.SIGTERM, syscall.SIGHUP, syscall.SIGQUIT)
	defer signal.Stop(sigs)
	go func() {
		for s := range sigs {
			if s == syscall.SIGINT || s == syscall.SIGQUIT {
				continue // the terminal sent it to the whole group; the shell has it
			}
			sh.cmd.Process.Signal(s)
		}
	}()

	last := 0
	// An interactive shell shows its prompt before each submission, as
	// bash -i does: a harness that drives a prompt waits for it.
	prompt := func(int) {}
	if interactive {
		prompt = func(status int) { sh.run(promptScript(status)) }
		// bash drops PS1 from the environment of a shell that is not
		// interactive; the persistent shell is not, so it is set again.
		if ps1, ok := lookupEnv(t.Env, "PS1"); ok {
			sh.run("PS1=" + shellparse.Quote(ps1))
		}
	}
	prompt(0)
	done := make(chan struct{})
	defer close(done)
	subs := readSubmissions(t.Stdin, newBashChecker(realshell.Path(t.Getenv), t.Confiner), done)
	for {
		// The shell can end while stdin stays open and silent (a signal,
		// a command of its own); then stdin is not read any further.
		var src string
		more := true
		select {
		case src, more = <-subs:
		case <-sh.exited:
		}
		if sh.hasExited() {
			last = sh.wait()
			report(last)
			return last
		}
		if !more {
			break
		}
		if interactive {
			// C-l clears a terminal's screen; a harness sends it before
			// a command, and bash -i's line editor takes it so.
			src = strings.TrimLeft(src, "\f")
		}
		if strings.TrimSpace(src) == "" {
			prompt(last)
			continue
		}
		v := shellparse.Classify(src)
		if v.Kind != shellparse.Ordinary {
			last = t.Interceptor.Respond(ctx, v, t.Stdout, t.Stderr)
			sh.run("__spear_return " + strconv.Itoa(last)) // so $? says it
			report(last)
			prompt(last)
			continue
		}
		status, alive := sh.run(src)
		if !alive {
			last = sh.wait()
			report(last)
			return last
		}
		last = status
		report(last)
		prompt(last)
	}
	sh.wait()
	return last
}

// promptScript is what an interactive shell runs after a submission whose
// status was status: PROMPT_COMMAND (each of its elements, when it is an
// array) with $? the submission's status, then the prompt, PS1 expanded as
// bash expands it (bash's own default when PS1 is unset), and $? left as
// it was for the next submission.
func promptScript(status int) string {
	n := strconv.Itoa(status)
	return "for __spear_pc in \"${PROMPT_COMMAND[@]}\"; do __spear_return " + n + "; builtin eval \"$__spear_pc\"; done; unset __spear_pc\n" +
		"__spear_ps1=${PS1-'\\s-\\v\\$ '}; builtin printf '%s' \"${__spear_ps1@P}\"; unset __spear_ps1; __spear_return " + n
}

// lookupEnv finds key in env, a list of KEY=VALUE.
func lookupEnv(env []string, key string) (string, bool) {
	for i := len(env) - 1; i >= 0; i-- {
		if v, ok := strings.CutPrefix(env[i], key+"="); ok {
			return v, true
		}
	}
	return "", false
}

// isTerminal reports whether r is a terminal.
func isTerminal(r io.Reader) bool {
	f, ok := r.(*os.File)
	if !ok {
		return false
	}
	_, err := unix.IoctlGetTermios(int(f.Fd()), unix.TCGETS)
	return err == nil
}

// hasExited reports whether the shell has exited.
func (sh *shell) hasExited() bool {
	select {
	case <-sh.exited:
		return true
	default:
		return false
	}
}

// statusReporter writes each submission's exit status: as a bare number on
// a line to the descriptor SPEAR_STATUS_FD names, else as
// "spear-term: status N" on stderr.
// A SPEAR_STATUS_FD that names no open descriptor above 2 is an error: the
// harness would otherwise wait for statuses that never come.
//
// An interactive shell (a harness driving a prompt) reports statuses only
// to SPEAR_STATUS_FD: a line on its terminal would be read as output.
func (t *Shim) statusReporter(interactive bool) (func(int), error) {
	raw := t.Getenv("SPEAR_STATUS_FD")
	if raw == "" && interactive {
		return func(int) {}, nil
	}
	if raw == "" {
		return func(n int) { fmt.Fprintf(t.Stderr, "spear-term: status %d\n", n) }, nil
	}
	fd, err := strconv.Atoi(raw)
	if err != nil || fd <= 2 {
		return nil, fmt.Errorf("SPEAR_STATUS_FD=%q is not a descriptor number above 2; set it to the descriptor the harness reads statuses from, or unset it to have them on stderr", raw)
	}
	if _, err := unix.FcntlInt(uintptr(fd), unix.F_GETFD, 0); err != nil {
		return nil, fmt.Errorf("SPEAR_STATUS_FD=%d names no open descriptor (%v); open it for spear-term, or unset it to have statuses on stderr", fd, err)
	}
	f := os.NewFile(uintptr(fd), "status")
	return func(n int) { fmt.Fprintf(f, "%d\n", n) }, nil
}
