package spear_test

import (
	"fmt"
	"io"
	"net"
	"os"
	"strings"
	"time"
)

// netprobeMain serves or dials, for the network scripts:
//
//	netprobe serve NETWORK ADDRESS FILE SECONDS   listen (tcp 127.0.0.1:0, say, or
//	                                              unix @name for an abstract socket), write the
//	                                              address to FILE, answer each connection
//	                                              "served", for SECONDS
//	netprobe dial NETWORK ADDRESS                 connect and print "reached: ANSWER" or
//	                                              "not reached: ERROR"
//	netprobe dial-host FILE                       dial FILE's port at each of the host's own
//	                                              addresses (not loopback), one line each
//	netprobe wait FILE…                           wait (up to 10 s) until each file has content
func netprobeMain(args []string) int {
	if len(args) >= 1 && args[0] == "wait" {
		for _, f := range args[1:] {
			for i := 0; ; i++ {
				if b, err := os.ReadFile(f); err == nil && len(b) > 0 {
					break
				}
				if i == 1000 {
					fmt.Fprintf(os.Stderr, "netprobe: %s: nothing after 10s\n", f)
					return 1
				}
				time.Sleep(10 * time.Millisecond)
			}
		}
		return 0
	}
	if len(args) == 2 && args[0] == "dial-host" {
		b, err := os.ReadFile(args[1])
		if err != nil {
			return 1
		}
		_, port, _ := net.SplitHostPort(string(b))
		addrs, _ := net.InterfaceAddrs()
		n := 0
		for _, a := range addrs {
			ipn, ok := a.(*net.IPNet)
			if !ok || ipn.IP.IsLoopback() || ipn.IP.IsLinkLocalUnicast() {
				continue
			}
			n++
			address := net.JoinHostPort(ipn.IP.String(), port)
			if c, err := net.DialTimeout("tcp", address, 3*time.Second); err != nil {
				fmt.Printf("%s not reached: %v\n", address, err)
			} else {
				c.Close()
				fmt.Printf("%s reached\n", address)
			}
		}
		if n == 0 {
			fmt.Println("no address of the host's own")
		}
		return 0
	}
	if len(args) < 3 {
		fmt.Fprintln(os.Stderr, "usage: netprobe serve NETWORK ADDRESS FILE SECONDS | dial NETWORK ADDRESS")
		return 2
	}
	network, address := args[1], args[2]
	if network == "unix" && strings.HasPrefix(address, "@") {
		address = "\x00" + address[1:]
	}
	switch args[0] {
	case "serve":
		if len(args) != 5 {
			return 2
		}
		var secs int
		fmt.Sscan(args[4], &secs)
		l, err := net.Listen(network, address)
		if err != nil {
			fmt.Fprintf(os.Stderr, "netprobe: %v\n", err)
			return 1
		}
		addr := l.Addr().String()
		if strings.HasPrefix(addr, "\x00") {
			addr = "@" + addr[1:]
		}
		if err := os.WriteFile(args[3], []byte(addr), 0o644); err != nil {
			return 1
		}
		go func() {
			time.Sleep(time.Duration(secs) * time.Second)
			os.Exit(0)
		}()
		for {
			c, err := l.Accept()
			if err != nil {
				return 1
			}
			io.WriteString(c, "served")
			c.Close()
		}
	case "dial":
		c, err := net.DialTimeout(network, address, 3*time.Second)
		if err != nil {
			fmt.Printf("not reached: %v\n", err)
			return 0
		}
		c.SetDeadline(time.Now().Add(3 * time.Second))
		b, _ := io.ReadAll(c)
		fmt.Printf("reached: %s\n", b)
		return 0
	}
	return 2
}
