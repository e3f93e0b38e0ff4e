package confine

// The test binary plays every part: the launcher (LauncherArg), the confined
// probe that tries each attack and reports what it reached, a driver that
// runs Command or Exec as another user, and the plain exec the benchmark
// compares with. TestMain picks the part from the environment.

import (
	"bufio"
	"encoding/hex"
	"encoding/json"
	"errors"
	"fmt"
	"net"
	"os"
	"os/exec"
	"path/filepath"
	"runtime"
	"slices"
	"sort"
	"strconv"
	"strings"
	"syscall"
	"testing"
	"unsafe"

	"golang.org/x/sys/unix"
)

const (
	envMode   = "CONFINE_TEST_MODE"
	envSpec   = "CONFINE_TEST_SPEC"
	envSecret = "CONFINE_TEST_SECRET"
)

// spec tells a helper what to do and what to attack.
type spec struct {
	Policy Policy
	Tree   tree
	// Control marks an unconfined run: attacks that would damage the tree
	// or the test process are skipped.
	Control bool
	// Victim is an unconfined process to ptrace; SignalPid one to send
	// SIGUSR1 to (0: skip).
	Victim, SignalPid int
	// Abstract is the name of an abstract unix socket an unconfined
	// process listens on.
	Abstract string
	// Handle is a file handle (hex) of the hidden secret, HandleType its
	// type, for open_by_handle_at.
	Handle     string
	HandleType int32
	// SysFile is a root-writable sysfs file to try to open for writing.
	SysFile string
	// Path and Argv are what the exec and command parts run; Env is added
	// to their environment.
	Path string
	Argv []string
	Env  []string
	// Helper makes the command part run the test binary as the probe
	// (Path and Argv are then ignored).
	Helper bool
}

// tree is the temporary deployment the attacks aim at.
type tree struct {
	Base, Home, HiddenDir, HiddenFile, ReadOnly, Alias, AliasReal, Link, Mnt string
}

func TestMain(m *testing.M) {
	if len(os.Args) > 1 && os.Args[1] == LauncherArg {
		os.Exit(LauncherMain(os.Args[2:]))
	}
	if mode := os.Getenv(envMode); mode != "" {
		os.Exit(helperMain(mode))
	}
	// The test process carries a secret in its initial environment, the
	// one /proc/<pid>/environ shows, so that reading it means something.
	if os.Getenv(envSecret) == "" {
		env := append(os.Environ(), envSecret+"=environ-"+randomHex(8))
		err := syscall.Exec("/proc/self/exe", os.Args, env)
		fmt.Fprintln(os.Stderr, "re-exec with a secret:", err)
		os.Exit(2)
	}
	os.Exit(m.Run())
}

func randomHex(n int) string {
	b := make([]byte, n)
	f, err := os.Open("/dev/urandom")
	if err == nil {
		f.Read(b)
		f.Close()
	}
	return hex.EncodeToString(b)
}

func readSpec() spec {
	var s spec
	if err := json.Unmarshal([]byte(os.Getenv(envSpec)), &s); err != nil {
		fmt.Fprintln(os.Stderr, "bad spec:", err)
		os.Exit(2)
	}
	return s
}

// helperEnv is the environment the helpers hand on: theirs without the
// helper variables, plus extra. A helper built with the race detector does
// not linger for a second when it exits.
func helperEnv(extra ...string) []string {
	var env []string
	for _, kv := range os.Environ() {
		if strings.HasPrefix(kv, envMode+"=") || strings.HasPrefix(kv, envSpec+"=") || strings.HasPrefix(kv, "GORACE=") {
			continue
		}
		env = append(env, kv)
	}
	env = append(env, strings.TrimSpace("GORACE="+os.Getenv("GORACE")+" atexit_sleep_ms=0"))
	return append(env, extra...)
}

func helperMain(mode string) int {
	switch mode {
	case "probe":
		return probeMain(readSpec())
	case "inside":
		fmt.Println(Inside())
		return 0
	case "support":
		fmt.Println(Probe())
		return 0
	case "exec":
		s := readSpec()
		err := Exec(s.Policy, s.Path, s.Argv, helperEnv(s.Env...))
		fmt.Fprintln(os.Stderr, "Exec:", err)
		return 99
	case "plain":
		s := readSpec()
		err := syscall.Exec(s.Path, s.Argv, helperEnv(s.Env...))
		fmt.Fprintln(os.Stderr, "exec:", err)
		return 99
	case "command":
		return commandMain(readSpec())
	case "userns-mount":
		return usernsMountMain(os.Getenv("USERNS_HIDDEN"), os.Getenv("USERNS_MNT"))
	}
	fmt.Fprintln(os.Stderr, "unknown helper mode", mode)
	return 2
}

// usernsMountMain, in a user and mount namespace of its own, tries to
// unmount the hidden directory and the staging tmpfs, mount a tmpfs, and
// read the hidden registry, and prints each errno ("0": it worked).
func usernsMountMain(hidden, mnt string) int {
	name := func(err error) string {
		var e syscall.Errno
		switch {
		case err == nil:
			return "0"
		case errors.As(err, &e):
			return unix.ErrnoName(e)
		}
		return err.Error()
	}
	_, readErr := os.ReadFile(filepath.Join(hidden, "registry"))
	fmt.Printf("umount-hidden=%s umount-marker=%s mount=%s read=%s\n",
		name(unix.Unmount(hidden, unix.MNT_DETACH)), name(unix.Unmount(staging, unix.MNT_DETACH)),
		name(unix.Mount("x", mnt, "tmpfs", 0, "")), name(readErr))
	return 0
}

// commandMain runs, as whoever runs it, either the probe or Path under
// Command (or unconfined for a control run), with its own standard files.
func commandMain(s spec) int {
	path, argv, env := s.Path, s.Argv, helperEnv(s.Env...)
	if s.Helper {
		self, _ := os.Executable()
		path, argv = self, []string{self}
		b, _ := json.Marshal(s)
		env = append(env, envMode+"=probe", envSpec+"="+string(b))
	}
	var cmd *exec.Cmd
	if s.Control {
		cmd = exec.Command(path)
		cmd.Args = argv
	} else {
		var err error
		cmd, err = Command(s.Policy, path, argv[1:]...)
		if err != nil {
			fmt.Fprintln(os.Stderr, "Command:", err)
			return 98
		}
	}
	cmd.Env = env
	cmd.Stdin, cmd.Stdout, cmd.Stderr = os.Stdin, os.Stdout, os.Stderr
	return exitStatus(cmd.Run())
}

// check is one attempt by the probe. It returns what it reached ("" if
// nothing in particular) or the error that stopped it.
type check struct {
	name string
	// unsafe marks attempts a control run must not make: they would
	// damage the tree or stop the test process.
	unsafe bool
	run    func() (string, error)
}

func probeMain(s spec) int {
	t := s.Tree
	secretFile := filepath.Join(t.HiddenDir, "registry")
	ppid := os.Getppid()

	checks := []check{
		{name: "hidden-read", run: func() (string, error) { return readString(secretFile) }},
		{name: "hidden-list", run: func() (string, error) { return listDir(t.HiddenDir) }},
		{name: "hidden-create", run: func() (string, error) {
			return "", createRemove(filepath.Join(t.HiddenDir, "new"))
		}},
		{name: "hidden-write", run: func() (string, error) { return "", openClose(secretFile, os.O_WRONLY) }},
		{name: "hidden-mkdir", run: func() (string, error) {
			d := filepath.Join(t.HiddenDir, "sub")
			if err := os.Mkdir(d, 0o755); err != nil {
				return "", err
			}
			return "", os.Remove(d)
		}},
		{name: "hidden-via-old-symlink", run: func() (string, error) { return readString(t.Link) }},
		{name: "hidden-via-new-symlink", run: func() (string, error) {
			l := filepath.Join(t.Base, "newlink")
			if err := os.Symlink(secretFile, l); err != nil {
				return "", err
			}
			defer os.Remove(l)
			return readString(l)
		}},
		{name: "hidden-via-new-hardlink", run: func() (string, error) {
			l := filepath.Join(t.Base, "hardlink")
			if err := os.Link(secretFile, l); err != nil {
				return "", err
			}
			defer os.Remove(l)
			return readString(l)
		}},
		{name: "hidden-rename-dir", run: func() (string, error) { return "", renameBack(t.HiddenDir, t.HiddenDir+".moved") }},
		{name: "hidden-rename-parent", run: func() (string, error) {
			p := filepath.Dir(t.HiddenDir)
			return "", renameBack(p, p+".moved")
		}},
		{name: "hidden-rename-grandparent", run: func() (string, error) {
			p := filepath.Dir(filepath.Dir(t.HiddenDir))
			return "", renameBack(p, p+".moved")
		}},
		{name: "hidden-file-read", run: func() (string, error) { return readString(t.HiddenFile) }},
		{name: "hidden-file-write", run: func() (string, error) { return "", openClose(t.HiddenFile, os.O_WRONLY) }},
		{name: "hidden-file-unlink", unsafe: true, run: func() (string, error) { return "", os.Remove(t.HiddenFile) }},
		{name: "alias-read", run: func() (string, error) { return readString(filepath.Join(t.Alias, "key")) }},
		{name: "alias-real-read", run: func() (string, error) { return readString(filepath.Join(t.AliasReal, "key")) }},
		{name: "ro-read", run: func() (string, error) { return readString(t.ReadOnly) }},
		{name: "ro-write", run: func() (string, error) { return "", openClose(t.ReadOnly, os.O_WRONLY) }},
		{name: "ro-truncate", unsafe: true, run: func() (string, error) { return "", os.Truncate(t.ReadOnly, 0) }},
		{name: "ro-rename-over", unsafe: true, run: func() (string, error) {
			f := filepath.Join(filepath.Dir(t.ReadOnly), "forged")
			if err := os.WriteFile(f, []byte("forged"), 0o644); err != nil {
				return "", err
			}
			defer os.Remove(f)
			return "", os.Rename(f, t.ReadOnly)
		}},
		{name: "ro-unlink", unsafe: true, run: func() (string, error) { return "", os.Remove(t.ReadOnly) }},
		{name: "ro-rename-away", run: func() (string, error) { return "", renameBack(t.ReadOnly, t.ReadOnly+".moved") }},
		{name: "ro-rename-parent", run: func() (string, error) {
			p := filepath.Dir(t.ReadOnly)
			return "", renameBack(p, p+".moved")
		}},
		{name: "mount-tmpfs", run: func() (string, error) {
			return "", inNewMountNamespace(func() error {
				if err := unix.Mount("x", t.Mnt, "tmpfs", 0, ""); err != nil {
					return err
				}
				return unix.Unmount(t.Mnt, 0)
			})
		}},
		{name: "umount-hidden", run: func() (string, error) {
			var got string
			err := inNewMountNamespace(func() error {
				if err := unix.Unmount(t.HiddenDir, unix.MNT_DETACH); err != nil {
					return err
				}
				var err error
				got, err = readString(secretFile)
				return err
			})
			return got, err
		}},
		{name: "umount-marker", run: func() (string, error) {
			return "", inNewMountNamespace(func() error { return unix.Unmount(staging, unix.MNT_DETACH) })
		}},
		{name: "userns-umount", run: func() (string, error) {
			// A new user namespace gives every capability, CAP_SYS_ADMIN
			// included, over a new mount namespace: only Landlock is
			// left to refuse. (No uid map is written: a root shell's
			// /proc is read-only.)
			self, err := os.Executable()
			if err != nil {
				return "", err
			}
			cmd := exec.Command(self)
			cmd.Env = helperEnv(envMode+"=userns-mount", "USERNS_HIDDEN="+t.HiddenDir, "USERNS_MNT="+t.Mnt)
			cmd.SysProcAttr = &syscall.SysProcAttr{Cloneflags: syscall.CLONE_NEWUSER | syscall.CLONE_NEWNS, AmbientCaps: []uintptr{unix.CAP_SYS_ADMIN}}
			out, err := cmd.CombinedOutput()
			return strings.TrimSpace(string(out)), err
		}},
		{name: "proc-environ", run: func() (string, error) { return readString(fmt.Sprintf("/proc/%d/environ", ppid)) }},
		{name: "proc-mem", run: func() (string, error) { return "", openClose(fmt.Sprintf("/proc/%d/mem", ppid), os.O_RDONLY) }},
		{name: "proc-fd", run: func() (string, error) { return os.Readlink(fmt.Sprintf("/proc/%d/fd/0", ppid)) }},
		{name: "proc-root", run: func() (string, error) { return listDir(fmt.Sprintf("/proc/%d/root/", ppid)) }},
		{name: "proc-cwd", run: func() (string, error) { return os.Readlink(fmt.Sprintf("/proc/%d/cwd", ppid)) }},
		{name: "proc-ns", run: func() (string, error) { return "", openClose(fmt.Sprintf("/proc/%d/ns/mnt", ppid), os.O_RDONLY) }},
		{name: "ptrace-parent", unsafe: true, run: func() (string, error) { return "", ptraceSeize(ppid) }},
		{name: "ptrace-victim", run: func() (string, error) { return "", ptraceAttachDetach(s.Victim) }},
		{name: "setns-parent", run: func() (string, error) {
			fd, err := unix.PidfdOpen(ppid, 0)
			if err != nil {
				return "", err
			}
			defer unix.Close(fd)
			return "", onLockedThread(func() error {
				if err := unix.Unshare(unix.CLONE_FS); err != nil {
					return err
				}
				return unix.Setns(fd, unix.CLONE_NEWNS)
			})
		}},
		{name: "open-by-handle", run: func() (string, error) { return openByHandle(t.Base, s.Handle, s.HandleType) }},
		{name: "kill-0", run: func() (string, error) { return "", unix.Kill(ppid, 0) }},
		// The parent's limits and scheduling, each set to what it is.
		{name: "prlimit-parent", run: func() (string, error) {
			var lim unix.Rlimit
			if err := unix.Prlimit(ppid, unix.RLIMIT_NOFILE, nil, &lim); err != nil {
				return "", err
			}
			return "", unix.Prlimit(ppid, unix.RLIMIT_NOFILE, &lim, nil)
		}},
		{name: "setpriority-parent", run: func() (string, error) {
			prio, err := unix.Getpriority(unix.PRIO_PROCESS, ppid)
			if err != nil {
				return "", err
			}
			return "", unix.Setpriority(unix.PRIO_PROCESS, ppid, 20-prio)
		}},
		{name: "setpriority-user", run: func() (string, error) {
			prio, err := unix.Getpriority(unix.PRIO_USER, 0)
			if err != nil {
				return "", err
			}
			return "", unix.Setpriority(unix.PRIO_USER, 0, 20-prio)
		}},
		{name: "sched-setaffinity-parent", run: func() (string, error) {
			var set unix.CPUSet
			if err := unix.SchedGetaffinity(ppid, &set); err != nil {
				return "", err
			}
			return "", unix.SchedSetaffinity(ppid, &set)
		}},
		{name: "prlimit-self", run: func() (string, error) {
			var lim unix.Rlimit
			if err := unix.Prlimit(0, unix.RLIMIT_NOFILE, nil, &lim); err != nil {
				return "", err
			}
			return "", unix.Prlimit(0, unix.RLIMIT_NOFILE, &lim, nil)
		}},
		// Typing into a terminal: refused before the descriptor is
		// looked at (unconfined, a pipe is ENOTTY).
		{name: "tiocsti", run: func() (string, error) {
			var p [2]int
			if err := unix.Pipe(p[:]); err != nil {
				return "", err
			}
			defer unix.Close(p[0])
			defer unix.Close(p[1])
			c := byte('x')
			_, _, errno := unix.Syscall(unix.SYS_IOCTL, uintptr(p[0]), unix.TIOCSTI, uintptr(unsafe.Pointer(&c)))
			if errno != 0 {
				return "", errno
			}
			return "", nil
		}},
		// Every mount beneath /sys (cgroups included) is read-only.
		{name: "sys-mounts", run: func() (string, error) {
			f, err := os.Open("/proc/self/mountinfo")
			if err != nil {
				return "", err
			}
			defer f.Close()
			var writable []string
			sc := bufio.NewScanner(f)
			for sc.Scan() {
				fields := strings.Fields(sc.Text())
				if len(fields) < 6 || (fields[4] != "/sys" && !strings.HasPrefix(fields[4], "/sys/")) {
					continue
				}
				if !slices.Contains(strings.Split(fields[5], ","), "ro") {
					writable = append(writable, fields[4])
				}
			}
			if len(writable) > 0 {
				return "writable: " + strings.Join(writable, " "), nil
			}
			return "read-only", sc.Err()
		}},
		{name: "kill-usr1", run: func() (string, error) {
			if s.SignalPid == 0 {
				return "skipped", nil
			}
			return "", unix.Kill(s.SignalPid, unix.SIGUSR1)
		}},
		{name: "abstract-connect", run: func() (string, error) {
			c, err := net.Dial("unix", "@"+s.Abstract)
			if err != nil {
				return "", err
			}
			return "", c.Close()
		}},
		{name: "abstract-own", run: func() (string, error) {
			name := "@" + s.Abstract + "-own-" + strconv.Itoa(os.Getpid())
			l, err := net.Listen("unix", name)
			if err != nil {
				return "", err
			}
			defer l.Close()
			go func() {
				if c, err := l.Accept(); err == nil {
					c.Close()
				}
			}()
			c, err := net.Dial("unix", name)
			if err != nil {
				return "", err
			}
			return "", c.Close()
		}},
		{name: "inside", run: func() (string, error) { return strconv.FormatBool(Inside()), nil }},
		{name: "inside-grandchild", run: func() (string, error) {
			self, _ := os.Executable()
			cmd := exec.Command(self)
			cmd.Env = helperEnv(envMode + "=inside")
			out, err := cmd.Output()
			return strings.TrimSpace(string(out)), err
		}},
		{name: "no-new-privs", run: func() (string, error) {
			v, err := unix.PrctlRetInt(unix.PR_GET_NO_NEW_PRIVS, 0, 0, 0, 0)
			return strconv.Itoa(v), err
		}},
		{name: "core-pattern-write", run: func() (string, error) {
			return "", openClose("/proc/sys/kernel/core_pattern", os.O_WRONLY)
		}},
		{name: "sys-write", run: func() (string, error) {
			if s.SysFile == "" {
				return "skipped", nil
			}
			return "", openClose(s.SysFile, os.O_WRONLY)
		}},
		{name: "block-devices", run: func() (string, error) {
			var found []string
			for _, dir := range []string{"/dev", "/dev/mapper"} {
				ents, _ := os.ReadDir(dir)
				for _, e := range ents {
					p := filepath.Join(dir, e.Name())
					if st, err := os.Stat(p); err == nil && st.Mode()&os.ModeDevice != 0 && st.Mode()&os.ModeCharDevice == 0 {
						found = append(found, p)
					}
				}
			}
			return strings.Join(found, ","), nil
		}},
		{name: "cap-bounding", run: func() (string, error) { return statusField("CapBnd") }},
		{name: "cap-effective", run: func() (string, error) { return statusField("CapEff") }},
	}

	results := map[string]string{}
	for _, c := range checks {
		if s.Control && c.unsafe {
			continue
		}
		got, err := c.run()
		if err != nil {
			results[c.name] = "err: " + err.Error()
		} else {
			results[c.name] = "ok: " + got
		}
	}
	b, _ := json.Marshal(results)
	fmt.Println(string(b))
	return 0
}

func readString(path string) (string, error) {
	b, err := os.ReadFile(path)
	return string(b), err
}

func listDir(path string) (string, error) {
	ents, err := os.ReadDir(path)
	var names []string
	for _, e := range ents {
		names = append(names, e.Name())
	}
	sort.Strings(names)
	return strings.Join(names, ","), err
}

func openClose(path string, flag int) error {
	f, err := os.OpenFile(path, flag, 0)
	if err != nil {
		return err
	}
	return f.Close()
}

func createRemove(path string) error {
	f, err := os.OpenFile(path, os.O_CREATE|os.O_EXCL|os.O_WRONLY, 0o644)
	if err != nil {
		return err
	}
	f.Close()
	return os.Remove(path)
}

// renameBack renames from to to and, if that worked, back again.
func renameBack(from, to string) error {
	if err := os.Rename(from, to); err != nil {
		return err
	}
	return os.Rename(to, from)
}

func onLockedThread(f func() error) error {
	errc := make(chan error, 1)
	go func() {
		runtime.LockOSThread() // never unlocked: the thread may be changed
		errc <- f()
	}()
	return <-errc
}

// inNewMountNamespace runs f in a mount namespace of its own, where trying
// to mount or unmount cannot disturb the test.
func inNewMountNamespace(f func() error) error {
	return onLockedThread(func() error {
		if err := unix.Unshare(unix.CLONE_NEWNS); err != nil {
			return fmt.Errorf("unshare: %w", err)
		}
		if err := unix.Mount("", "/", "", unix.MS_REC|unix.MS_PRIVATE, ""); err != nil {
			return fmt.Errorf("make private: %w", err)
		}
		return f()
	})
}

func ptraceSeize(pid int) error {
	return onLockedThread(func() error {
		_, _, errno := unix.Syscall6(unix.SYS_PTRACE, unix.PTRACE_SEIZE, uintptr(pid), 0, 0, 0, 0)
		if errno != 0 {
			return errno
		}
		return nil // the tracee is let go when this process exits
	})
}

func ptraceAttachDetach(pid int) error {
	if pid == 0 {
		return errors.New("no victim")
	}
	return onLockedThread(func() error {
		if err := unix.PtraceAttach(pid); err != nil {
			return err
		}
		var ws unix.WaitStatus
		unix.Wait4(pid, &ws, 0, nil)
		return unix.PtraceDetach(pid)
	})
}

func openByHandle(dir, handle string, typ int32) (string, error) {
	if handle == "" {
		return "skipped", nil
	}
	b, err := hex.DecodeString(handle)
	if err != nil {
		return "", err
	}
	mfd, err := unix.Open(dir, unix.O_RDONLY|unix.O_DIRECTORY, 0)
	if err != nil {
		return "", err
	}
	defer unix.Close(mfd)
	fd, err := unix.OpenByHandleAt(mfd, unix.NewFileHandle(typ, b), unix.O_RDONLY)
	if err != nil {
		return "", err
	}
	f := os.NewFile(uintptr(fd), "handle")
	defer f.Close()
	buf := make([]byte, 256)
	n, _ := f.Read(buf)
	return string(buf[:n]), nil
}

func statusField(name string) (string, error) {
	f, err := os.Open("/proc/self/status")
	if err != nil {
		return "", err
	}
	defer f.Close()
	sc := bufio.NewScanner(f)
	for sc.Scan() {
		if v, ok := strings.CutPrefix(sc.Text(), name+":"); ok {
			return strings.TrimSpace(v), nil
		}
	}
	return "", errors.New("no " + name)
}
