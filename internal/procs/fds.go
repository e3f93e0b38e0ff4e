package procs

import (
	"fmt"
	"os"
	"strconv"
	"syscall"
)

// CloseInheritedOnExec marks every open descriptor of this process above 2
// close-on-exec, so that a program it starts from then on gets only its
// standard files and the descriptors passed to it explicitly. The process
// itself keeps using them. Descriptors Go opens are close-on-exec already;
// this is for those the process inherited.
func CloseInheritedOnExec() error {
	var fds []int
	var err error
	for _, dir := range []string{"/proc/self/fd", "/dev/fd"} {
		if fds, err = openFDs(dir); err == nil {
			break
		}
	}
	if err != nil {
		return fmt.Errorf("listing open descriptors: %w", err)
	}
	for _, fd := range fds {
		if fd <= 2 {
			continue
		}
		flags, _, errno := syscall.Syscall(syscall.SYS_FCNTL, uintptr(fd), syscall.F_GETFD, 0)
		if errno == syscall.EBADF {
			continue // the directory listing's own descriptor, closed since
		}
		if errno != 0 {
			return fmt.Errorf("reading the flags of descriptor %d: %w", fd, errno)
		}
		if flags&syscall.FD_CLOEXEC != 0 {
			continue
		}
		if _, _, errno := syscall.Syscall(syscall.SYS_FCNTL, uintptr(fd), syscall.F_SETFD, flags|syscall.FD_CLOEXEC); errno != 0 {
			return fmt.Errorf("marking descriptor %d close-on-exec: %w", fd, errno)
		}
	}
	return nil
}

// openFDs lists the descriptors a /proc/self/fd-like directory shows.
func openFDs(dir string) ([]int, error) {
	f, err := os.Open(dir)
	if err != nil {
		return nil, err
	}
	defer f.Close()
	names, err := f.Readdirnames(-1)
	if err != nil {
		return nil, err
	}
	fds := make([]int, 0, len(names))
	for _, name := range names {
		if fd, err := strconv.Atoi(name); err == nil && fd != int(f.Fd()) {
			fds = append(fds, fd)
		}
	}
	return fds, nil
}
