// Package procs looks after processes: it reads their state from /proc, and
// starts programs whose whole process tree it can stop.
//
// StartTree runs a program under a reaper of its own: a re-execution of the
// running binary (with an argument this package's init recognises, so every
// binary that links it can be one) that marks itself a child subreaper
// (PR_SET_CHILD_SUBREAPER), starts the program in a process group of its
// own, and starts nothing else. Every process the program starts stays below
// the reaper: one that moves to a process group or a session of its own
// (setpgid, setsid) still has its parent there, and an orphan, whose parent
// exited (a double fork, a daemon), is handed by the kernel to the nearest
// subreaper above it, the reaper or a subreaper of the tree's own that is
// itself below the reaper. To stop the tree, the reaper walks /proc from
// itself down (parent pids) and signals every process it finds, parents
// before children, and repeats until it has no child left; when the program
// exits, whatever it left is killed at once. Since the reaper's only child
// of its own is the program, everything else that reaches it is an orphan of
// the tree, and it can wait for any child without taking one from anyone.
//
// Pid reuse: the reaper reaps only between its walks, in the goroutine that
// signals, so a child of the reaper cannot die and have its pid taken by
// another process before it is signalled. A deeper process is signalled
// through a pidfd, after checking that the process the pidfd names started
// in the same clock tick as the walk's (pids are handed out in turn, so the
// kernel goes round every other free pid before it reuses one); where the
// kernel has no pidfds, such a process is signalled only once its
// parents are dead and it has become the reaper's child. Tree.Stop signals
// the reaper itself through os.Process, which, with pidfds, never signals a
// process that has been reaped.
//
// Out of reach: a process the tree had something else start for it (a system
// or user service manager, cron or at, a container runtime, a terminal
// multiplexer or any other daemon already running), which was never below
// the reaper; a process placed in a pid namespace that the reaper's own does
// not contain (possible only where the reaper itself runs in a pid
// namespace, as in a container, and with privileges over the other), which
// it cannot see and whose orphans go to that namespace's init; one that took
// a user id the reaper may not signal (a setuid program that switches all
// its ids, when the reaper does not run as root); and, should the reaper
// itself be killed with SIGKILL, everything but the program (which dies with
// it). A tree that forks faster than it is killed is walked and killed again
// and again for five seconds (killFor), on after Tree.Stop has returned if
// need be; what is left after that is left to init. Each walk reads /proc
// once, so a process whose parent exits during a walk can be missed by it,
// never by the next.
package procs
