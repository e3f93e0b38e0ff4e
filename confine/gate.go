package confine

import (
	"fmt"
	"unsafe"

	"golang.org/x/sys/unix"
)

// The gate: where the confined side runs in a network namespace of its
// session's (Network.Gate set), every connect it makes is handed to the
// session's holder (package netwall) through a seccomp user notification,
// and the holder makes it on the caller's behalf: a pathname unix socket
// only when it was bound inside the namespace (a tmux server, D-Bus or
// gpg-agent of the user's outside is refused), anything else as asked.
// The holder makes the call itself, on a copy of the caller's descriptor,
// so that nothing the caller changes after the check (the address in its
// memory, the descriptor behind the number) can lead around it.
// io_uring, which would connect without a system call, is refused; so are
// the compat architecture's connect and socketcall.

// gateFilter builds the gate's filter.
func gateFilter() ([]unix.SockFilter, error) {
	a, arch, err := startFilter()
	if err != nil {
		return nil, err
	}
	a.jump(jeq, unix.SYS_CONNECT, "notify", "")
	if arch.nativeSocketcall != 0 {
		a.jump(jeq, arch.nativeSocketcall, "deny", "")
	}
	for _, nr := range []uint32{unix.SYS_IO_URING_SETUP, unix.SYS_IO_URING_ENTER, unix.SYS_IO_URING_REGISTER} {
		a.jump(jeq, nr, "nosys", "")
	}
	a.stmt(ret, unix.SECCOMP_RET_ALLOW)
	a.label("foreign")
	if arch.compat != 0 {
		a.jump(jeq, arch.compat, "", "deny")
		a.stmt(ldAbs, offNr)
		for _, nr := range append(arch.compatConnect, 425, 426, 427) {
			a.jump(jeq, nr, "deny", "")
		}
		a.stmt(ret, unix.SECCOMP_RET_ALLOW)
	} else {
		a.stmt(ret, unix.SECCOMP_RET_ERRNO|uint32(unix.EPERM))
	}
	a.label("notify")
	a.stmt(ret, unix.SECCOMP_RET_USER_NOTIF)
	a.label("nosys")
	a.stmt(ret, unix.SECCOMP_RET_ERRNO|uint32(unix.ENOSYS))
	a.label("deny")
	a.stmt(ret, unix.SECCOMP_RET_ERRNO|uint32(unix.EPERM))
	return a.assemble()
}

// gateCalls installs the gate's filter on the calling thread and hands its
// listener to the holder over conn (a connection to the holder's gate
// socket), waiting until the holder has taken it. The thread's copy of the
// listener is closed: once the holder is gone, the confined side's
// connects fail (ENOSYS) instead of waiting.
func gateCalls(conn int) error {
	filter, err := gateFilter()
	if err != nil {
		return err
	}
	prog := unix.SockFprog{Len: uint16(len(filter)), Filter: &filter[0]}
	fd, _, errno := unix.RawSyscall(unix.SYS_SECCOMP, unix.SECCOMP_SET_MODE_FILTER, unix.SECCOMP_FILTER_FLAG_NEW_LISTENER, uintptr(unsafe.Pointer(&prog)))
	if errno != 0 {
		return fmt.Errorf("confine: the gate's seccomp filter: %w", errno)
	}
	defer unix.Close(int(fd))
	if err := unix.Sendmsg(conn, []byte{'L'}, unix.UnixRights(int(fd)), nil, 0); err != nil {
		return fmt.Errorf("confine: handing the gate to the session's holder: %w", err)
	}
	unix.SetsockoptTimeval(conn, unix.SOL_SOCKET, unix.SO_RCVTIMEO, &unix.Timeval{Sec: 10})
	ack := make([]byte, 1)
	if n, err := unix.Read(conn, ack); err != nil || n != 1 || ack[0] != 'k' {
		return fmt.Errorf("confine: the session's holder did not take the gate (%v)", err)
	}
	return nil
}

// dialGate connects to the holder's gate socket at path, before the mounts
// hide it.
func dialGate(path string) (int, error) {
	fd, err := unix.Socket(unix.AF_UNIX, unix.SOCK_STREAM|unix.SOCK_CLOEXEC, 0)
	if err != nil {
		return -1, err
	}
	if err := unix.Connect(fd, &unix.SockaddrUnix{Name: path}); err != nil {
		unix.Close(fd)
		return -1, fmt.Errorf("confine: the session's gate %s: %w", path, err)
	}
	return fd, nil
}
