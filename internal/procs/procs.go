// Package procs answers questions about processes from /proc.
package procs

import (
	"os"
	"strconv"
	"strings"
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
	fields := strings.Fields(s[close+1:])
	if len(fields) < 2 {
		return procStat{}, os.ErrInvalid
	}
	ppid, _ := strconv.Atoi(fields[1])
	return procStat{comm: s[open+1 : close], state: fields[0], ppid: ppid}, nil
}

// Ancestors returns the command names of pid's ancestors, nearest first,
// stopping at pid 1 or at the first it cannot read.
func Ancestors(pid int) []string {
	var names []string
	for i := 0; i < 512; i++ {
		st, err := stat(pid)
		if err != nil || st.ppid <= 1 {
			return names
		}
		pid = st.ppid
		parent, err := stat(pid)
		if err != nil {
			return names
		}
		names = append(names, parent.comm)
	}
	return names
}
