package procs

import (
	"bufio"
	"errors"
	"fmt"
	"io"
	"io/fs"
	"os"
	"os/exec"
	"os/signal"
	"path/filepath"
	"slices"
	"strconv"
	"strings"
	"syscall"
	"testing"
	"time"

	"golang.org/x/sys/unix"
)

// helperEnv names the helper a re-execution of this test binary runs.
const helperEnv = "PROCSTEST_HELPER"

func TestMain(m *testing.M) {
	if h := os.Getenv(helperEnv); h != "" {
		os.Unsetenv(helperEnv)
		os.Exit(runHelper(h, os.Args[1:]))
	}
	os.Exit(m.Run())
}

// runHelper runs one of the test's helper programs (sleepers and the
// middles that orphan them are plain sh and sleep, which start faster):
//
//   - subreaper stay|leave: makes itself a child subreaper, starts a
//     middle that orphans a sleeper in a session of its own (which the
//     kernel hands to this helper), prints the sleeper's pid and then,
//     with stay, its own and sleeps; with leave, it exits, and the
//     sleeper's next subreaper up takes it;
//   - program MODE KIND…: starts one descendant of each kind (setpgid,
//     setsid, orphan, daemon, subreaper, subreaper-gone), prints their
//     pids and its own one a line, then "ready"; MODE heed exits when its
//     stdin ends, stubborn ignores SIGTERM and its stdin and sleeps;
//   - starter KIND…: starts a stubborn program of those kinds with
//     StartTree, prints what it prints, and sleeps;
//   - describe: prints its directory, its environment and its open
//     descriptors.
//
// A helper that starts others closes its stdout once it has said all.
func runHelper(name string, args []string) int {
	switch name {
	case "undumpable", "dumpable":
		if name == "undumpable" && Undumpable() != nil {
			return 1
		}
		fmt.Println("ready")
		io.Copy(io.Discard, os.Stdin)
		return 0
	case "subreaper":
		if err := unix.Prctl(unix.PR_SET_CHILD_SUBREAPER, 1, 0, 0, 0); err != nil {
			return 1
		}
		out, err := middle(true).Output()
		if err != nil {
			return 1
		}
		fmt.Print(string(out))
		if len(args) > 0 && args[0] == "stay" {
			fmt.Println(os.Getpid())
			os.Stdout.Close()
			time.Sleep(5 * time.Minute)
		}
		return 0
	case "program":
		if len(args) == 0 {
			return 2
		}
		if args[0] == "stubborn" {
			signal.Ignore(syscall.SIGTERM)
		}
		for _, kind := range args[1:] {
			pids, err := startKind(kind)
			if err != nil {
				fmt.Fprintln(os.Stderr, kind, err)
				return 1
			}
			for _, pid := range pids {
				fmt.Println(pid)
			}
		}
		fmt.Println(os.Getpid())
		fmt.Println("ready")
		if args[0] == "stubborn" {
			time.Sleep(5 * time.Minute)
			return 0
		}
		os.Stdin.Read(make([]byte, 1))
		return 0
	case "starter":
		t, _, out := startProgram(append([]string{"stubborn"}, args...))
		if t == nil {
			return 1
		}
		for line, err := out.ReadString('\n'); err == nil; line, err = out.ReadString('\n') {
			fmt.Print(line)
			if line == "ready\n" {
				break
			}
		}
		time.Sleep(5 * time.Minute)
		return 0
	case "describe":
		dir, _ := os.Getwd()
		fmt.Println(dir)
		fmt.Println(strings.Join(os.Environ(), ","))
		fds, _ := openFDs("/proc/self/fd")
		slices.Sort(fds)
		for _, fd := range fds {
			target, _ := os.Readlink(fmt.Sprintf("/proc/self/fd/%d", fd))
			fmt.Printf("%d %s\n", fd, target)
		}
		return 0
	}
	return 2
}

// helperEnviron is the environment of a helper: ours, and the helper's
// name; built with the race detector, it does not linger at exit.
func helperEnviron(name string) []string {
	return append(os.Environ(), helperEnv+"="+name, "GORACE=atexit_sleep_ms=0")
}

// helperCmd is a command that runs the named helper.
func helperCmd(name string, args ...string) *exec.Cmd {
	cmd := exec.Command("/proc/self/exe", args...)
	cmd.Env = helperEnviron(name)
	return cmd
}

// sleeper is a command that sleeps for five minutes.
func sleeper() *exec.Cmd { return exec.Command("sleep", "300") }

// middle is a command that starts a sleeper in the background, prints its
// pid and exits at once, orphaning it; with setsid, in a session of its own.
func middle(setsid bool) *exec.Cmd {
	cmd := exec.Command("sh", "-c", "sleep 300 </dev/null >/dev/null 2>&1 & echo $!")
	cmd.SysProcAttr = &syscall.SysProcAttr{Setsid: setsid}
	return cmd
}

// startKind starts one descendant of a kind and returns the pids that
// must end with the tree.
func startKind(kind string) ([]int, error) {
	var cmd *exec.Cmd
	switch kind {
	case "setpgid", "setsid":
		cmd = sleeper()
		cmd.SysProcAttr = &syscall.SysProcAttr{Setpgid: kind == "setpgid", Setsid: kind == "setsid"}
		if err := cmd.Start(); err != nil {
			return nil, err
		}
		go cmd.Wait()
		return []int{cmd.Process.Pid}, nil
	case "orphan":
		cmd = middle(false)
	case "daemon":
		cmd = middle(true)
	case "subreaper":
		cmd = helperCmd("subreaper", "stay")
	case "subreaper-gone":
		cmd = helperCmd("subreaper", "leave")
	default:
		return nil, fmt.Errorf("unknown kind %q", kind)
	}
	out, err := cmd.StdoutPipe()
	if err != nil {
		return nil, err
	}
	if err := cmd.Start(); err != nil {
		return nil, err
	}
	said, err := io.ReadAll(out)
	go cmd.Wait()
	if err != nil {
		return nil, err
	}
	var pids []int
	for _, f := range strings.Fields(string(said)) {
		pid, err := strconv.Atoi(f)
		if err != nil {
			return nil, err
		}
		pids = append(pids, pid)
	}
	return pids, nil
}

// startProgram starts the program helper with args under StartTree and
// returns the tree, our end of its stdin and a reader of its stdout.
func startProgram(args []string) (*Tree, *os.File, *bufio.Reader) {
	outR, outW, err := os.Pipe()
	if err != nil {
		return nil, nil, nil
	}
	inR, inW, err := os.Pipe()
	if err != nil {
		return nil, nil, nil
	}
	defer outW.Close()
	defer inR.Close()
	t, err := StartTree(Program{
		Path: "/proc/self/exe", Args: append([]string{"program"}, args...),
		Env:   helperEnviron("program"),
		Stdin: inR, Stdout: outW, Stderr: os.Stderr,
	})
	if err != nil {
		fmt.Fprintln(os.Stderr, err)
		return nil, nil, nil
	}
	return t, inW, bufio.NewReader(outR)
}

// readPids reads the pids a program helper prints, up to "ready".
func readPids(t *testing.T, out *bufio.Reader) []int {
	t.Helper()
	var pids []int
	for {
		line, err := out.ReadString('\n')
		if err != nil {
			t.Fatalf("the program said %v before it was ready (%v)", pids, err)
		}
		line = strings.TrimSpace(line)
		if line == "ready" {
			return pids
		}
		pid, err := strconv.Atoi(line)
		if err != nil {
			t.Fatalf("the program printed %q", line)
		}
		pids = append(pids, pid)
	}
}

// allGone waits up to five seconds until none of pids is alive.
func allGone(t *testing.T, pids []int) {
	t.Helper()
	deadline := time.Now().Add(5 * time.Second)
	for _, pid := range pids {
		for Alive(pid) {
			if time.Now().After(deadline) {
				t.Fatalf("process %d (of %v) still alive", pid, pids)
			}
			time.Sleep(10 * time.Millisecond)
		}
	}
}

var kinds = []string{"setpgid", "setsid", "orphan", "daemon", "subreaper", "subreaper-gone"}

// TestStopTree: stopping a tree stops every process the program started,
// in whatever process group or session it moved to, and whichever of its
// parents exited: the program's own children, an orphan, a daemon (its
// own session, its parent gone), and the orphans a subreaper of the
// tree's own holds or took and left behind. A program that heeds its
// stdin exits when it ends; one that ignores stdin and SIGTERM is killed.
func TestStopTree(t *testing.T) {
	for _, tc := range []struct {
		mode  string
		grace time.Duration
		ended string // how the program ended
	}{
		{"heed", 3 * time.Second, ""},
		{"stubborn", 300 * time.Millisecond, "signal: killed"},
	} {
		t.Run(tc.mode, func(t *testing.T) {
			tree, stdin, out := startProgram(append([]string{tc.mode}, kinds...))
			if tree == nil {
				t.Fatal("the program did not start")
			}
			defer tree.Stop(nil, 0)
			pids := readPids(t, out)
			if len(pids) != 8 || pids[len(pids)-1] != tree.Pid() {
				t.Fatalf("pids %v, tree pid %d", pids, tree.Pid())
			}
			for _, pid := range pids {
				if !Alive(pid) {
					t.Fatalf("process %d is not running before Stop", pid)
				}
			}
			start := time.Now()
			if !tree.Stop(stdin, tc.grace) {
				t.Error("Stop says the tree is not gone")
			}
			if took := time.Since(start); took > 2*tc.grace+time.Second {
				t.Errorf("Stop took %s", took)
			}
			select {
			case <-tree.Exited():
			default:
				t.Error("Exited is open after Stop")
			}
			if ended := fmt.Sprint(tree.Err()); tc.ended == "" && tree.Err() != nil || tc.ended != "" && ended != tc.ended {
				t.Errorf("the program ended with %s, want %q", ended, tc.ended)
			}
			allGone(t, pids)
		})
	}
}

// TestTreeEndsWithProgram: a program that exits on its own takes what it
// left behind with it, before Exited is closed.
func TestTreeEndsWithProgram(t *testing.T) {
	tree, stdin, out := startProgram(append([]string{"heed"}, kinds...))
	if tree == nil {
		t.Fatal("the program did not start")
	}
	defer tree.Stop(nil, 0)
	pids := readPids(t, out)
	stdin.Close()
	select {
	case <-tree.Exited():
	case <-time.After(5 * time.Second):
		t.Fatal("the tree did not end with its program")
	}
	if tree.Err() != nil {
		t.Errorf("the program ended with %v", tree.Err())
	}
	allGone(t, pids)
}

// TestTreeStarterDies: when the process that started a tree dies, the
// tree is killed, all of it.
func TestTreeStarterDies(t *testing.T) {
	starter := helperCmd("starter", kinds...)
	stdout, err := starter.StdoutPipe()
	if err != nil {
		t.Fatal(err)
	}
	starter.Stderr = os.Stderr
	if err := starter.Start(); err != nil {
		t.Fatal(err)
	}
	defer starter.Process.Kill()
	pids := readPids(t, bufio.NewReader(stdout))
	if len(pids) != 8 {
		t.Fatalf("pids %v", pids)
	}
	starter.Process.Kill()
	starter.Wait()
	allGone(t, pids)
}

// TestTreeSparesOthers: stopping a tree touches no other child of the
// process that started it, and takes no child from os/exec's Wait.
func TestTreeSparesOthers(t *testing.T) {
	sibling := exec.Command("sleep", "300")
	if err := sibling.Start(); err != nil {
		t.Skipf("no sleep: %v", err)
	}
	defer sibling.Process.Kill()
	tree, stdin, out := startProgram(append([]string{"stubborn"}, kinds...))
	if tree == nil {
		t.Fatal("the program did not start")
	}
	pids := readPids(t, out)
	tree.Stop(stdin, 50*time.Millisecond)
	allGone(t, pids)
	if !Alive(sibling.Process.Pid) {
		t.Fatal("the sibling was killed")
	}
	sibling.Process.Kill()
	var ee *exec.ExitError
	if err := sibling.Wait(); !errors.As(err, &ee) || ee.ProcessState.String() != "signal: killed" {
		t.Fatalf("the sibling's Wait: %v", err)
	}
}

// TestTreeForker: a program that keeps starting processes as fast as it
// can (up to a few thousand, should the test fail) is stopped with all of
// them; the reaper walks and kills until none is left.
func TestTreeForker(t *testing.T) {
	tag := fmt.Sprintf("forker-%d-%d", os.Getpid(), time.Now().UnixNano())
	t.Cleanup(func() { killWithCmdline(tag) })
	inR, inW, _ := os.Pipe()
	defer inW.Close()
	script := `trap "" TERM; i=0; while [ $i -lt 3000 ]; do sh -c "sleep 300; : $0" & i=$((i+1)); done; wait`
	tree, err := StartTree(Program{Path: "/bin/sh", Args: []string{"sh", "-c", script, tag}, Stdin: inR})
	inR.Close()
	if err != nil {
		t.Skipf("no /bin/sh: %v", err)
	}
	time.Sleep(50 * time.Millisecond) // let it fork a while
	if len(withCmdline(tag)) == 0 {
		t.Fatal("the program started nothing")
	}
	tree.Stop(inW, 50*time.Millisecond)
	select {
	case <-tree.Exited():
	case <-time.After(killFor + 5*time.Second):
		t.Fatal("the reaper did not finish")
	}
	if left := withCmdline(tag); len(left) > 0 {
		t.Fatalf("%d processes left, %v…", len(left), left[:min(5, len(left))])
	}
}

// withCmdline returns the live processes whose command line holds s.
func withCmdline(s string) []int {
	var pids []int
	names, _ := filepath.Glob("/proc/[0-9]*/cmdline")
	for _, name := range names {
		data, err := os.ReadFile(name)
		pid, _ := strconv.Atoi(filepath.Base(filepath.Dir(name)))
		if err == nil && strings.Contains(string(data), s) && Alive(pid) {
			pids = append(pids, pid)
		}
	}
	return pids
}

// killWithCmdline kills the processes whose command line holds s, and
// their children.
func killWithCmdline(s string) {
	for _, pid := range withCmdline(s) {
		for _, p := range descendants(pid) {
			syscall.Kill(p.pid, syscall.SIGKILL)
		}
		syscall.Kill(pid, syscall.SIGKILL)
	}
}

// TestTreeStatus: Err says how the program ended, as os/exec would.
func TestTreeStatus(t *testing.T) {
	for script, want := range map[string]string{
		"exit 0":        "",
		"exit 3":        "exit status 3",
		"kill -KILL $$": "signal: killed",
		"kill -TERM $$": "signal: terminated",
		"kill -USR1 $$": "exit status 138",
	} {
		tree, err := StartTree(Program{Path: "/bin/sh", Args: []string{"sh", "-c", script}})
		if err != nil {
			t.Skipf("no /bin/sh: %v", err)
		}
		<-tree.Exited()
		got := ""
		if tree.Err() != nil {
			got = tree.Err().Error()
		}
		if got != want {
			t.Errorf("%s: %q, want %q", script, got, want)
		}
	}
}

// TestTreeStartErrors: a program that cannot be started is the error
// os/exec would return, and leaves no reaper behind.
func TestTreeStartErrors(t *testing.T) {
	dir := t.TempDir()
	plain := filepath.Join(dir, "plain")
	os.WriteFile(plain, []byte("not a program"), 0o644)
	for path, want := range map[string]error{
		filepath.Join(dir, "none"): fs.ErrNotExist,
		plain:                      fs.ErrPermission,
	} {
		_, err := StartTree(Program{Path: path, Args: []string{"x"}})
		var pe *os.PathError
		if !errors.As(err, &pe) || pe.Op != "fork/exec" || pe.Path != path || !errors.Is(err, want) {
			t.Errorf("%s: %v", path, err)
		}
	}
	if _, err := StartTree(Program{}); err == nil {
		t.Error("an empty program started")
	}
}

// TestTreeProgram: the program gets the directory, the environment and
// the descriptors it is given (/dev/null for those it is not), and none
// this process left inheritable nor the reaper's own.
func TestTreeProgram(t *testing.T) {
	dir := t.TempDir()
	f, err := os.Create(filepath.Join(dir, "inherited"))
	if err != nil {
		t.Fatal(err)
	}
	defer f.Close()
	inherited, err := syscall.Dup(int(f.Fd())) // not close-on-exec
	if err != nil {
		t.Fatal(err)
	}
	defer syscall.Close(inherited)
	outR, outW, _ := os.Pipe()
	tree, err := StartTree(Program{
		Path: "/proc/self/exe", Args: []string{"describe"},
		Env: []string{helperEnv + "=describe", "A=1", "GORACE=atexit_sleep_ms=0"}, Dir: dir, Stdout: outW,
	})
	outW.Close()
	if err != nil {
		t.Fatal(err)
	}
	<-tree.Exited()
	data, _ := io.ReadAll(outR)
	lines := strings.Split(strings.TrimSpace(string(data)), "\n")
	if len(lines) < 5 || lines[0] != dir || lines[1] != "A=1,GORACE=atexit_sleep_ms=0" {
		t.Fatalf("the program saw %q", lines)
	}
	if lines[2] != "0 /dev/null" || !strings.HasPrefix(lines[3], "1 pipe:") || lines[4] != "2 /dev/null" {
		t.Errorf("its standard files are %q", lines[2:5])
	}
	for _, l := range lines[5:] {
		// The Go runtime's own (epoll, eventfd, cgroup files) are fine.
		if strings.Contains(l, "inherited") || strings.Contains(l, "pipe:") || strings.Contains(l, "socket:") {
			t.Errorf("the program holds %s", l)
		}
	}
}
