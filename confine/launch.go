package confine

import (
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"os"
	"os/exec"
	"os/signal"
	"path/filepath"
	"runtime"
	"strconv"
	"strings"
	"syscall"

	"golang.org/x/sys/unix"
)

// rootDrops are dropped from a root shell's bounding set: each would let root
// reach around the mounts or into other processes. Kernel modules, raw I/O
// and /proc/kcore, reboot and kexec, ptrace, LSM policy, the kernel log and
// the clock; device nodes; open_by_handle_at (CAP_DAC_READ_SEARCH), which
// opens a file by its handle whatever covers its path; and CAP_SYS_ADMIN and
// CAP_PERFMON, with either of which the kernel lets even a Landlock-confined
// process read another's /proc/<pid>/environ, maps and auxv (and which with
// CAP_BPF and CAP_CHECKPOINT_RESTORE open BPF, perf and map_files); and
// CAP_NET_ADMIN and CAP_NET_RAW, with which it could redirect or read the
// providers' and the session process's network traffic (firewall rules,
// routes, raw sockets), CAP_SYS_TTY_CONFIG (vhangup of the terminal it
// shares with the harness) and CAP_SYS_PACCT.
var rootDrops = []uintptr{
	unix.CAP_SYS_MODULE, unix.CAP_SYS_RAWIO, unix.CAP_SYS_BOOT, unix.CAP_SYS_PTRACE,
	unix.CAP_MAC_ADMIN, unix.CAP_MAC_OVERRIDE, unix.CAP_SYSLOG, unix.CAP_SYS_TIME,
	unix.CAP_MKNOD, unix.CAP_DAC_READ_SEARCH, unix.CAP_SYS_ADMIN, unix.CAP_PERFMON,
	unix.CAP_BPF, unix.CAP_CHECKPOINT_RESTORE, unix.CAP_NET_ADMIN, unix.CAP_NET_RAW,
	unix.CAP_SYS_PACCT, unix.CAP_SYS_TTY_CONFIG,
}

// Exec runs path with argv and env inside a confinement that keeps p, and
// exits with its status: 128+n for signal n. The command runs under a
// confining launcher, a child of this process (see [LauncherMain]), which
// confines itself and starts the command; this process forwards SIGTERM,
// SIGHUP, SIGINT and SIGQUIT to it (the last two only when they cannot have
// come from a terminal, which sends them to the launcher and the command
// too). Should this process die first, of any signal, SIGKILL included,
// the launcher kills the command and everything it started. Exec returns
// only on an error before anything ran.
//
// Inside a confinement already (see [Inside]), where no mount can be added,
// Exec, [Command] and the launcher accept only a policy the enclosing
// confinement keeps already, add a further Landlock domain, and execute
// path in place (same pid): the enclosing launcher ends everything there.
func Exec(p Policy, path string, argv, env []string) error {
	if Inside() {
		if err := keptAlready(p); err != nil {
			return err
		}
		return onOwnThread(func() error { return confineAndExec(nil, path, argv, env) })
	}
	if _, err := newPlan(p); err != nil {
		return err
	}
	return execThroughLauncher(p, path, argv, env)
}

// onOwnThread runs f on a goroutine locked to a thread of its own and returns
// its error. The thread is never unlocked, so a thread that f left half
// confined ends with the goroutine instead of going back to the runtime.
func onOwnThread(f func() error) error {
	errc := make(chan error, 1)
	go func() {
		runtime.LockOSThread()
		errc <- f()
	}()
	return <-errc
}

// confineAndExec confines the calling thread, which must be locked, and
// executes path on it (see confineThread).
func confineAndExec(pl *plan, path string, argv, env []string) error {
	if err := confineThread(pl); err != nil {
		return err
	}
	return &execError{path, syscall.Exec(path, argv, env)}
}

// confineThread confines the calling thread, which must be locked.
// Namespaces, capabilities, no_new_privs, the Landlock domain and the
// seccomp filter all belong to the thread, and execve, or a fork, keeps
// the calling thread's, whichever thread of the process calls it. A nil
// plan means the thread is inside a confinement already (see keptAlready):
// no mount can be made there, and a further Landlock domain is all that is
// added.
func confineThread(pl *plan) error {
	abi := landlockABI()
	if abi < 1 {
		return errors.New("confine: the kernel offers no Landlock")
	}
	root := os.Geteuid() == 0 && !(pl != nil && pl.net.joined())
	if pl != nil && pl.net != nil && !pl.net.joined() {
		if err := joinNetwork(pl.net.NetNS); err != nil {
			return err
		}
	}
	if pl != nil {
		cwd, cwdErr := os.Getwd()
		if err := unix.Unshare(unix.CLONE_NEWNS); err != nil {
			return fmt.Errorf("confine: new mount namespace: %w", err)
		}
		if err := pl.mount(root); err != nil {
			return err
		}
		// The working directory may lie beneath a path just covered;
		// walking to it again goes through the stand-ins. If it cannot
		// be reached again, "/" is a safe place to start from.
		if cwdErr != nil || unix.Chdir(cwd) != nil {
			if err := unix.Chdir("/"); err != nil {
				return fmt.Errorf("confine: chdir /: %w", err)
			}
		}
	}
	if root {
		for _, c := range rootDrops {
			// EINVAL: a capability this kernel does not know.
			if err := unix.Prctl(unix.PR_CAPBSET_DROP, c, 0, 0, 0); err != nil && err != unix.EINVAL {
				return fmt.Errorf("confine: drop capability %d: %w", c, err)
			}
		}
	}
	if err := unix.Prctl(unix.PR_CAP_AMBIENT, unix.PR_CAP_AMBIENT_CLEAR_ALL, 0, 0, 0); err != nil {
		return fmt.Errorf("confine: clear ambient capabilities: %w", err)
	}
	if err := unix.Prctl(unix.PR_SET_NO_NEW_PRIVS, 1, 0, 0, 0); err != nil {
		return fmt.Errorf("confine: set no_new_privs: %w", err)
	}
	if err := restrictThread(abi); err != nil {
		return fmt.Errorf("confine: %w", err)
	}
	if err := restrictCalls(); err != nil {
		return err
	}
	if pl != nil && pl.gate >= 0 {
		return gateCalls(pl.gate)
	}
	return nil
}

// joinNetwork moves the calling thread into the network namespace at path.
func joinNetwork(path string) error {
	fd, err := unix.Open(path, unix.O_RDONLY|unix.O_CLOEXEC, 0)
	if err != nil {
		return fmt.Errorf("confine: the session's network namespace: %w", err)
	}
	defer unix.Close(fd)
	if err := unix.Setns(fd, unix.CLONE_NEWNET); err != nil {
		return fmt.Errorf("confine: joining the session's network namespace: %w", err)
	}
	return nil
}

// execError is a failure to execute the command once confined.
type execError struct {
	path string
	err  error
}

func (e *execError) Error() string { return fmt.Sprintf("confine: exec %s: %v", e.path, e.err) }
func (e *execError) Unwrap() error { return e.err }

// Command returns a command that runs path with args (argv[0] is path) inside
// a confinement that keeps p. It starts a re-execution of the current binary
// as a confining launcher (see [LauncherArg]), which confines itself and then
// executes path with the same pid, environment and open files: the caller
// sets Stdin, Stdout, Stderr, ExtraFiles and Env as usual. Without
// CAP_SYS_ADMIN the launcher starts in a new user namespace that maps the
// caller's uid and gid to themselves, with CAP_SYS_ADMIN there only until it
// executes path.
func Command(p Policy, path string, args ...string) (*exec.Cmd, error) {
	return command(p, path, append([]string{path}, args...))
}

func command(p Policy, path string, argv []string) (*exec.Cmd, error) {
	inside := Inside()
	if inside {
		if err := keptAlready(p); err != nil {
			return nil, err
		}
	} else if _, err := newPlan(p); err != nil {
		return nil, err
	}
	enc, err := encodePolicy(p)
	if err != nil {
		return nil, err
	}
	argv0 := "spear-confine"
	if len(os.Args) > 0 {
		argv0 = os.Args[0]
	}
	cmd := &exec.Cmd{
		Path: "/proc/self/exe",
		Args: append([]string{argv0, LauncherArg, enc, path}, argv...),
	}
	if inside {
		return cmd, nil
	}
	// The launcher learns that its starter died, whatever killed it: it
	// then kills the command's whole tree (see supervise). The signal
	// follows the thread that starts the launcher; a Go thread ends only
	// with a goroutine locked to it, and Exec's stays locked.
	cmd.SysProcAttr = &syscall.SysProcAttr{Pdeathsig: starterGone}
	if p.Network.joined() {
		// nsenter joins the network's user and network namespaces (a
		// process with threads cannot join a user namespace), as 0 there
		// with every capability in it, and executes the launcher. Its
		// setns drops the parent-death signal; the launcher sets it again
		// (LauncherMain).
		nsenter, err := SystemProgram("nsenter", "/usr/bin", "/bin", "/usr/sbin", "/sbin")
		if err != nil {
			return nil, fmt.Errorf("confine: joining the session's network needs nsenter (util-linux): %w", err)
		}
		self, err := os.Executable()
		if err != nil {
			return nil, fmt.Errorf("confine: %w", err)
		}
		cmd.Path = nsenter
		cmd.Args = append([]string{"nsenter", "--preserve-credentials", "--user=" + p.Network.UserNS, "--net=" + p.Network.NetNS, "--", self}, cmd.Args[1:]...)
		return cmd, nil
	}
	if !hasSysAdmin() {
		cmd.SysProcAttr.Cloneflags = syscall.CLONE_NEWUSER
		cmd.SysProcAttr.UidMappings = []syscall.SysProcIDMap{{ContainerID: os.Getuid(), HostID: os.Getuid(), Size: 1}}
		cmd.SysProcAttr.GidMappings = []syscall.SysProcIDMap{{ContainerID: os.Getgid(), HostID: os.Getgid(), Size: 1}}
		cmd.SysProcAttr.GidMappingsEnableSetgroups = false
		cmd.SysProcAttr.AmbientCaps = []uintptr{unix.CAP_SYS_ADMIN}
	}
	return cmd, nil
}

// LauncherMain is the confining launcher: a main that finds [LauncherArg] as
// its first argument calls os.Exit(LauncherMain(os.Args[2:])). It confines
// a thread of its own and starts the command from it (see supervise), with
// the same environment and every open file not marked close-on-exec, and
// returns the command's status once it has ended; if its starter dies
// first, it kills the command's whole tree. It makes its own mount
// namespace, so run by hand it cannot change the caller's; run inside a
// confinement it only confines further, and executes the command in place.
// It returns 125 if it could not confine (a bad argument, say), 126 or 127
// if the command could not be executed.
func LauncherMain(args []string) int {
	p, path, argv, err := decodeLaunch(args)
	if err != nil {
		fmt.Fprintf(os.Stderr, "%v\n", err)
		return 125
	}
	var pl *plan
	inside := Inside()
	if inside {
		err = keptAlready(p)
	} else {
		pl, err = newPlan(p)
	}
	if err != nil {
		fmt.Fprintf(os.Stderr, "%v\n", err)
		return 125
	}
	if !inside {
		if p.Network.joined() {
			runtime.LockOSThread()
			unix.Prctl(unix.PR_SET_PDEATHSIG, uintptr(starterGone), 0, 0, 0)
		}
		return supervise(pl, path, argv)
	}
	err = onOwnThread(func() error { return confineAndExec(nil, path, argv, os.Environ()) })
	return launchFailed(err)
}

// launchFailed says why the command could not be started and returns the
// status for it: 127 for a command not found, 126 for one that could not
// be executed, 125 for a confinement that could not be set up.
func launchFailed(err error) int {
	fmt.Fprintf(os.Stderr, "%v\n", err)
	var ee *execError
	switch {
	case errors.As(err, &ee) && errors.Is(err, syscall.ENOENT):
		return 127
	case errors.As(err, &ee):
		return 126
	}
	return 125
}

// SystemProgram finds name, an executable regular file, in the first of
// dirs that holds one: directories a turn that is not root cannot write,
// so that what is found outside the confinement is not the turn's.
func SystemProgram(name string, dirs ...string) (string, error) {
	for _, d := range dirs {
		p := d + "/" + name
		if fi, err := os.Stat(p); err == nil && fi.Mode().IsRegular() && unix.Access(p, unix.X_OK) == nil {
			return p, nil
		}
	}
	return "", fmt.Errorf("%s not found in %s", name, strings.Join(dirs, ", "))
}

// launchVersion tags the launcher's policy argument.
const launchVersion = "v1:"

func encodePolicy(p Policy) (string, error) {
	b, err := json.Marshal(p)
	if err != nil {
		return "", fmt.Errorf("confine: encode policy: %w", err)
	}
	return launchVersion + string(b), nil
}

// decodeLaunch reads the launcher's arguments: the encoded policy, the path
// to execute and its argv (at least argv[0]).
func decodeLaunch(args []string) (Policy, string, []string, error) {
	var p Policy
	if len(args) < 3 {
		return p, "", nil, errors.New("confine: launcher: want a policy, a path and an argv")
	}
	enc, ok := strings.CutPrefix(args[0], launchVersion)
	if !ok {
		return p, "", nil, errors.New("confine: launcher: the policy argument is not a v1 policy")
	}
	if !strings.HasPrefix(strings.TrimSpace(enc), "{") {
		return p, "", nil, errors.New("confine: launcher: bad policy: not a JSON object")
	}
	dec := json.NewDecoder(strings.NewReader(enc))
	dec.DisallowUnknownFields()
	if err := dec.Decode(&p); err != nil {
		return p, "", nil, fmt.Errorf("confine: launcher: bad policy: %w", err)
	}
	if _, err := dec.Token(); err != io.EOF {
		return p, "", nil, errors.New("confine: launcher: bad policy: trailing data")
	}
	for _, s := range append(append([]string{}, p.Hide...), p.ReadOnly...) {
		if s == "" || !filepath.IsAbs(s) || strings.ContainsRune(s, 0) {
			return p, "", nil, fmt.Errorf("confine: launcher: bad policy: path %q is not absolute", s)
		}
	}
	if n := p.Network; n != nil {
		if !nsPath(n.NetNS, "net") || (n.UserNS != "" && !nsPath(n.UserNS, "user")) || n.UID < 0 || n.GID < 0 || (n.Gate != "" && !filepath.IsAbs(n.Gate)) {
			return p, "", nil, errors.New("confine: launcher: bad policy: a network namespace not named /proc/PID/ns/…")
		}
	}
	path := args[1]
	if path == "" || strings.ContainsRune(path, 0) {
		return p, "", nil, errors.New("confine: launcher: empty path")
	}
	for _, a := range args[2:] {
		if strings.ContainsRune(a, 0) {
			return p, "", nil, errors.New("confine: launcher: argument with a NUL byte")
		}
	}
	return p, path, args[2:], nil
}

// execThroughLauncher runs the launcher as a child with this process's
// standard and inherited files, forwards signals, and exits with the
// child's status.
func execThroughLauncher(p Policy, path string, argv, env []string) error {
	cmd, err := command(p, path, argv)
	if err != nil {
		return err
	}
	cmd.Env = env
	cmd.Stdin, cmd.Stdout, cmd.Stderr = os.Stdin, os.Stdout, os.Stderr
	cmd.ExtraFiles = InheritedFiles()
	status, err := Run(cmd)
	if err != nil {
		return err
	}
	os.Exit(<-status)
	return nil
}

// Run starts cmd, a launcher from [Command] (or any command this process
// waits for in its stead), passes SIGTERM and SIGHUP on to it, and SIGINT
// and SIGQUIT too unless a terminal sent them (which sends them to the
// command as well), and returns a channel that gives its exit status (128+n
// for signal n) once it has ended. The calling goroutine stays locked to
// its thread, which the launcher's parent-death signal follows: call Run
// from the goroutine that waits for the status.
func Run(cmd *exec.Cmd) (<-chan int, error) {
	sigs := make(chan os.Signal, 8)
	signal.Notify(sigs, syscall.SIGINT, syscall.SIGTERM, syscall.SIGHUP, syscall.SIGQUIT)
	// The launcher's parent-death signal follows this thread: it stays
	// locked, so it lasts as long as the goroutine.
	runtime.LockOSThread()
	if err := cmd.Start(); err != nil {
		signal.Stop(sigs)
		return nil, fmt.Errorf("confine: start launcher: %w", err)
	}
	done := make(chan struct{})
	go func() {
		for {
			select {
			case s := <-sigs:
				if (s == syscall.SIGINT || s == syscall.SIGQUIT) && inForegroundOfTerminal() {
					continue // the terminal sent it to the whole group, the child included
				}
				cmd.Process.Signal(s)
			case <-done:
				return
			}
		}
	}()
	status := make(chan int, 1)
	go func() {
		st := exitStatus(cmd.Wait())
		signal.Stop(sigs)
		close(done)
		status <- st
	}()
	return status, nil
}

// exitStatus turns a Wait error into a shell-style exit status.
func exitStatus(err error) int {
	if err == nil {
		return 0
	}
	var ee *exec.ExitError
	if errors.As(err, &ee) {
		if ws, ok := ee.Sys().(syscall.WaitStatus); ok && ws.Signaled() {
			return 128 + int(ws.Signal())
		}
		return ee.ExitCode()
	}
	return 125
}

// InheritedFiles returns this process's open descriptors from 3 up that are
// not close-on-exec (what an in-place exec would have passed on), each at its
// own number, as exec.Cmd's ExtraFiles: entry i is descriptor 3+i, nil where
// nothing is to be passed.
func InheritedFiles() []*os.File {
	ents, err := os.ReadDir("/proc/self/fd")
	if err != nil {
		return nil
	}
	var files []*os.File
	for _, e := range ents {
		fd, err := strconv.Atoi(e.Name())
		if err != nil || fd < 3 {
			continue
		}
		flags, err := unix.FcntlInt(uintptr(fd), unix.F_GETFD, 0)
		if err != nil || flags&unix.FD_CLOEXEC != 0 {
			continue
		}
		for len(files) <= fd-3 {
			files = append(files, nil)
		}
		files[fd-3] = os.NewFile(uintptr(fd), "inherited-"+e.Name())
	}
	return files
}

// inForegroundOfTerminal reports whether this process is in the foreground
// process group of the terminal on its standard input, where the terminal's
// interrupt and quit keys reach every process in the group.
func inForegroundOfTerminal() bool {
	pgrp, err := unix.IoctlGetInt(0, unix.TIOCGPGRP)
	return err == nil && pgrp == unix.Getpgrp()
}
