//go:build !amd64 && !arm64

package confine

import (
	"runtime"

	"golang.org/x/sys/unix"
)

// archSeccomp: a 64-bit architecture whose kernel runs no other; an
// architecture not named here gets no filter, and nothing is confined.
func archSeccomp() seccompArch {
	switch runtime.GOARCH {
	case "riscv64":
		return seccompArch{native: unix.AUDIT_ARCH_RISCV64}
	case "ppc64le":
		return seccompArch{native: unix.AUDIT_ARCH_PPC64LE, nativeSocketcall: 102}
	case "s390x":
		return seccompArch{native: unix.AUDIT_ARCH_S390X, nativeSocketcall: 102}
	case "loong64":
		return seccompArch{native: unix.AUDIT_ARCH_LOONGARCH64}
	}
	return seccompArch{}
}
