package spear_test

import (
	"errors"
	"fmt"
	"os"
	"strconv"
	"strings"
	"syscall"

	"unsafe"

	"golang.org/x/sys/unix"
)

// reachMain is the scripts' reach command: for each pid given (0 is the
// process itself), it tries each way the kernel offers a process of the
// same user to change how another runs, each with the value already in
// place, so that a success changes nothing, and prints one line per try:
// "PID WHAT: ok" or "PID WHAT: ERRNO". With "user" it also tries the
// calls that reach every process of the user, with "tty" typing into a
// terminal (TIOCSTI).
// lowestBestEffort is the I/O priority every user may give its own
// processes (class best-effort, level 7). Setting back the priority a
// process already has is not: a process started with a real-time I/O
// class, as some machines give every process, needs CAP_SYS_ADMIN to
// keep it.
const lowestBestEffort = 2<<13 | 7

func reachMain(args []string) int {
	name := func(err error) string {
		var e syscall.Errno
		switch {
		case err == nil:
			return "ok"
		case errors.As(err, &e):
			return unix.ErrnoName(e)
		}
		return err.Error()
	}
	for _, a := range args {
		if a == "tty" {
			// TIOCSTI on a pipe: ENOTTY where the kernel looks at the
			// descriptor, EPERM where a filter refuses the request
			var p [2]int
			if err := unix.Pipe(p[:]); err != nil {
				return 1
			}
			c := byte('x')
			_, _, e := unix.Syscall(unix.SYS_IOCTL, uintptr(p[0]), unix.TIOCSTI, uintptr(unsafe.Pointer(&c)))
			fmt.Printf("tty tiocsti: %s\n", name(errnoErr(e)))
			continue
		}
		if a == "user" {
			prio, err := unix.Getpriority(unix.PRIO_USER, 0)
			if err == nil {
				// the raw call returns 20-nice
				err = unix.Setpriority(unix.PRIO_USER, 0, 20-prio)
			}
			fmt.Printf("user setpriority: %s\n", name(err))
			const ioprioWhoUser = 3
			_, _, e := unix.Syscall(unix.SYS_IOPRIO_SET, ioprioWhoUser, 0, lowestBestEffort)
			fmt.Printf("user ioprio_set: %s\n", name(errnoErr(e)))
			continue
		}
		pid, err := strconv.Atoi(a)
		if err != nil {
			fmt.Fprintf(os.Stderr, "reach: %q is not a pid\n", a)
			return 2
		}
		var lim unix.Rlimit
		err = unix.Prlimit(pid, unix.RLIMIT_NOFILE, nil, &lim)
		if err == nil {
			err = unix.Prlimit(pid, unix.RLIMIT_NOFILE, &lim, nil)
		}
		fmt.Printf("%d prlimit: %s\n", pid, name(err))

		prio, err := unix.Getpriority(unix.PRIO_PROCESS, pid)
		if err == nil {
			err = unix.Setpriority(unix.PRIO_PROCESS, pid, 20-prio)
		}
		fmt.Printf("%d setpriority: %s\n", pid, name(err))

		var set unix.CPUSet
		err = unix.SchedGetaffinity(pid, &set)
		if err == nil {
			err = unix.SchedSetaffinity(pid, &set)
		}
		fmt.Printf("%d sched_setaffinity: %s\n", pid, name(err))

		var param [1]int32
		_, _, e := unix.Syscall(unix.SYS_SCHED_GETPARAM, uintptr(pid), uintptr(unsafe.Pointer(&param)), 0)
		if e == 0 {
			_, _, e = unix.Syscall(unix.SYS_SCHED_SETPARAM, uintptr(pid), uintptr(unsafe.Pointer(&param)), 0)
		}
		fmt.Printf("%d sched_setparam: %s\n", pid, name(errnoErr(e)))

		const ioprioWhoProcess = 1
		_, _, e = unix.Syscall(unix.SYS_IOPRIO_SET, ioprioWhoProcess, uintptr(pid), lowestBestEffort)
		fmt.Printf("%d ioprio_set: %s\n", pid, name(errnoErr(e)))

		path := "/proc/self/oom_score_adj"
		if pid != 0 {
			path = "/proc/" + a + "/oom_score_adj"
		}
		cur, err := os.ReadFile(path)
		if err == nil {
			err = os.WriteFile(path, []byte(strings.TrimSpace(string(cur))), 0)
		}
		var pe *os.PathError
		if errors.As(err, &pe) {
			err = pe.Err
		}
		fmt.Printf("%d oom_score_adj: %s\n", pid, name(err))
	}
	return 0
}

func errnoErr(e syscall.Errno) error {
	if e == 0 {
		return nil
	}
	return e
}

// nofileMain is the scripts' nofile command: nofile PID N sets the
// descriptor limit of PID to N, as a process outside the turn's shell
// (or a careless operator) could.
func nofileMain(args []string) int {
	if len(args) != 2 {
		fmt.Fprintln(os.Stderr, "usage: nofile PID N")
		return 2
	}
	pid, err1 := strconv.Atoi(args[0])
	n, err2 := strconv.ParseUint(args[1], 10, 64)
	if err1 != nil || err2 != nil {
		fmt.Fprintln(os.Stderr, "usage: nofile PID N")
		return 2
	}
	if err := unix.Prlimit(pid, unix.RLIMIT_NOFILE, &unix.Rlimit{Cur: n, Max: n}, nil); err != nil {
		fmt.Fprintln(os.Stderr, "nofile:", err)
		return 1
	}
	return 0
}
