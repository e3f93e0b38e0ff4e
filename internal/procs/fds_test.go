package procs

import (
	"os"
	"os/exec"
	"strconv"
	"strings"
	"syscall"
	"testing"
)

func cloexec(t *testing.T, fd int) bool {
	t.Helper()
	flags, _, errno := syscall.Syscall(syscall.SYS_FCNTL, uintptr(fd), syscall.F_GETFD, 0)
	if errno != 0 {
		t.Fatalf("F_GETFD %d: %v", fd, errno)
	}
	return flags&syscall.FD_CLOEXEC != 0
}

func TestCloseInheritedOnExec(t *testing.T) {
	f, err := os.CreateTemp(t.TempDir(), "fd")
	if err != nil {
		t.Fatal(err)
	}
	defer f.Close()
	// A descriptor such as a harness passes down: dup2 leaves it inheritable.
	inherited, err := syscall.Dup(int(f.Fd()))
	if err != nil {
		t.Fatal(err)
	}
	defer syscall.Close(inherited)
	if cloexec(t, inherited) {
		t.Fatal("a dup'ed descriptor is close-on-exec already")
	}
	std := [3]bool{cloexec(t, 0), cloexec(t, 1), cloexec(t, 2)}

	if err := CloseInheritedOnExec(); err != nil {
		t.Fatal(err)
	}
	if !cloexec(t, inherited) {
		t.Error("the inherited descriptor is not close-on-exec")
	}
	for fd, was := range std {
		if cloexec(t, fd) != was {
			t.Errorf("descriptor %d changed", fd)
		}
	}
	// Still usable here, and gone in a child.
	if _, err := syscall.Write(inherited, []byte("x")); err != nil {
		t.Errorf("writing the descriptor after marking it: %v", err)
	}
	n := strconv.Itoa(inherited)
	out, err := exec.Command("/bin/sh", "-c", "echo y >&"+n+" && echo open || echo closed").CombinedOutput()
	if err != nil && len(out) == 0 {
		t.Skipf("no /bin/sh: %v", err)
	}
	if !strings.Contains(string(out), "closed") {
		t.Errorf("a child could still write descriptor %s: %q", n, out)
	}
}
