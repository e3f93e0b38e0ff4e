package intercept

import (
	"bufio"
	"errors"
	"fmt"
	"os"
	"os/exec"
	"strconv"
	"strings"
	"syscall"
	"time"

	"spear/realshell"
)

// completer says whether shell text is one complete command as bash reads
// it, so that stream mode can cut its input where bash would.
type completer interface {
	complete(text string) (completion, error)
}

// completion is what bash makes of a text that starts a submission and
// ends at the end of a line.
type completion struct {
	// done means bash would read no further line for this command: the
	// text is complete, or it holds a syntax error before its end.
	done bool
	// syntaxErr means done because of a syntax error.
	syntaxErr bool
	// heredoc, when not done, is the delimiter of the here-document whose
	// body the text ends in.
	heredoc string
	// quote, when not done, is the closing quote the text waits for; set
	// only for a single quote, inside which nothing but that quote counts.
	quote byte
}

// checkScript is what the checker bash runs. Each request is one
// NUL-terminated message: "n" and a new text, or "a" and more of the last
// one. The text is parsed by eval after set -n, in a subshell, so none of
// it runs; bash's messages go back with the status, after a NUL.
const checkScript = `__spear_t=
while IFS= builtin read -r -d '' __spear_m; do
	case $__spear_m in
	n*) __spear_t=${__spear_m#n} ;;
	*) __spear_t+=${__spear_m#a} ;;
	esac
	( builtin eval 'set -n'$'\n'"$__spear_t" ) 2>&1
	builtin printf '\0%d\0' "$?"
done
`

// checkTimeout bounds one check; a text's size adds to it, since bash
// reads the text a byte at a time.
const checkTimeout = 10 * time.Second

// bashChecker asks a long-lived bash, started on first use, whether text is
// complete. It runs without the turn's environment, in a process group of
// its own, and parses what it is given without running any of it. It runs
// confined as the turn's shell is: the shell's file is one the turn may
// have replaced (a bash installed in HOME, or any file for a root turn),
// and nothing the turn could write runs outside the confinement. One
// goroutine uses it and closes it, on the thread that started it.
type bashChecker struct {
	shell   string
	confine realshell.Confiner // nil: the turn's shell runs unconfined too
	cmd     *exec.Cmd
	in      *os.File
	out     *os.File
	br      *bufio.Reader
	sent    string // the text the checker holds
	err     error  // why it is no longer usable
	exited  chan struct{}
}

// newBashChecker returns a checker that runs shell, confined by c (see
// realshell.Confiner; nil runs it unconfined, as the turn's shell then is).
func newBashChecker(shell string, c realshell.Confiner) *bashChecker {
	return &bashChecker{shell: shell, confine: c}
}

var errCheckerClosed = errors.New("the syntax checker is closed")

func (c *bashChecker) start() error {
	if c.err != nil {
		return c.err
	}
	if c.cmd != nil {
		return nil
	}
	inR, inW, err := os.Pipe()
	if err != nil {
		return err
	}
	outR, outW, err := os.Pipe()
	if err != nil {
		closeFiles(inR, inW)
		return err
	}
	args := []string{"--norc", "--noprofile", "-c", checkScript}
	cmd := exec.Command(c.shell, args...)
	if c.confine != nil {
		// Under the confinement's launcher, which kills the checker
		// when the thread that started it ends.
		if cmd, err = c.confine.Command(c.shell, args...); err != nil {
			closeFiles(inR, inW, outR, outW)
			c.err = fmt.Errorf("confining %s to check syntax: %w", c.shell, err)
			return c.err
		}
	}
	if cmd.SysProcAttr == nil {
		cmd.SysProcAttr = &syscall.SysProcAttr{Pdeathsig: syscall.SIGKILL}
	}
	cmd.SysProcAttr.Setpgid = true
	cmd.Stdin, cmd.Stdout = inR, outW
	cmd.Env = []string{"LC_ALL=C"}
	err = cmd.Start()
	closeFiles(inR, outW)
	if err != nil {
		closeFiles(inW, outR)
		c.err = fmt.Errorf("starting %s to check syntax: %w", c.shell, err)
		return c.err
	}
	c.cmd, c.in, c.out, c.br = cmd, inW, outR, bufio.NewReader(outR)
	c.exited = make(chan struct{})
	go func() {
		cmd.Wait()
		close(c.exited)
	}()
	return nil
}

// complete asks bash about text. An error means bash could not be asked:
// a bash that cannot start is not tried again, one that failed is
// replaced at the next question.
func (c *bashChecker) complete(text string) (completion, error) {
	res, err := c.ask(text)
	if err != nil || !res.done || res.syntaxErr || !escapedNewline(text) {
		return res, err
	}
	// A backslash before the last newline continues the line, unless it
	// is in a comment: with a quote in its place, a continued line waits
	// for the quote to close, and a comment does not.
	probe, err := c.ask(text[:len(text)-2] + "'\n")
	if err != nil {
		return completion{}, err
	}
	if probe.quote == '\'' {
		return completion{}, nil
	}
	return res, nil
}

// escapedNewline reports whether text ends in a backslash that escapes its
// final newline.
func escapedNewline(text string) bool {
	body, ok := strings.CutSuffix(text, "\n")
	if !ok {
		return false
	}
	n := len(body) - len(strings.TrimRight(body, `\`))
	return n%2 == 1
}

func (c *bashChecker) ask(text string) (completion, error) {
	if err := c.start(); err != nil {
		return completion{}, err
	}
	msg := "n" + text
	if c.sent != "" && strings.HasPrefix(text, c.sent) {
		msg = "a" + text[len(c.sent):]
	}
	msg = strings.ReplaceAll(msg, "\x00", "") + "\x00"
	c.sent = ""
	deadline := time.Now().Add(checkTimeout + time.Duration(len(msg)/10_000)*100*time.Millisecond)
	c.in.SetWriteDeadline(deadline)
	c.out.SetReadDeadline(deadline)
	if _, err := c.in.WriteString(msg); err != nil {
		return completion{}, c.fail(err)
	}
	said, err := c.br.ReadString(0)
	if err != nil {
		return completion{}, c.fail(err)
	}
	code, err := c.br.ReadString(0)
	if err != nil {
		return completion{}, c.fail(err)
	}
	status, err := strconv.Atoi(strings.TrimSuffix(code, "\x00"))
	if err != nil {
		return completion{}, c.fail(fmt.Errorf("the syntax checker answered %q", code))
	}
	c.sent = text
	return readCompletion(strings.TrimSuffix(said, "\x00"), status), nil
}

// readCompletion reads what bash said, with LC_ALL=C, of a text parsed to
// its end.
func readCompletion(said string, status int) completion {
	const (
		hdoc  = "delimited by end-of-file (wanted `"
		quote = "unexpected EOF while looking for matching `"
	)
	if _, rest, ok := strings.Cut(said, hdoc); ok {
		line, _, _ := strings.Cut(rest, "\n")
		return completion{heredoc: strings.TrimSuffix(line, "')")}
	}
	if _, rest, ok := strings.Cut(said, quote); ok {
		var q byte
		if len(rest) > 0 && rest[0] == '\'' {
			q = '\''
		}
		return completion{quote: q}
	}
	if strings.Contains(said, "syntax error: unexpected end of file") {
		return completion{}
	}
	return completion{done: true, syntaxErr: status != 0 && strings.Contains(said, "syntax error")}
}

// fail stops the checker's bash and returns why.
func (c *bashChecker) fail(err error) error {
	c.stop()
	return fmt.Errorf("checking syntax with %s: %w", c.shell, err)
}

// stop kills the checker's process group and reaps it.
func (c *bashChecker) stop() {
	if c.cmd == nil {
		return
	}
	syscall.Kill(-c.cmd.Process.Pid, syscall.SIGKILL)
	closeFiles(c.in, c.out)
	<-c.exited
	c.cmd = nil
}

// Close stops the checker.
func (c *bashChecker) Close() {
	c.stop()
	c.err = errCheckerClosed
}
