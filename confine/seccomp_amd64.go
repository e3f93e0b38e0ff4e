package confine

import "golang.org/x/sys/unix"

// archSeccomp: x86-64, with x32 (the same numbers, bit 30 set) and i386.
func archSeccomp() seccompArch {
	return seccompArch{
		native: unix.AUDIT_ARCH_X86_64,
		nrMask: ^uint32(0x40000000),
		compat: unix.AUDIT_ARCH_I386,
		// i386: setpriority, sched_setparam, sched_setscheduler,
		// sched_setaffinity, ioprio_set, prlimit64, sched_setattr.
		compatDenied: []uint32{97, 154, 156, 241, 289, 340, 351},
		ioctls:       []uint32{514}, // x32's ioctl, once bit 30 is cleared
		compatIoctl:  54,
		// i386: socketcall, connect
		compatConnect: []uint32{102, 362},
	}
}
