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
