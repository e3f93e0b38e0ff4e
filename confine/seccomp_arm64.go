package confine

import "golang.org/x/sys/unix"

// archSeccomp: AArch64, with 32-bit ARM (EABI) where the kernel runs it.
func archSeccomp() seccompArch {
	return seccompArch{
		native: unix.AUDIT_ARCH_AARCH64,
		compat: unix.AUDIT_ARCH_ARM,
		// ARM EABI: setpriority, sched_setparam, sched_setscheduler,
		// sched_setaffinity, ioprio_set, prlimit64, sched_setattr.
		compatDenied: []uint32{97, 154, 156, 241, 314, 369, 380},
		compatIoctl:  54,
		// ARM EABI: connect
		compatConnect: []uint32{283},
	}
}
