package procs

import (
	"errors"
	"os"
	"strconv"
	"strings"
	"syscall"
	"time"

	"golang.org/x/sys/unix"
)

// Alive reports whether pid names a process that has not yet exited; a
// zombie, exited but not reaped, counts as gone.
func Alive(pid int) bool {
	st, err := stat(pid)
	if err != nil {
		return false
	}
	return st.state != "Z" && st.state != "X"
}

type procStat struct {
	comm  string
	state string
	ppid  int
	start uint64 // clock ticks after boot: with the pid, the process's identity
}

// stat reads /proc/PID/stat; the command name may hold spaces and
// parentheses, so the fields after it are found from the last ')'.
func stat(pid int) (procStat, error) {
	data, err := os.ReadFile("/proc/" + strconv.Itoa(pid) + "/stat")
	if err != nil {
		return procStat{}, err
	}
	s := string(data)
	open, close := strings.IndexByte(s, '('), strings.LastIndexByte(s, ')')
	if open < 0 || close < open {
		return procStat{}, os.ErrInvalid
	}
	// Fields 3 onwards of proc(5): state, ppid, …, starttime (22).
	fields := strings.Fields(s[close+1:])
	if len(fields) < 20 {
		return procStat{}, os.ErrInvalid
	}
	ppid, _ := strconv.Atoi(fields[1])
	start, _ := strconv.ParseUint(fields[19], 10, 64)
	return procStat{comm: s[open+1 : close], state: fields[0], ppid: ppid, start: start}, nil
}

// Ancestors returns the command names of pid's ancestors, nearest first,
// stopping at pid 1 or at the first it cannot read.
func Ancestors(pid int) []string {
	var names []string
	st, err := stat(pid)
	for i := 0; i < 512 && err == nil && st.ppid > 1; i++ {
		if st, err = stat(st.ppid); err == nil {
			names = append(names, st.comm)
		}
	}
	return names
}

// errNoGroup refuses a process group id that would signal more than one
// group: kill(2) reads 0 as the caller's own group and -1 as every process.
var errNoGroup = errors.New("not a process group id")

func signalGroup(pgid int, sig syscall.Signal) error {
	if pgid <= 1 {
		return errNoGroup
	}
	return syscall.Kill(-pgid, sig)
}

// KillGroup sends SIGKILL to every process in the process group pgid.
func KillGroup(pgid int) error { return signalGroup(pgid, syscall.SIGKILL) }

// within reports whether done is closed within d.
func within(done <-chan struct{}, d time.Duration) bool {
	t := time.NewTimer(d)
	defer t.Stop()
	select {
	case <-done:
		return true
	case <-t.C:
		return false
	}
}

// Undumpable makes the calling process not dumpable: its /proc files then
// belong to root, so that another process of the same user (a turn's
// shell) cannot write its oom_score_adj or autogroup, and only a process
// with CAP_SYS_PTRACE can read its environ or attach to it. It lasts
// until the process executes another program. The session process and
// the reapers, which outlive the commands that start them, call it.
func Undumpable() error {
	return unix.Prctl(unix.PR_SET_DUMPABLE, 0, 0, 0, 0)
}

// StartTime returns when pid started, in clock ticks after boot: with the
// pid, the process's identity, which a pid reused later does not share.
func StartTime(pid int) (uint64, error) {
	st, err := stat(pid)
	if err != nil {
		return 0, err
	}
	return st.start, nil
}
