package procs

import (
	"errors"
	"fmt"
	"os"
	"os/signal"
	"runtime"
	"strconv"
	"syscall"
	"time"

	"golang.org/x/sys/unix"
)

// reaperArg, first on a command line, makes this package's init run the
// reaper instead of the binary's main: StartTree re-executes the running
// binary with it.
const reaperArg = "__spear_reaper_5b7e21"

// killFor bounds how long the reaper keeps finding and killing what is
// left of a tree: a tree that forks faster than it is killed for that
// long is given up on. It runs on its own, Tree.Stop does not wait for it.
const killFor = 5 * time.Second

func init() {
	if len(os.Args) > 1 && os.Args[1] == reaperArg {
		// Straight out: the reaper has nothing to flush, and a binary
		// built with the race detector would linger a second in os.Exit.
		syscall.Exit(reaperMain(os.Args[2:]))
	}
}

// reaperMain is the reaper StartTree starts: args are the program's path
// and its argument list; its environment, directory and descriptors 0–2
// are the program's, and descriptor 3 is where it says what became of the
// start. It makes itself a child subreaper, starts the program in a
// session (and process group) of its own, and then:
//
//   - reaps every process that ends below it: the program, and every
//     orphan of the tree, which the kernel hands to it;
//   - on SIGTERM, sends SIGTERM to every process of the tree;
//   - once the program has been reaped, or on SIGHUP (its starter died, or
//     Tree.Stop ran out of patience), kills every process of the tree until
//     none is left, for killFor at most;
//
// and exits with the program's status (exitStatus).
func reaperMain(args []string) int {
	// The program's parent-death signal follows the thread that starts
	// it; init runs on the main thread, and the reaper stays there.
	runtime.LockOSThread()
	Undumpable() // best effort: the program it starts is dumpable again
	report := os.NewFile(3, "report")
	say := func(word string, n int) {
		fmt.Fprintf(report, "%s %d\n", word, n)
		report.Close()
	}
	CloseInheritedOnExec()
	if len(args) < 2 {
		say(reportFailed, int(syscall.EINVAL))
		return 127
	}
	if err := unix.Prctl(unix.PR_SET_CHILD_SUBREAPER, 1, 0, 0, 0); err != nil {
		say(reportNoSubreaper, errnoOf(err))
		return 127
	}
	sigs := make(chan os.Signal, 16)
	signal.Notify(sigs, syscall.SIGCHLD, syscall.SIGTERM, syscall.SIGHUP)
	pid, err := syscall.ForkExec(args[0], args[1:], &syscall.ProcAttr{
		Env:   os.Environ(),
		Files: []uintptr{0, 1, 2},
		// A session of its own (so a group of its own, as KillGroup
		// needs): the program's autogroup is its own, and a turn that
		// writes the program's /proc/<pid>/autogroup (the program is
		// dumpable) slows only the program, not the reaper or the
		// session process.
		Sys: &syscall.SysProcAttr{Setsid: true, Pdeathsig: syscall.SIGKILL},
	})
	if err != nil {
		say(reportFailed, errnoOf(err))
		return 127
	}
	say(reportStarted, pid)
	// Hold no end of the program's pipes: their other ends see EOF when
	// the tree is gone, whatever the reaper is doing.
	if null, err := os.OpenFile(os.DevNull, os.O_RDWR, 0); err == nil {
		for fd := 0; fd <= 2; fd++ {
			unix.Dup3(int(null.Fd()), fd, 0)
		}
		null.Close()
	}
	r := &reaper{self: os.Getpid(), program: pid}
	return r.run(sigs)
}

func errnoOf(err error) int {
	var errno syscall.Errno
	if errors.As(err, &errno) {
		return int(errno)
	}
	return int(syscall.EINVAL)
}

// reaper is the state of a running reaper.
type reaper struct {
	self    int
	program int
	reaped  bool               // the program has been reaped
	status  syscall.WaitStatus // how it ended, once reaped
	empty   bool               // no child is left
}

// run waits for the program, passes SIGTERM to the tree, kills what is
// left, and returns the exit status to leave with.
func (r *reaper) run(sigs <-chan os.Signal) int {
	for !r.reaped {
		sig := <-sigs
		if sig == syscall.SIGHUP {
			break
		}
		if sig == syscall.SIGTERM {
			r.signalTree(syscall.SIGTERM)
		}
		r.reap()
	}
	tick := time.NewTicker(10 * time.Millisecond)
	defer tick.Stop()
	for deadline := time.Now().Add(killFor); ; {
		r.reap()
		if r.empty || time.Now().After(deadline) {
			break
		}
		r.signalTree(syscall.SIGKILL)
		select {
		case <-sigs:
		case <-tick.C:
		}
	}
	return r.exitStatus()
}

// reap reaps every child that has ended. The reaper starts no process but
// the program, so every child it has is the program or an orphan of the
// program's tree: waiting for any child takes nothing from anyone.
func (r *reaper) reap() {
	for {
		var ws syscall.WaitStatus
		pid, err := syscall.Wait4(-1, &ws, syscall.WNOHANG, nil)
		switch {
		case err == syscall.EINTR:
			continue
		case err != nil: // ECHILD
			r.empty = true
			return
		case pid == 0: // children left, none ended
			return
		case pid == r.program:
			r.reaped, r.status = true, ws
		}
	}
}

// signalTree sends sig to every live process below the reaper, parents
// before their children. Reaping happens only between walks, in this
// goroutine, so a child of the reaper keeps its pid until signalled: no
// other process can have taken it. A deeper process is signalled through
// a pidfd, and only if the process the pidfd names is the one the walk
// found: the same pid and start time (in clock ticks; for another process
// to take the pid within the same tick, the kernel would have to hand out
// every other pid in between). Its parent is not checked: killed just
// before it, that parent may have left it to a subreaper in another pid
// namespace. Where the kernel has no pidfds, a deeper process is signalled
// once its parents are dead and it is the reaper's own child.
func (r *reaper) signalTree(sig syscall.Signal) {
	// The program first, and at once: it is the likeliest to be starting
	// more while the walk runs.
	if !r.reaped {
		syscall.Kill(r.program, sig)
	}
	signalDescendants(r.self, sig)
}

// signalDescendants sends sig to every live process below self, as
// signalTree describes: a child by its pid, a deeper process through a
// pidfd, and only if it is still the process the walk found.
func signalDescendants(self int, sig syscall.Signal) {
	for _, p := range descendants(self) {
		if p.state == "Z" || p.state == "X" {
			continue
		}
		if p.ppid == self {
			syscall.Kill(p.pid, sig)
			continue
		}
		fd, err := unix.PidfdOpen(p.pid, 0)
		if err != nil {
			continue
		}
		// Were the pidfd's process dead by now, the stat below might be
		// another's, but the signal would then reach no one.
		if st, err := stat(p.pid); err == nil && st.start == p.start {
			unix.PidfdSendSignal(fd, sig, nil, 0)
		}
		unix.Close(fd)
	}
}

// KillBelow kills every process below the calling one, reaping its
// children, until none is left, or for limit at most when limit is above
// zero. Called by a child subreaper (which every orphan of its tree is
// handed to), it ends the whole tree, whatever sessions or process groups
// its processes moved to. It reaps every child: the caller must have no
// child it still waits for.
func KillBelow(limit time.Duration) {
	self := os.Getpid()
	deadline := time.Now().Add(limit)
	for {
		reapAll()
		if !hasChildren() || limit > 0 && time.Now().After(deadline) {
			return
		}
		signalDescendants(self, syscall.SIGKILL)
		reapAll()
		if hasChildren() {
			time.Sleep(time.Millisecond)
		}
	}
}

// reapAll reaps every child that has ended.
func reapAll() {
	for {
		var ws syscall.WaitStatus
		pid, err := syscall.Wait4(-1, &ws, syscall.WNOHANG, nil)
		if err == syscall.EINTR {
			continue
		}
		if err != nil || pid == 0 {
			return
		}
	}
}

// hasChildren reports whether the calling process has a child, ended or
// not.
func hasChildren() bool {
	var info unix.Siginfo
	err := unix.Waitid(unix.P_ALL, 0, &info, unix.WEXITED|unix.WNOHANG|unix.WNOWAIT, nil)
	return err != unix.ECHILD
}

// exitStatus is the program's status as the reaper can leave with it: its
// exit status, or death by the same signal for SIGKILL and SIGTERM (the
// signals a tree is stopped with); another signal n is left with as exit
// status 128+n, as a shell says it.
func (r *reaper) exitStatus() int {
	if !r.reaped {
		return 128 + int(syscall.SIGKILL)
	}
	if r.status.Exited() {
		return r.status.ExitStatus()
	}
	sig := r.status.Signal()
	if sig == syscall.SIGKILL || sig == syscall.SIGTERM {
		// Sent to this very thread, the signal is taken on the way out of
		// tgkill: SIGKILL at once, SIGTERM by the Go runtime, which, with
		// no one notified of it any more, dies of it.
		signal.Reset(sig)
		unix.Tgkill(r.self, unix.Gettid(), sig)
	}
	return 128 + int(sig)
}

// proc is one process as a walk of /proc found it.
type proc struct {
	pid int
	procStat
}

// descendants returns every process below root, parents before their
// children, as /proc shows them now. A process whose parent exits while
// the walk runs may be missed; signalTree's callers walk again until
// nothing is left.
func descendants(root int) []proc {
	d, err := os.Open("/proc")
	if err != nil {
		return nil
	}
	names, _ := d.Readdirnames(-1)
	d.Close()
	children := map[int][]proc{}
	for _, name := range names {
		pid, err := strconv.Atoi(name)
		if err != nil || pid == root {
			continue
		}
		st, err := stat(pid)
		if err != nil {
			continue
		}
		children[st.ppid] = append(children[st.ppid], proc{pid, st})
	}
	var out []proc
	seen := map[int]bool{root: true}
	queue := append([]proc(nil), children[root]...)
	for len(queue) > 0 {
		p := queue[0]
		queue = queue[1:]
		if seen[p.pid] {
			continue // a walk that saw a pid reused can see a loop
		}
		seen[p.pid] = true
		out = append(out, p)
		queue = append(queue, children[p.pid]...)
	}
	return out
}
