package spear_test

import (
	"fmt"
	"os"
	"os/exec"
	"regexp"
	"strconv"
	"strings"
	"sync"
	"syscall"
	"time"

	"github.com/rogpeppe/go-internal/testscript"
	"golang.org/x/sys/unix"
)

// ptysession FILE [PROG ARGS...] runs PROG (default spear-term) on a new
// terminal, with echo off as pexpect's echo=False and tmux's pane leave
// what the harness reads, and plays FILE against it as a harness that drives
// a prompt does: a line "send TEXT" types TEXT and a newline, "sendraw
// "QUOTED"" types a Go-quoted string as it is, and "expect REGEXP" waits up
// to 10 s for the output to match, taking what came up to the match. What
// each expect took goes to stdout, one "< …" line each (quoted).
func ptysessionCmd(ts *testscript.TestScript, neg bool, args []string) {
	if neg || len(args) < 1 {
		ts.Fatalf("usage: ptysession FILE [PROG ARGS...]")
	}
	steps := strings.Split(ts.ReadFile(args[0]), "\n")
	prog := []string{"spear-term"}
	if len(args) > 1 {
		prog = args[1:]
	}
	// The script's PATH, where testscript puts its own programs.
	path := prog[0]
	for _, dir := range strings.Split(ts.Getenv("PATH"), ":") {
		if _, err := os.Stat(dir + "/" + prog[0]); err == nil && !strings.Contains(prog[0], "/") {
			path = dir + "/" + prog[0]
			break
		}
	}
	ptmx, tty, err := openPty()
	if err != nil {
		ts.Fatalf("ptysession: %v", err)
	}
	defer ptmx.Close()
	cmd := exec.Command(path, prog[1:]...)
	cmd.Dir = ts.Getenv("WORK")
	cmd.Env = scriptEnv(ts)
	cmd.Stdin, cmd.Stdout, cmd.Stderr = tty, tty, tty
	cmd.SysProcAttr = &syscall.SysProcAttr{Setsid: true, Setctty: true, Ctty: 0}
	if err := cmd.Start(); err != nil {
		ts.Fatalf("ptysession: %v", err)
	}
	tty.Close()
	defer func() {
		cmd.Process.Kill()
		cmd.Wait()
	}()
	var mu sync.Mutex
	var out []byte
	go func() {
		buf := make([]byte, 4096)
		for {
			n, err := ptmx.Read(buf)
			mu.Lock()
			out = append(out, buf[:n]...)
			mu.Unlock()
			if err != nil {
				return
			}
		}
	}()
	var transcript strings.Builder
	for _, step := range steps {
		verb, arg, _ := strings.Cut(step, " ")
		switch verb {
		case "":
		case "send":
			ptmx.Write([]byte(arg + "\n"))
		case "sendraw":
			s, err := strconv.Unquote(arg)
			if err != nil {
				ts.Fatalf("ptysession: sendraw %s: %v", arg, err)
			}
			ptmx.Write([]byte(s))
		case "expect":
			re := regexp.MustCompile(arg)
			deadline := time.Now().Add(10 * time.Second)
			for {
				mu.Lock()
				loc := re.FindIndex(out)
				var got string
				if loc != nil {
					got, out = string(out[:loc[1]]), out[loc[1]:]
				}
				have := string(out)
				mu.Unlock()
				if loc != nil {
					fmt.Fprintf(&transcript, "< %q\n", got)
					break
				}
				if time.Now().After(deadline) {
					ts.Logf("%s", transcript.String())
					ts.Fatalf("ptysession: waited 10 s for %q; the terminal shows %q", arg, have)
				}
				time.Sleep(10 * time.Millisecond)
			}
		default:
			ts.Fatalf("ptysession: %q is not send, sendraw or expect", verb)
		}
	}
	ts.Stdout().Write([]byte(transcript.String()))
}

// scriptEnv is the script's own environment, which a command it runs gets.
func scriptEnv(ts *testscript.TestScript) []string {
	var env []string
	for _, k := range []string{"PATH", "HOME", "WORK", "TMPDIR", "SPEAR_CONFIG_DIR", "SPEAR_STATE_DIR", "SPEAR_TURN_FILE", "SPEAR_STATUS_FD", "PS1", "PROMPT_COMMAND"} {
		if v := ts.Getenv(k); v != "" {
			env = append(env, k+"="+v)
		}
	}
	// How the test binary stands in for spear-term and spear-capability.
	for _, kv := range os.Environ() {
		if strings.HasPrefix(kv, "TESTSCRIPT_") || strings.HasPrefix(kv, "GOCOVERDIR=") || strings.HasPrefix(kv, "GORACE=") {
			env = append(env, kv)
		}
	}
	return env
}

// openPty opens a new terminal: its master, and its slave with echo off.
func openPty() (*os.File, *os.File, error) {
	ptmx, err := os.OpenFile("/dev/ptmx", os.O_RDWR|syscall.O_NOCTTY, 0)
	if err != nil {
		return nil, nil, err
	}
	if err := unix.IoctlSetPointerInt(int(ptmx.Fd()), unix.TIOCSPTLCK, 0); err != nil {
		ptmx.Close()
		return nil, nil, err
	}
	n, err := unix.IoctlGetInt(int(ptmx.Fd()), unix.TIOCGPTN)
	if err != nil {
		ptmx.Close()
		return nil, nil, err
	}
	tty, err := os.OpenFile("/dev/pts/"+strconv.Itoa(n), os.O_RDWR|syscall.O_NOCTTY, 0)
	if err != nil {
		ptmx.Close()
		return nil, nil, err
	}
	t, err := unix.IoctlGetTermios(int(tty.Fd()), unix.TCGETS)
	if err == nil {
		t.Lflag &^= unix.ECHO
		unix.IoctlSetTermios(int(tty.Fd()), unix.TCSETS, t)
	}
	return ptmx, tty, nil
}
