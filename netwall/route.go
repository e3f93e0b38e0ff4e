package netwall

import (
	"encoding/binary"
	"fmt"
	"net/netip"

	"golang.org/x/sys/unix"
)

// addUnreachable adds an unreachable route to dst in the main table, through
// rtnetlink: a connection to it then fails at once (EHOSTUNREACH) instead
// of going out through pasta to the host.
func addUnreachable(dst netip.Prefix) error {
	family, addr := unix.AF_INET6, dst.Addr().AsSlice()
	if dst.Addr().Is4() {
		family = unix.AF_INET
	}
	ones := dst.Bits()
	attrLen := unix.SizeofRtAttr + len(addr)
	msgLen := unix.SizeofNlMsghdr + unix.SizeofRtMsg + rtaAlign(attrLen)
	b := make([]byte, msgLen)
	ne := binary.NativeEndian
	ne.PutUint32(b[0:], uint32(msgLen))
	ne.PutUint16(b[4:], unix.RTM_NEWROUTE)
	ne.PutUint16(b[6:], unix.NLM_F_REQUEST|unix.NLM_F_ACK|unix.NLM_F_CREATE|unix.NLM_F_EXCL)
	ne.PutUint32(b[8:], 1) // sequence
	rt := b[unix.SizeofNlMsghdr:]
	rt[0] = byte(family)
	rt[1] = byte(ones)
	rt[4] = unix.RT_TABLE_MAIN
	rt[5] = unix.RTPROT_STATIC
	rt[6] = unix.RT_SCOPE_UNIVERSE
	rt[7] = unix.RTN_UNREACHABLE
	at := rt[unix.SizeofRtMsg:]
	ne.PutUint16(at[0:], uint16(attrLen))
	ne.PutUint16(at[2:], unix.RTA_DST)
	copy(at[unix.SizeofRtAttr:], addr)

	fd, err := unix.Socket(unix.AF_NETLINK, unix.SOCK_RAW|unix.SOCK_CLOEXEC, unix.NETLINK_ROUTE)
	if err != nil {
		return err
	}
	defer unix.Close(fd)
	if err := unix.Sendto(fd, b, 0, &unix.SockaddrNetlink{Family: unix.AF_NETLINK}); err != nil {
		return err
	}
	reply := make([]byte, 4096)
	n, _, err := unix.Recvfrom(fd, reply, 0)
	if err != nil {
		return err
	}
	// the answer: one nlmsghdr of type NLMSG_ERROR, then the error code
	if n < unix.SizeofNlMsghdr+4 || ne.Uint16(reply[4:]) != unix.NLMSG_ERROR {
		return fmt.Errorf("rtnetlink: no acknowledgement")
	}
	if code := int32(ne.Uint32(reply[unix.SizeofNlMsghdr:])); code != 0 && unix.Errno(-code) != unix.EEXIST {
		return fmt.Errorf("rtnetlink: %w", unix.Errno(-code))
	}
	return nil
}

func rtaAlign(n int) int { return (n + unix.RTA_ALIGNTO - 1) &^ (unix.RTA_ALIGNTO - 1) }

// boundHere reports whether a unix socket of this network namespace is
// bound to the file with inode ino on device major:minor, through
// sock_diag (UDIAG_SHOW_VFS gives each bound socket's file).
func boundHere(major, minor uint32, ino uint64) (bool, error) {
	fd, err := unix.Socket(unix.AF_NETLINK, unix.SOCK_RAW|unix.SOCK_CLOEXEC, unix.NETLINK_SOCK_DIAG)
	if err != nil {
		return false, err
	}
	defer unix.Close(fd)
	const reqLen = unix.SizeofNlMsghdr + 24 // struct unix_diag_req
	b := make([]byte, reqLen)
	ne := binary.NativeEndian
	ne.PutUint32(b[0:], reqLen)
	ne.PutUint16(b[4:], unix.SOCK_DIAG_BY_FAMILY)
	ne.PutUint16(b[6:], unix.NLM_F_REQUEST|unix.NLM_F_DUMP)
	ne.PutUint32(b[8:], 1)
	r := b[unix.SizeofNlMsghdr:]
	r[0] = unix.AF_UNIX
	ne.PutUint32(r[4:], 0xffffffff) // every state
	ne.PutUint32(r[12:], 2)         // UDIAG_SHOW_VFS
	if err := unix.Sendto(fd, b, 0, &unix.SockaddrNetlink{Family: unix.AF_NETLINK}); err != nil {
		return false, err
	}
	kdev := uint64(major)<<20 | uint64(minor) // the kernel's own encoding
	found := false
	buf := make([]byte, 1<<16)
	for {
		n, _, err := unix.Recvfrom(fd, buf, 0)
		if err != nil {
			return false, err
		}
		for m := buf[:n]; len(m) >= unix.SizeofNlMsghdr; {
			l := int(ne.Uint32(m[0:]))
			if l < unix.SizeofNlMsghdr || l > len(m) {
				return false, fmt.Errorf("sock_diag: a bad message")
			}
			switch ne.Uint16(m[4:]) {
			case unix.NLMSG_DONE:
				return found, nil
			case unix.NLMSG_ERROR:
				return false, fmt.Errorf("sock_diag: an error answer")
			}
			// struct unix_diag_msg (16 bytes), then attributes
			for a := m[unix.SizeofNlMsghdr+16 : l]; len(a) >= 4; {
				al := int(ne.Uint16(a[0:]))
				if al < 4 || al > len(a) {
					break
				}
				if ne.Uint16(a[2:]) == 1 && al >= 12 { // UNIX_DIAG_VFS
					if uint64(ne.Uint32(a[4:])) == ino && uint64(ne.Uint32(a[8:])) == kdev {
						found = true
					}
				}
				a = a[min(rtaAlign(al), len(a)):]
			}
			m = m[min((l+3)&^3, len(m)):]
		}
	}
}
