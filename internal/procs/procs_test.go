package procs

import (
	"bufio"
	"io"
	"os/exec"
	"strconv"
	"strings"
	"syscall"
	"testing"
	"time"
)

// group starts script under sh in a process group of its own and returns
// the group id, the shell's stdin, a channel closed once the shell is
// reaped, and the first line the script prints.
func group(t *testing.T, script string) (int, io.WriteCloser, chan struct{}, string) {
	t.Helper()
	cmd := exec.Command("sh", "-c", script)
	cmd.SysProcAttr = &syscall.SysProcAttr{Setpgid: true}
	stdin, err := cmd.StdinPipe()
	if err != nil {
		t.Fatal(err)
	}
	stdout, err := cmd.StdoutPipe()
	if err != nil {
		t.Fatal(err)
	}
	if err := cmd.Start(); err != nil {
		t.Fatal(err)
	}
	pgid := cmd.Process.Pid
	t.Cleanup(func() { syscall.Kill(-pgid, syscall.SIGKILL) })
	line, _ := bufio.NewReader(stdout).ReadString('\n')
	exited := make(chan struct{})
	go func() {
		cmd.Wait()
		close(exited)
	}()
	return pgid, stdin, exited, strings.TrimSpace(line)
}

func waitGone(t *testing.T, pid int) {
	t.Helper()
	deadline := time.Now().Add(3 * time.Second)
	for Alive(pid) {
		if time.Now().After(deadline) {
			t.Fatalf("process %d still alive", pid)
		}
		time.Sleep(10 * time.Millisecond)
	}
}

func TestKillGroup(t *testing.T) {
	pgid, _, exited, line := group(t, `sleep 300 & echo $!; wait`)
	child, _ := strconv.Atoi(line)
	if err := KillGroup(pgid); err != nil {
		t.Fatal(err)
	}
	select {
	case <-exited:
	case <-time.After(3 * time.Second):
		t.Fatal("leader still running")
	}
	waitGone(t, child)
}

func TestRefusesWhatIsNotAGroup(t *testing.T) {
	for _, pgid := range []int{-5, 0, 1} {
		if err := KillGroup(pgid); err == nil {
			t.Errorf("KillGroup(%d) signalled", pgid)
		}
	}
}
