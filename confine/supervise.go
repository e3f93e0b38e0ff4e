package confine

import (
	"os"
	"os/signal"
	"runtime"
	"syscall"
	"time"

	"golang.org/x/sys/unix"

	"spear/internal/procs"
)

// starterGone is the launcher's parent-death signal: its starter (spear-term,
// or the stream-mode gateway) has died.
const starterGone = syscall.SIGUSR2

// supervise is the launcher outside a confinement. It makes itself
// undumpable and a child subreaper, confines a thread of its own (pl) and
// starts the command from that thread, which then ends, so that no thread
// of the launcher is inside the command's confinement: the command can
// neither signal nor trace it. It holds no end of the command's files. It
// then:
//
//   - passes SIGTERM and SIGHUP on to the command, and SIGINT and SIGQUIT
//     too unless a terminal sent them, which sends them to the command
//     itself;
//   - reaps every process that ends below it: the command, and every orphan
//     of its tree, which the kernel hands to it;
//   - once the command has ended, returns its status (128+n for signal n),
//     leaving what the command started in the background running, as a
//     shell would;
//   - if its starter dies first (starterGone, whatever killed it), kills
//     the command and everything it started, whatever session or process
//     group they moved to, and exits.
func supervise(pl *plan, path string, argv []string) int {
	unix.Prctl(unix.PR_SET_DUMPABLE, 0, 0, 0, 0)
	if err := unix.Prctl(unix.PR_SET_CHILD_SUBREAPER, 1, 0, 0, 0); err != nil {
		return launchFailed(err)
	}
	// Each kind of signal has a channel of its own: package signal drops
	// what a full channel cannot take, and a turn whose orphans end fast
	// enough would fill a shared one with SIGCHLD and have the starter's
	// death dropped. One pending signal of each kind is all that counts.
	gone := make(chan os.Signal, 1)
	signal.Notify(gone, starterGone)
	children := make(chan os.Signal, 1)
	signal.Notify(children, syscall.SIGCHLD)
	sigs := make(chan os.Signal, 8)
	signal.Notify(sigs, syscall.SIGTERM, syscall.SIGHUP, syscall.SIGINT, syscall.SIGQUIT)
	starter := os.Getppid()
	// Until now, a starter that died killed the launcher outright: the
	// signal's default action ends a process, and the parent-death signal
	// was checked for a dead parent before the launcher was executed.
	if pl.net != nil && pl.net.Gate != "" {
		// before the mounts hide the state directory it is in
		fd, err := dialGate(pl.net.Gate)
		if err != nil {
			return launchFailed(err)
		}
		pl.gate = fd
	}
	var pid int
	err := offMainThread(func() error {
		if err := confineThread(pl); err != nil {
			return err
		}
		var err error
		attr := &syscall.ProcAttr{Env: os.Environ(), Files: []uintptr{0, 1, 2}}
		if pl.net.joined() {
			// The launcher is 0 in the network's user namespace; the
			// command runs in one of its own below it, as the caller.
			attr.Sys = &syscall.SysProcAttr{
				Cloneflags:  syscall.CLONE_NEWUSER,
				UidMappings: []syscall.SysProcIDMap{{ContainerID: pl.net.UID, HostID: 0, Size: 1}},
				GidMappings: []syscall.SysProcIDMap{{ContainerID: pl.net.GID, HostID: 0, Size: 1}},
			}
		}
		pid, err = syscall.ForkExec(path, argv, attr)
		if err != nil {
			return &execError{path, err}
		}
		return nil
	})
	if pl.gate >= 0 {
		unix.Close(pl.gate)
	}
	if err != nil {
		return launchFailed(err)
	}
	letGoOfFiles()
	// The starter's death is also seen as this process being handed to
	// another parent, whatever became of the signal.
	tick := time.NewTicker(time.Second)
	defer tick.Stop()
	for {
		select {
		case <-gone:
			return killTree()
		case <-tick.C:
			if os.Getppid() != starter {
				return killTree()
			}
		case <-children:
			if status, ended := reapAll(pid); ended {
				return status
			}
		case sig := <-sigs:
			if (sig == syscall.SIGINT || sig == syscall.SIGQUIT) && inTerminalForeground() {
				continue // the terminal sent it to the command too
			}
			syscall.Kill(pid, sig.(syscall.Signal))
		}
	}
}

// killTree kills the command and everything below the launcher, for as
// long as anything is left there: the launcher has no other job once its
// starter is gone, and a tree that forks fast is outlasted, not given up
// on.
func killTree() int {
	procs.KillBelow(0)
	return 128 + int(syscall.SIGKILL)
}

// offMainThread runs f as onOwnThread does, on a thread that is not the
// process's main thread. The thread f confines ends with its goroutine, but
// the main thread never ends: confined, it would leave the launcher in the
// command's Landlock domain, where the command could signal it (and keep it
// from ending the tree). When the goroutine lands on the main thread, it
// holds it while another goroutine, which then cannot land there, runs f.
func offMainThread(f func() error) error {
	errc := make(chan error, 1)
	go func() {
		runtime.LockOSThread()
		if unix.Gettid() == unix.Getpid() {
			errc <- offMainThread(f)
			runtime.UnlockOSThread()
			return
		}
		errc <- f()
	}()
	return <-errc
}

// reapAll reaps every child that has ended; once the command (pid) is
// among them, it returns the command's status.
func reapAll(pid int) (int, bool) {
	status, ended := 0, false
	for {
		var ws syscall.WaitStatus
		got, err := syscall.Wait4(-1, &ws, syscall.WNOHANG, nil)
		if err == syscall.EINTR {
			continue
		}
		if err != nil || got <= 0 {
			return status, ended
		}
		if got == pid {
			ended = true
			status = ws.ExitStatus()
			if ws.Signaled() {
				status = 128 + int(ws.Signal())
			}
		}
	}
}

// letGoOfFiles closes the launcher's copies of the command's files: its
// standard files become /dev/null, and every inherited descriptor is
// closed, so that whoever reads the command's output sees its end when
// the command's tree closes it, whatever the launcher is doing.
func letGoOfFiles() {
	if null, err := os.OpenFile(os.DevNull, os.O_RDWR, 0); err == nil {
		for fd := 0; fd <= 2; fd++ {
			unix.Dup3(int(null.Fd()), fd, 0)
		}
		null.Close()
	}
	for _, f := range InheritedFiles() {
		if f != nil {
			f.Close()
		}
	}
}

// inTerminalForeground reports whether this process's group is the
// foreground process group of its controlling terminal, where the
// terminal's interrupt and quit keys reach every process in the group.
func inTerminalForeground() bool {
	tty, err := os.Open("/dev/tty")
	if err != nil {
		return false // no controlling terminal
	}
	defer tty.Close()
	pgrp, err := unix.IoctlGetInt(int(tty.Fd()), unix.TIOCGPGRP)
	return err == nil && pgrp == unix.Getpgrp()
}
