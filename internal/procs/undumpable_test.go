package procs

import (
	"bufio"
	"os"
	"os/exec"
	"path/filepath"
	"strconv"
	"syscall"
	"testing"
	"time"

	"golang.org/x/sys/unix"
)

// TestUndumpable: a process of another user that made itself undumpable
// has its /proc files owned by root, so that a process of its own user
// cannot write its oom_score_adj; one that did not has them owned by
// that user (the control).
func TestUndumpable(t *testing.T) {
	if os.Geteuid() != 0 {
		t.Skip("needs root, to run the helpers as another user")
	}
	const nobody = 65534
	// where nobody can run it
	dir := t.TempDir()
	for _, d := range []string{filepath.Dir(dir), dir} {
		if err := os.Chmod(d, 0o755); err != nil {
			t.Fatal(err)
		}
	}
	bin, err := os.ReadFile(os.Args[0])
	if err != nil {
		t.Fatal(err)
	}
	self := filepath.Join(dir, "procs.test")
	if err := os.WriteFile(self, bin, 0o755); err != nil {
		t.Fatal(err)
	}
	for _, tc := range []struct {
		helper string
		owner  uint32
	}{{"dumpable", nobody}, {"undumpable", 0}} {
		t.Run(tc.helper, func(t *testing.T) {
			cmd := exec.Command(self)
			cmd.Dir = "/"
			cmd.Env = append(os.Environ(), helperEnv+"="+tc.helper)
			cmd.SysProcAttr = &syscall.SysProcAttr{Credential: &syscall.Credential{Uid: nobody, Gid: nobody}}
			in, err := cmd.StdinPipe()
			if err != nil {
				t.Fatal(err)
			}
			out, err := cmd.StdoutPipe()
			if err != nil {
				t.Fatal(err)
			}
			if err := cmd.Start(); err != nil {
				t.Fatal(err)
			}
			defer cmd.Wait()
			defer in.Close()
			if line, _ := bufio.NewReader(out).ReadString('\n'); line != "ready\n" {
				t.Fatalf("helper said %q", line)
			}
			var st syscall.Stat_t
			path := "/proc/" + strconv.Itoa(cmd.Process.Pid) + "/oom_score_adj"
			if err := syscall.Stat(path, &st); err != nil {
				t.Fatal(err)
			}
			if st.Uid != tc.owner {
				t.Errorf("%s belongs to uid %d, want %d", path, st.Uid, tc.owner)
			}
		})
	}
}

// TestTreeSessions: the program runs in a session of its own, and the
// reaper in another, apart from its starter's: an autogroup (one per
// session) a turn may renice holds neither the reaper nor the starter.
func TestTreeSessions(t *testing.T) {
	tree, err := StartTree(Program{Path: "/bin/sh", Args: []string{"sh", "-c", "exec sleep 30"}})
	if err != nil {
		t.Skipf("no /bin/sh: %v", err)
	}
	defer tree.Stop(nil, time.Second)
	sid := func(pid int) int {
		s, err := unix.Getsid(pid)
		if err != nil {
			t.Fatal(err)
		}
		return s
	}
	prog := tree.Pid()
	st, err := stat(prog)
	if err != nil {
		t.Fatal(err)
	}
	reaper := st.ppid
	if sid(prog) != prog || sid(reaper) != reaper || sid(0) == reaper || sid(0) == prog {
		t.Errorf("sessions: program %d in %d, reaper %d in %d, this process in %d", prog, sid(prog), reaper, sid(reaper), sid(0))
	}
}
