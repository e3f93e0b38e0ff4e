package warm

import (
	"errors"
	"flag"
	"fmt"
	"io"
	"net"
	"os"
	"os/signal"
	"path/filepath"
	"strconv"
	"syscall"
	"time"

	"spear/internal/procs"
)

// HostArg is the first argument with which a Launcher re-executes a
// binary as a session's host; a main that sees it must hand the remaining
// arguments to HostMain and exit with its status.
const HostArg = "__spear_warm_host_4d2e8b"

// lockFD is the descriptor on which a host inherits the session's lock.
const lockFD = 3

// HostMain runs a session's host, as a Launcher starts it: flags -session,
// -dir (the session's state directory), -audit and -idle, and the
// session's lock, already taken, on descriptor 3; answer answers the
// invocations it is asked to (nil: none). It serves the socket in
// the session's directory until it shuts down or has nothing left to do,
// and returns 0; 2 when it was not started as a Launcher starts it. Every
// other descriptor it inherited is closed first.
func HostMain(args []string, answer Answerer) int {
	procs.Undumpable() // best effort; see procs.Undumpable
	fs := flag.NewFlagSet("host", flag.ContinueOnError)
	fs.SetOutput(io.Discard)
	session := fs.String("session", "", "the session's id")
	dir := fs.String("dir", "", "the session's state directory")
	auditFile := fs.String("audit", "", "the audit trail")
	idle := fs.Duration("idle", 600*time.Second, "how long a server may idle")
	if fs.Parse(args) != nil || fs.NArg() != 0 || !validTurn(*session) || !filepath.IsAbs(*dir) || *idle <= 0 {
		return 2
	}
	closeInherited(lockFD)
	lock, err := heldLock(*dir)
	if err != nil {
		return 2
	}
	ln, keep, err := listen(*dir)
	if err != nil {
		lock.Close()
		return 1
	}
	// Who serves the session, for a sessions stop that gets no answer:
	// in the session's directory, which the turn's shell cannot reach
	// (a command line it can forge; see terminate).
	writePidFile(*dir)
	if keep != nil {
		defer keep.Close()
	}
	// With nothing to keep, the host stays no longer than a server
	// would idle: a short idle timeout leaves nothing running soon.
	// What the host writes on its stderr, a runtime error's stack among
	// it, goes to its log in the session's directory, beside what it
	// recovered from.
	log := filepath.Join(*dir, LogName)
	if f, err := os.OpenFile(log, os.O_WRONLY|os.O_APPEND|os.O_CREATE, 0o600); err == nil {
		syscall.Dup3(int(f.Fd()), 2, 0)
		f.Close()
	}
	h := &Host{Session: *session, AuditFile: *auditFile, Idle: *idle, Linger: min(DefaultLinger, *idle), Answer: answer, Log: log, OnClose: func() { lock.Close() },
		Reachable: socketStays(filepath.Join(*dir, SocketName))}
	signal.Ignore(syscall.SIGINT, syscall.SIGHUP, syscall.SIGPIPE)
	sigs := make(chan os.Signal, 1)
	signal.Notify(sigs, syscall.SIGTERM)
	go func() {
		<-sigs
		h.Shutdown(WhySessionStopped)
	}()
	h.Serve(ln)
	return 0
}

// socketStays returns a check that the socket at path is still the one
// there now: the same file, not removed with the session's directory nor
// replaced. A host nothing can reach any more has nothing left to do.
func socketStays(path string) func() bool {
	var first syscall.Stat_t
	if err := syscall.Stat(path, &first); err != nil {
		return nil
	}
	return func() bool {
		var now syscall.Stat_t
		return syscall.Stat(path, &now) == nil && now.Dev == first.Dev && now.Ino == first.Ino
	}
}

// heldLock returns the session's lock on descriptor 3, checking that it is
// the lock file of dir and that this process holds it.
func heldLock(dir string) (*os.File, error) {
	var fst, pst syscall.Stat_t
	if err := syscall.Fstat(lockFD, &fst); err != nil {
		return nil, err
	}
	if err := syscall.Stat(filepath.Join(dir, LockName), &pst); err != nil {
		return nil, err
	}
	if fst.Dev != pst.Dev || fst.Ino != pst.Ino {
		return nil, errors.New("descriptor 3 is not the session's lock")
	}
	// The lock is held through this very open file, so taking it again
	// succeeds at once; were it held elsewhere, it would fail.
	if err := syscall.Flock(lockFD, syscall.LOCK_EX|syscall.LOCK_NB); err != nil {
		return nil, err
	}
	syscall.CloseOnExec(lockFD)
	return os.NewFile(lockFD, LockName), nil
}

// listen makes the session's socket, readable by this user only. When the
// path is too long for a socket address, it is made through the
// directory's descriptor, which is returned to keep open while it serves.
func listen(dir string) (*net.UnixListener, *os.File, error) {
	if err := privateDir(dir); err != nil {
		return nil, nil, err
	}
	addr, d, err := socketAddr(dir)
	if err != nil {
		return nil, nil, err
	}
	os.Remove(addr.Name) // the lock says no live host serves it
	old := syscall.Umask(0o077)
	ln, err := net.ListenUnix("unix", addr)
	syscall.Umask(old)
	if err != nil {
		if d != nil {
			d.Close()
		}
		return nil, nil, err
	}
	return ln, d, nil
}

// closeInherited closes every descriptor above 2 but keep that was
// inherited open across exec: the host holds nothing of its starter's.
// Descriptors this process opened itself are close-on-exec.
func closeInherited(keep int) {
	entries, err := os.ReadDir("/proc/self/fd")
	if err != nil {
		return
	}
	for _, e := range entries {
		fd, err := strconv.Atoi(e.Name())
		if err != nil || fd <= 2 || fd == keep {
			continue
		}
		flags, _, errno := syscall.Syscall(syscall.SYS_FCNTL, uintptr(fd), syscall.F_GETFD, 0)
		if errno == 0 && flags&syscall.FD_CLOEXEC == 0 {
			syscall.Close(fd)
		}
	}
}

// LogName is the host's log in a session's directory: the panics it
// recovered from, with their stacks, and whatever it wrote on its stderr.
const LogName = "host.log"

// PidName is the file in a session's directory that names its host: its
// pid and start time (procs.StartTime).
const PidName = "host.pid"

func writePidFile(dir string) {
	start, err := procs.StartTime(os.Getpid())
	if err != nil {
		return
	}
	tmp := filepath.Join(dir, PidName+".tmp")
	if os.WriteFile(tmp, []byte(fmt.Sprintf("%d %d\n", os.Getpid(), start)), 0o600) == nil {
		os.Rename(tmp, filepath.Join(dir, PidName))
	}
}

// hostPid returns the pid of the host the pid file in dir names, when that
// process is still the one that wrote it; 0 otherwise.
func hostPid(dir string) int {
	data, err := os.ReadFile(filepath.Join(dir, PidName))
	if err != nil {
		return 0
	}
	var pid int
	var start uint64
	if n, _ := fmt.Sscanf(string(data), "%d %d", &pid, &start); n != 2 || pid <= 0 {
		return 0
	}
	if now, err := procs.StartTime(pid); err != nil || now != start {
		return 0
	}
	return pid
}
