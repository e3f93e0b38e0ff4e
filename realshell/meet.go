package realshell

import (
	"fmt"
	"io"
	"os"
	"os/exec"
	"path/filepath"
	"strconv"
	"strings"

	"spear/confine"
	"spear/turnshell"
)

// MeetFDs are the descriptors a meeting point uses in the real shell:
// reached, written once the shell gets there, and status, from which it
// reads the answer's exit status. They lie above those a harness usually
// passes and below those bash takes for itself (10 and up it moves its
// own redirections to, 255 its script).
const (
	meetReached = 8
	meetStatus  = 9
)

// MeetingPoint is the shell text that stands in for an invocation inside a
// harness's wrapper: it tells spear-term that the shell has reached the
// invocation's place, waits for the answer's exit status, and leaves it as
// $? for what the wrapper runs after. Without an answer (spear-term gone)
// the status is 3, unavailable.
var MeetingPoint = fmt.Sprintf(`__spear_status=3; { builtin printf . >&%d && IFS= builtin read -r __spear_status <&%d; } 2>/dev/null; builtin exec %d>&- %d<&-; (exit "${__spear_status:-3}")`,
	meetReached, meetStatus, meetReached, meetStatus)

// Meet runs the real shell on a harness's wrapper in which an invocation
// was replaced by MeetingPoint (args: the shell's arguments, the rewritten
// -c text among them), confined by c (nil: unconfined), with spear-term's
// standard and inherited files. When the shell reaches the meeting point,
// Meet calls answer, which answers the invocation and returns its exit
// status, and hands that status to the shell; what the wrapper runs before
// the invocation has run before it, what it runs after runs after, with
// the status as $?. A shell that ends without reaching it has nothing
// answered. Meet returns the shell's exit status, or 126 or 127 when it
// could not be started (having said why on stderr).
func Meet(argv0 string, args, env []string, getenv func(string) string, stderr io.Writer, c Confiner, answer func() int) int {
	shell := Path(getenv)
	first := shell
	if strings.HasPrefix(filepath.Base(argv0), "-") {
		first = "-" + filepath.Base(shell)
	}
	if status := cannotRun(shell, stderr); status != 0 {
		return status
	}
	reachedR, reachedW, err := os.Pipe()
	if err != nil {
		fmt.Fprintf(stderr, "spear-term: cannot make the meeting point: %v\n", err)
		return 126
	}
	statusR, statusW, err := os.Pipe()
	if err != nil {
		fmt.Fprintf(stderr, "spear-term: cannot make the meeting point: %v\n", err)
		return 126
	}
	var cmd *exec.Cmd
	if c != nil {
		cmd, err = c.Command(shell, args...)
		if err != nil {
			fmt.Fprintf(stderr, "spear-term: cannot start the real shell %s confined: %v (nothing ran; SPEAR_CONFINE=off runs it unconfined, at the risk docs/security.md describes)\n", shell, err)
			return 126
		}
	} else {
		cmd = exec.Command(shell, args...)
	}
	cmd.Args[len(cmd.Args)-len(args)-1] = first
	cmd.Env = turnshell.ChildEnv(env)
	cmd.Stdin, cmd.Stdout, cmd.Stderr = os.Stdin, os.Stdout, os.Stderr
	extra := confine.InheritedFiles()
	for len(extra) <= meetStatus-3 {
		extra = append(extra, nil)
	}
	extra[meetReached-3], extra[meetStatus-3] = reachedW, statusR
	cmd.ExtraFiles = extra
	exited, err := confine.Run(cmd)
	reachedW.Close()
	statusR.Close()
	if err != nil {
		fmt.Fprintf(stderr, "spear-term: cannot start the real shell %s: %v\n", shell, err)
		return 126
	}
	reached := make(chan bool, 1)
	go func() {
		var b [1]byte
		n, _ := reachedR.Read(b[:])
		reached <- n == 1
	}()
	select {
	case status := <-exited:
		// It ended without reaching the invocation's place: a command of
		// the wrapper's before it failed, say. Nothing is answered.
		return status
	case ok := <-reached:
		if ok {
			status := answer()
			statusW.WriteString(strconv.Itoa(status) + "\n")
		}
		statusW.Close()
		return <-exited
	}
}
