package netwall

import (
	"encoding/binary"
	"errors"
	"fmt"
	"os"
	"strconv"
	"strings"
	"sync"
	"time"
	"unsafe"

	"golang.org/x/sys/unix"
)

// gateFile is the holder's socket that takes the launchers' gates (see
// confine's gateCalls): one seccomp listener per command, whose connects
// the holder makes on the command's behalf.
const gateFile = "gate.sock"

// notif and notifResp are struct seccomp_notif and seccomp_notif_resp.
type notif struct {
	id    uint64
	pid   uint32
	flags uint32
	nr    int32
	arch  uint32
	ip    uint64
	args  [6]uint64
}

type notifResp struct {
	id    uint64
	val   int64
	error int32
	flags uint32
}

// gate takes listeners and answers their connects. bound says whether a
// socket file (its device and inode) belongs to a socket bound inside the
// namespace: the keeper asks the namespace's sock_diag.
type gate struct {
	bound func(dev, ino uint64) bool
	uid   int
}

// listen opens the gate's socket at path and serves it until the holder
// ends.
func (g *gate) listen(path string) error {
	os.Remove(path)
	fd, err := unix.Socket(unix.AF_UNIX, unix.SOCK_STREAM|unix.SOCK_CLOEXEC, 0)
	if err != nil {
		return err
	}
	if err := unix.Bind(fd, &unix.SockaddrUnix{Name: path}); err != nil {
		unix.Close(fd)
		return err
	}
	if err := unix.Listen(fd, 64); err != nil {
		unix.Close(fd)
		return err
	}
	go func() {
		for {
			c, _, err := unix.Accept4(fd, unix.SOCK_CLOEXEC)
			if err != nil {
				if errors.Is(err, unix.EINTR) || errors.Is(err, unix.ECONNABORTED) {
					continue
				}
				fmt.Fprintf(os.Stderr, "netwall: gate: accept: %v\n", err)
				return
			}
			go g.take(c)
		}
	}()
	return nil
}

// take receives one listener from a launcher of the same user, says "k",
// and serves it.
func (g *gate) take(c int) {
	defer unix.Close(c)
	if cred, err := unix.GetsockoptUcred(c, unix.SOL_SOCKET, unix.SO_PEERCRED); err != nil || int(cred.Uid) != g.uid {
		return
	}
	buf, oob := make([]byte, 1), make([]byte, unix.CmsgSpace(4*4))
	n, oobn, _, _, err := unix.Recvmsg(c, buf, oob, unix.MSG_CMSG_CLOEXEC)
	if err != nil || n != 1 || buf[0] != 'L' {
		return
	}
	msgs, err := unix.ParseSocketControlMessage(oob[:oobn])
	if err != nil || len(msgs) != 1 {
		return
	}
	fds, err := unix.ParseUnixRights(&msgs[0])
	if err != nil || len(fds) != 1 {
		for _, fd := range fds {
			unix.Close(fd)
		}
		return
	}
	go g.serve(fds[0])
	unix.Write(c, []byte{'k'})
}

// serve answers a listener's notifications until no process uses its
// filter any more.
func (g *gate) serve(l int) {
	defer unix.Close(l)
	for {
		pfd := []unix.PollFd{{Fd: int32(l), Events: unix.POLLIN}}
		n, err := unix.Poll(pfd, 5000)
		if err != nil {
			if errors.Is(err, unix.EINTR) {
				continue
			}
			return
		}
		if pfd[0].Revents&(unix.POLLHUP|unix.POLLERR|unix.POLLNVAL) != 0 {
			return
		}
		if n == 0 {
			continue
		}
		var req notif
		if _, _, e := unix.Syscall(unix.SYS_IOCTL, uintptr(l), unix.SECCOMP_IOCTL_NOTIF_RECV, uintptr(unsafe.Pointer(&req))); e != 0 {
			continue // the caller went away (ENOENT), or a signal
		}
		go g.answer(l, req)
	}
}

// answer makes the notified connect and sends its result.
func (g *gate) answer(l int, req notif) {
	errno := g.connect(l, req)
	resp := notifResp{id: req.id, error: -int32(errno)}
	unix.Syscall(unix.SYS_IOCTL, uintptr(l), unix.SECCOMP_IOCTL_NOTIF_SEND, uintptr(unsafe.Pointer(&resp)))
}

// connect makes the caller's connect(args[0], args[1], args[2]) on a copy
// of its descriptor and returns its errno (0 for success).
func (g *gate) connect(l int, req notif) unix.Errno {
	pid := int(req.pid) // a thread's id: the caller may be any thread
	pidfd, err := openThread(pid)
	if err != nil {
		return unix.EPERM
	}
	defer unix.Close(pidfd)
	sock, err := unix.PidfdGetfd(pidfd, int(int32(req.args[0])), 0)
	if err != nil {
		if errors.Is(err, unix.EBADF) {
			return unix.EBADF
		}
		return unix.EPERM
	}
	defer unix.Close(sock)
	size := req.args[2]
	if size < 2 || size > 128 {
		return unix.EINVAL
	}
	addr := make([]byte, size)
	local := []unix.Iovec{{Base: &addr[0], Len: size}}
	remote := []unix.RemoteIovec{{Base: uintptr(req.args[1]), Len: int(size)}}
	if n, err := unix.ProcessVMReadv(pid, local, remote, 0); err != nil || uint64(n) != size {
		return unix.EFAULT
	}
	// the pid is still the caller, waiting: what was read is its
	id := req.id
	if _, _, e := unix.Syscall(unix.SYS_IOCTL, uintptr(l), unix.SECCOMP_IOCTL_NOTIF_ID_VALID, uintptr(unsafe.Pointer(&id))); e != 0 {
		return unix.EINTR
	}
	if binary.NativeEndian.Uint16(addr) == unix.AF_UNIX && size > 2 && addr[2] != 0 {
		path := string(addr[2:])
		if i := strings.IndexByte(path, 0); i >= 0 {
			path = path[:i]
		}
		return g.connectPath(pid, sock, path)
	}
	_, _, e := unix.Syscall(unix.SYS_CONNECT, uintptr(sock), uintptr(unsafe.Pointer(&addr[0])), uintptr(size))
	return e
}

// connectPath connects sock to the unix socket at path as the caller pid
// sees it, if a socket inside the namespace is bound there.
func (g *gate) connectPath(pid, sock int, path string) unix.Errno {
	fd, err := openAsCaller(pid, path)
	if err != nil {
		var e unix.Errno
		if errors.As(err, &e) {
			return e
		}
		return unix.ENOENT
	}
	defer unix.Close(fd)
	var st unix.Stat_t
	if err := unix.Fstat(fd, &st); err != nil {
		return unix.ENOENT
	}
	if st.Mode&unix.S_IFMT != unix.S_IFSOCK {
		return unix.ECONNREFUSED
	}
	if !g.bound(st.Dev, st.Ino) {
		fmt.Fprintf(os.Stderr, "netwall: gate: refused pid %d a connect to %s: a socket bound outside the turn's network\n", pid, path)
		return unix.EACCES
	}
	err = unix.Connect(sock, &unix.SockaddrUnix{Name: fmt.Sprintf("/proc/self/fd/%d", fd)})
	var e unix.Errno
	if err == nil {
		return 0
	}
	if errors.As(err, &e) {
		return e
	}
	return unix.ECONNREFUSED
}

// pidfdThread is PIDFD_THREAD: a pidfd for a thread that is not its
// process's leader (Linux 6.9 and later).
const pidfdThread = unix.O_EXCL

// openThread returns a pidfd through which the thread tid's descriptors
// can be copied: its own where the kernel offers one for a thread, else
// its process's (threads share their descriptors).
func openThread(tid int) (int, error) {
	fd, err := unix.PidfdOpen(tid, pidfdThread)
	if err == nil || !errors.Is(err, unix.EINVAL) {
		return fd, err
	}
	status, err := os.ReadFile(fmt.Sprintf("/proc/%d/status", tid))
	if err != nil {
		return -1, err
	}
	for _, line := range strings.Split(string(status), "\n") {
		if v, ok := strings.CutPrefix(line, "Tgid:"); ok {
			var tgid int
			if _, err := fmt.Sscan(v, &tgid); err != nil {
				return -1, err
			}
			return unix.PidfdOpen(tgid, 0)
		}
	}
	return -1, unix.ESRCH
}

// openAsCaller opens path (O_PATH) as pid resolves it: from its root, or
// its working directory for a relative path.
func openAsCaller(pid int, path string) (int, error) {
	if strings.HasPrefix(path, "/") {
		root, err := unix.Open(fmt.Sprintf("/proc/%d/root", pid), unix.O_PATH|unix.O_DIRECTORY|unix.O_CLOEXEC, 0)
		if err != nil {
			return -1, err
		}
		defer unix.Close(root)
		return unix.Openat2(root, path, &unix.OpenHow{Flags: unix.O_PATH | unix.O_CLOEXEC, Resolve: unix.RESOLVE_IN_ROOT | unix.RESOLVE_NO_MAGICLINKS})
	}
	cwd, err := unix.Open(fmt.Sprintf("/proc/%d/cwd", pid), unix.O_PATH|unix.O_DIRECTORY|unix.O_CLOEXEC, 0)
	if err != nil {
		return -1, err
	}
	defer unix.Close(cwd)
	return unix.Openat2(cwd, path, &unix.OpenHow{Flags: unix.O_PATH | unix.O_CLOEXEC, Resolve: unix.RESOLVE_NO_MAGICLINKS})
}

// asker serialises the holder's questions to the keeper.
type asker struct {
	mu    sync.Mutex
	seq   uint64
	w     interface{ Write([]byte) (int, error) }
	lines <-chan string
}

// bound asks the keeper whether a socket bound inside is at dev, ino.
func (a *asker) bound(dev, ino uint64) bool {
	a.mu.Lock()
	defer a.mu.Unlock()
	// each question is numbered, and only its own answer counts: one that
	// comes after its time is up is never taken for the next one's
	a.seq++
	want := strconv.FormatUint(a.seq, 10) + " "
	if _, err := fmt.Fprintf(a.w, "%d %d %d %d\n", a.seq, unix.Major(dev), unix.Minor(dev), ino); err != nil {
		return false
	}
	timeout := time.After(askTimeout)
	for {
		select {
		case l, ok := <-a.lines:
			if !ok {
				return false // the keeper is gone
			}
			if answer, mine := strings.CutPrefix(l, want); mine {
				return answer == "y"
			}
			// a late "route", or a late answer to an earlier question
		case <-timeout:
			fmt.Fprintf(os.Stderr, "netwall: gate: the keeper did not answer within %s; the connect is refused\n", askTimeout)
			return false
		}
	}
}

// askTimeout bounds the keeper's answer, so that a keeper that hangs
// refuses connects instead of holding them.
const askTimeout = 5 * time.Second
