package confine

import (
	"fmt"
	"runtime"
	"unsafe"

	"golang.org/x/sys/unix"
)

// The seccomp filter keeps the shell from changing how the processes
// outside it run, and from typing into its terminal (see terminalIoctls).
// The kernel lets any process change the resource limits, scheduling and
// I/O priority of every process of the same user, without the ptrace
// access Landlock scopes: a shell could take the session process's
// descriptors away (prlimit), make it the OOM killer's first choice or
// starve it. Each of these calls is allowed only on the calling process
// itself (pid 0), which is how programs use them (ulimit, nice, taskset of
// a command it starts); on any other process it fails with EPERM. Writes
// to /proc/<pid>/oom_score_adj and the like are kept out by /proc being
// read-only for a root shell (see plan.mount), and for another user by the
// deployment's processes not being dumpable (procs.Undumpable).

// seccomp_data's offsets: the syscall number, the architecture, and the
// low 32 bits of the first two arguments (little-endian; pids and the
// "which" of setpriority and ioprio_set are ints, of which the kernel
// reads the low 32 bits).
const (
	offNr   = 0
	offArch = 4
	offArg0 = 16
	offArg1 = 24
)

// Values of setpriority's and ioprio_set's "which" that name one process.
const (
	prioProcess      = 0 // PRIO_PROCESS
	ioprioWhoProcess = 1 // IOPRIO_WHO_PROCESS
)

// terminalIoctls are refused whatever the descriptor: TIOCSTI pushes
// characters into a terminal's input, which a process the turn left
// running could use to type a command into the harness's (or a person's)
// shell after spear-term returns, or to answer a confirmation program that
// asks on the terminal; TIOCLINUX can paste the console's selection the
// same way.
var terminalIoctls = []uint32{unix.TIOCSTI, unix.TIOCLINUX}

// selfOnly are the native calls whose first argument is a pid that must be
// 0; whichWho those whose first two arguments are which and who.
var (
	selfOnly = []uint32{unix.SYS_PRLIMIT64, unix.SYS_SCHED_SETPARAM, unix.SYS_SCHED_SETSCHEDULER,
		unix.SYS_SCHED_SETAFFINITY, unix.SYS_SCHED_SETATTR}
	whichWho = []struct{ nr, which uint32 }{{unix.SYS_SETPRIORITY, prioProcess}, {unix.SYS_IOPRIO_SET, ioprioWhoProcess}}
)

// asm assembles a classic BPF program with forward jumps to labels.
type asm struct {
	prog   []unix.SockFilter
	labels map[string]int
	fixups []fixup
}

type fixup struct {
	at     int
	jt, jf string // "" means the next instruction
}

func (a *asm) stmt(code uint16, k uint32) {
	a.prog = append(a.prog, unix.SockFilter{Code: code, K: k})
}

func (a *asm) jump(code uint16, k uint32, jt, jf string) {
	a.fixups = append(a.fixups, fixup{len(a.prog), jt, jf})
	a.prog = append(a.prog, unix.SockFilter{Code: code, K: k})
}

func (a *asm) label(name string) {
	if a.labels == nil {
		a.labels = map[string]int{}
	}
	a.labels[name] = len(a.prog)
}

func (a *asm) assemble() ([]unix.SockFilter, error) {
	off := func(from int, to string) (uint8, error) {
		if to == "" {
			return 0, nil
		}
		at, ok := a.labels[to]
		d := at - from - 1
		if !ok || d < 0 || d > 255 {
			return 0, fmt.Errorf("confine: seccomp filter: bad jump to %q", to)
		}
		return uint8(d), nil
	}
	for _, f := range a.fixups {
		var err error
		if a.prog[f.at].Jt, err = off(f.at, f.jt); err != nil {
			return nil, err
		}
		if a.prog[f.at].Jf, err = off(f.at, f.jf); err != nil {
			return nil, err
		}
	}
	return a.prog, nil
}

const (
	ldAbs = unix.BPF_LD | unix.BPF_W | unix.BPF_ABS
	jeq   = unix.BPF_JMP | unix.BPF_JEQ | unix.BPF_K
	ret   = unix.BPF_RET | unix.BPF_K
	and   = unix.BPF_ALU | unix.BPF_AND | unix.BPF_K
)

// startFilter begins a filter for this architecture: a call of another
// architecture jumps to "foreign", a native one goes on with its number
// (x32's bit cleared) loaded.
func startFilter() (*asm, seccompArch, error) {
	arch := archSeccomp()
	if arch.native == 0 {
		return nil, arch, fmt.Errorf("confine: no seccomp filter for this architecture (%s)", runtime.GOARCH)
	}
	a := &asm{}
	a.stmt(ldAbs, offArch)
	a.jump(jeq, arch.native, "", "foreign")
	a.stmt(ldAbs, offNr)
	if arch.nrMask != 0 {
		a.stmt(and, arch.nrMask)
	}
	return a, arch, nil
}

// selfOnlyFilter builds the filter for this architecture (see
// archSeccomp): native calls checked as above; calls of the compat
// architecture (32-bit programs) that could reach another process refused
// whatever their arguments; any other architecture refused outright.
func selfOnlyFilter() ([]unix.SockFilter, error) {
	a, arch, err := startFilter()
	if err != nil {
		return nil, err
	}
	for _, nr := range selfOnly {
		a.jump(jeq, nr, "pid", "")
	}
	for _, w := range whichWho {
		a.jump(jeq, w.nr, fmt.Sprintf("which%d", w.which), "")
	}
	for _, nr := range append([]uint32{unix.SYS_IOCTL}, arch.ioctls...) {
		a.jump(jeq, nr, "ioctl", "")
	}
	a.stmt(ret, unix.SECCOMP_RET_ALLOW)

	a.label("pid")
	a.stmt(ldAbs, offArg0)
	a.jump(jeq, 0, "allow", "deny")
	for _, which := range []uint32{prioProcess, ioprioWhoProcess} {
		a.label(fmt.Sprintf("which%d", which))
		a.stmt(ldAbs, offArg1)
		a.jump(jeq, 0, "", "deny")
		a.stmt(ldAbs, offArg0)
		a.jump(jeq, which, "allow", "deny")
	}

	a.label("foreign")
	if arch.compat != 0 {
		a.jump(jeq, arch.compat, "", "deny")
		a.stmt(ldAbs, offNr)
		for _, nr := range arch.compatDenied {
			a.jump(jeq, nr, "deny", "")
		}
		a.jump(jeq, arch.compatIoctl, "ioctl", "allow")
	} else {
		a.stmt(ret, unix.SECCOMP_RET_ERRNO|uint32(unix.EPERM))
	}

	// ioctl, native or compat: no typing into the terminal, nor
	// TIOCLINUX's selection pasting (see terminalIoctls); anything else
	// goes on to allow.
	a.label("ioctl")
	a.stmt(ldAbs, offArg1)
	for _, cmd := range terminalIoctls {
		a.jump(jeq, cmd, "deny", "")
	}
	a.label("allow")
	a.stmt(ret, unix.SECCOMP_RET_ALLOW)
	a.label("deny")
	a.stmt(ret, unix.SECCOMP_RET_ERRNO|uint32(unix.EPERM))
	return a.assemble()
}

// seccompArch is what the filter needs to know of an architecture.
type seccompArch struct {
	native uint32 // AUDIT_ARCH_…
	// nrMask clears the x32 bit on amd64: x32 calls share the native
	// numbers and arguments.
	nrMask uint32
	// compat is the 32-bit architecture the kernel may also run (0 for
	// none), and compatDenied its numbers of the calls in selfOnly and
	// whichWho.
	compat       uint32
	compatDenied []uint32
	// ioctls are other native numbers of ioctl (x32's own), compatIoctl
	// the compat architecture's.
	ioctls      []uint32
	compatIoctl uint32
	// compatConnect are the compat architecture's calls that connect a
	// socket (connect, and socketcall, which multiplexes it), refused
	// where the gate takes connect (see gateFilter); nativeSocketcall is
	// the native socketcall where the architecture has one.
	compatConnect    []uint32
	nativeSocketcall uint32
}

// restrictCalls installs the filter on the calling thread, which must have
// no_new_privs set; execve keeps it, and every child inherits it.
func restrictCalls() error {
	filter, err := selfOnlyFilter()
	if err != nil {
		return err
	}
	prog := unix.SockFprog{Len: uint16(len(filter)), Filter: &filter[0]}
	if _, _, errno := unix.RawSyscall(unix.SYS_SECCOMP, unix.SECCOMP_SET_MODE_FILTER, 0, uintptr(unsafe.Pointer(&prog))); errno != 0 {
		return fmt.Errorf("confine: seccomp filter: %w", errno)
	}
	return nil
}

// seccompUnusable says why the filter cannot be installed here, or "".
func seccompUnusable() string {
	if _, err := selfOnlyFilter(); err != nil {
		return err.Error()
	}
	action := uint32(unix.SECCOMP_RET_ERRNO)
	if _, _, errno := unix.RawSyscall(unix.SYS_SECCOMP, unix.SECCOMP_GET_ACTION_AVAIL, 0, uintptr(unsafe.Pointer(&action))); errno != 0 {
		return fmt.Sprintf("the kernel offers no seccomp filters (%v): it needs Linux 4.14 or later built with CONFIG_SECCOMP_FILTER", errno)
	}
	return ""
}
