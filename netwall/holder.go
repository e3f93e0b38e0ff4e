package netwall

import (
	"bufio"
	"fmt"
	"io"
	"net/netip"
	"os"
	"os/exec"
	"os/signal"
	"path/filepath"
	"slices"
	"strconv"
	"strings"
	"syscall"
	"time"

	"golang.org/x/sys/unix"

	"spear/confine"
	"spear/internal/procs"
)

// HolderArg is the first argument with which Ensure re-executes the current
// binary as a session's holder; a main that sees it must hand the rest to
// [HolderMain].
const HolderArg = "__spear_net_holder_3c81d0"

// KeeperArg is the first argument of the keeper, the holder's child in the
// new namespaces; a main that sees it must hand the rest to [KeeperMain].
const KeeperArg = "__spear_net_keeper_9e42a7"

// systemPath is where pasta is looked for: directories a turn that is not
// root cannot write.
const systemPath = "/usr/local/sbin:/usr/local/bin:/usr/sbin:/usr/bin:/sbin:/bin"

// watchEvery is how often the holder looks at its namespace and directory.
const watchEvery = 5 * time.Second

// HolderMain is a session's holder: it starts the keeper in a new network
// namespace (and, without CAP_SYS_ADMIN, a user namespace of its own that
// maps the caller to 0), links it to the outside with pasta when outbound
// is wanted, records it in its directory and says "ok" (or "error …") on
// descriptor 3. It then lives until its directory is removed, SIGTERM, or
// it has been idle past its idle time with no process left in the
// namespace; pasta and the keeper end with it.
func HolderMain(args []string) int {
	ready := os.NewFile(3, "ready")
	say := func(format string, a ...any) {
		if ready != nil {
			fmt.Fprintf(ready, format+"\n", a...)
			ready.Close()
			ready = nil
		}
	}
	if len(args) != 3 {
		say("error netwall: holder: want a directory, a mode and an idle time")
		return 2
	}
	dir := args[0]
	want, err := ParseMode(args[1])
	secs, serr := strconv.Atoi(args[2])
	if err != nil || serr != nil || want == Host || secs <= 0 {
		say("error netwall: holder: bad arguments %q", args)
		return 2
	}
	idle := time.Duration(secs) * time.Second
	term := make(chan os.Signal, 1)
	signal.Notify(term, syscall.SIGTERM, syscall.SIGINT, syscall.SIGHUP)

	k, keeper, pasta, pastaDone, err := start(dir, want)
	if err != nil {
		say("error %v", err)
		return 1
	}
	// Only now: an undumpable parent cannot write its child's uid map,
	// and its children would be undumpable too, so that neither pasta
	// (with no CAP_SYS_PTRACE) nor a launcher that is not root could
	// open the keeper's namespaces. The keeper stays dumpable; Landlock
	// keeps the turn from its /proc files all the same.
	procs.Undumpable()
	g := &gate{bound: (&asker{w: keeperStdin, lines: keeperLines}).bound, uid: os.Geteuid()}
	if err := g.listen(filepath.Join(dir, gateFile)); err != nil {
		say("error netwall: the gate's socket: %v", err)
		return 1
	}
	k.Gate = filepath.Join(dir, gateFile)
	if err := writeRecord(dir, k); err != nil {
		say("error netwall: recording the network: %v", err)
		return 1
	}
	say("ok")
	tick := time.NewTicker(watchEvery)
	defer tick.Stop()
	for {
		select {
		case <-term:
			return quit(dir, pasta)
		case err := <-pastaDone:
			fmt.Fprintf(os.Stderr, "netwall: pasta ended (%v): the session's commands reach only their loopback now\n", err)
			pasta = nil
			k.Mode, k.Why = None, fmt.Sprintf("pasta ended (%v)", err)
			writeRecord(dir, k)
		case <-tick.C:
			if gone(dir) {
				return quit(dir, pasta)
			}
			if fi, err := os.Stat(filepath.Join(dir, usedFile)); err == nil && time.Since(fi.ModTime()) > idle && !occupied(keeper.Process.Pid) {
				return quit(dir, pasta)
			}
		}
	}
}

// nsMount is where root's holder binds the namespace for pasta.
const nsMount = "netns"

// bindNetNS binds the namespace at ns onto path, made empty first.
func bindNetNS(ns, path string) error {
	unix.Unmount(path, unix.MNT_DETACH)
	if err := os.WriteFile(path, nil, 0o600); err != nil {
		return err
	}
	return unix.Mount(ns, path, "", unix.MS_BIND, "")
}

// quit removes the record and ends pasta; the keeper ends with this
// process (its parent-death signal).
func quit(dir string, pasta *exec.Cmd) int {
	os.Remove(filepath.Join(dir, recordFile))
	unix.Unmount(filepath.Join(dir, nsMount), unix.MNT_DETACH)
	if pasta != nil {
		pasta.Process.Signal(syscall.SIGTERM)
	}
	return 0
}

// keeperStdin is the holder's end of the keeper's standard input, kept
// open (and referenced, or its finalizer would close it) for the holder's
// life.
var keeperStdin io.WriteCloser

// keeperLines are the keeper's lines: "lo", "route", then its answers.
var keeperLines <-chan string

// start starts the keeper and, for outbound, pasta, whose end the channel
// gives.
func start(dir string, want Mode) (k *Keeper, keeper, pasta *exec.Cmd, pastaDone <-chan error, err error) {
	userns := confine.NeedsUserNamespace()
	// by its path: in a new user namespace, the /proc/self/exe of an
	// undumpable process cannot be executed
	self, err := os.Executable()
	if err != nil {
		return nil, nil, nil, nil, err
	}
	keeper = &exec.Cmd{
		Path:   self,
		Args:   append([]string{os.Args[0], KeeperArg, strconv.FormatBool(want == Outbound)}, hostAddresses()...),
		Stderr: os.Stderr,
		SysProcAttr: &syscall.SysProcAttr{
			Cloneflags: syscall.CLONE_NEWNET,
			Pdeathsig:  syscall.SIGKILL,
		},
	}
	if userns {
		keeper.SysProcAttr.Cloneflags |= syscall.CLONE_NEWUSER
		keeper.SysProcAttr.UidMappings = []syscall.SysProcIDMap{{ContainerID: 0, HostID: os.Getuid(), Size: 1}}
		keeper.SysProcAttr.GidMappings = []syscall.SysProcIDMap{{ContainerID: 0, HostID: os.Getgid(), Size: 1}}
	}
	// its standard input carries the gate's questions (KeeperMain); its
	// end, the holder's, ends the keeper
	if keeperStdin, err = keeper.StdinPipe(); err != nil {
		return nil, nil, nil, nil, err
	}
	out, err := keeper.StdoutPipe()
	if err != nil {
		return nil, nil, nil, nil, err
	}
	if err := keeper.Start(); err != nil {
		return nil, nil, nil, nil, fmt.Errorf("netwall: a new network namespace: %w", err)
	}
	go keeper.Wait()
	lines := make(chan string, 4)
	keeperLines = lines
	go func() {
		sc := bufio.NewScanner(out)
		for sc.Scan() {
			lines <- sc.Text()
		}
		close(lines)
	}()
	if l := waitLine(lines, 10*time.Second); l != "lo" {
		keeper.Process.Kill()
		return nil, nil, nil, nil, fmt.Errorf("netwall: the new network namespace could not be set up (%s; see %s)", orEnded(l), filepath.Join(dir, logFile))
	}
	st, err := procs.StartTime(keeper.Process.Pid)
	if err != nil {
		keeper.Process.Kill()
		return nil, nil, nil, nil, err
	}
	k = &Keeper{Mode: None, Wanted: want, Pid: keeper.Process.Pid, Start: st, Holder: os.Getpid(), UserNS: userns}
	if want != Outbound {
		return k, keeper, nil, nil, nil
	}
	pasta, pastaDone, why := startPasta(dir, k, lines)
	if pasta == nil {
		k.Why = why
		fmt.Fprintf(os.Stderr, "netwall: outbound not provided: %s\n", why)
		return k, keeper, nil, nil, nil
	}
	k.Mode = Outbound
	return k, keeper, pasta, pastaDone, nil
}

// startPasta links the keeper's namespace to the outside and waits until
// the keeper sees its default route; it returns nil and why not on
// failure.
func startPasta(dir string, k *Keeper, lines <-chan string) (*exec.Cmd, <-chan error, string) {
	path, err := confine.SystemProgram("pasta", filepath.SplitList(systemPath)...)
	if err != nil {
		return nil, nil, "no user-mode network helper: install pasta (Debian's and Ubuntu's passt package, Fedora's passt)"
	}
	args := []string{"pasta", "-f", "-q", "--config-net", "-t", "none", "-u", "none", "-T", "none", "-U", "none",
		"--no-map-gw", "--log-file", filepath.Join(dir, "pasta.log")}
	if k.UserNS {
		args = append(args, "--userns", k.UserNSPath())
		args = append(args, "--netns", k.NetNS())
	} else {
		// Root's pasta sheds its privileges before it opens the
		// namespace, and then may not open a /proc/PID/ns file; a bind
		// mount of it is an ordinary file to open.
		bound := filepath.Join(dir, nsMount)
		if err := bindNetNS(k.NetNS(), bound); err != nil {
			return nil, nil, fmt.Sprintf("the namespace could not be bound for pasta: %v", err)
		}
		args = append(args, "--netns-only", "--runas", "0", "--no-netns-quit", "--netns", bound)
		// pasta holds the namespace once it is up: the mount goes then,
		// so that nothing is left mounted in the state directory
		defer unix.Unmount(bound, unix.MNT_DETACH)
	}
	pasta := &exec.Cmd{Path: path, Args: args, Stderr: os.Stderr,
		SysProcAttr: &syscall.SysProcAttr{Pdeathsig: syscall.SIGTERM}}
	if err := pasta.Start(); err != nil {
		return nil, nil, fmt.Sprintf("pasta could not be started: %v", err)
	}
	ended := make(chan error, 1)
	go func() { ended <- pasta.Wait() }()
	select {
	case l := <-lines:
		if l == "route" {
			return pasta, ended, ""
		}
	case err := <-ended:
		return nil, nil, fmt.Sprintf("pasta ended before the network was up (%v; its log: %s)", err, filepath.Join(dir, "pasta.log"))
	case <-time.After(15 * time.Second):
	}
	pasta.Process.Kill()
	return nil, nil, fmt.Sprintf("pasta did not bring the network up within 15s (its log: %s)", filepath.Join(dir, "pasta.log"))
}

func waitLine(lines <-chan string, d time.Duration) string {
	select {
	case l := <-lines:
		return l
	case <-time.After(d):
		return "timed out"
	}
}

func orEnded(l string) string {
	if l == "" {
		return "the keeper ended"
	}
	return l
}

// hostAddresses lists the host's own addresses, but loopback's and
// link-local ones, each as a one-address prefix: inside, each is an
// unreachable route. (Read through rtnetlink: package net would make
// spear-term load the C library.)
func hostAddresses() []string {
	rib, err := syscall.NetlinkRIB(syscall.RTM_GETADDR, syscall.AF_UNSPEC)
	if err != nil {
		return nil
	}
	msgs, err := syscall.ParseNetlinkMessage(rib)
	if err != nil {
		return nil
	}
	var out []string
	for _, m := range msgs {
		if m.Header.Type != syscall.RTM_NEWADDR {
			continue
		}
		attrs, err := syscall.ParseNetlinkRouteAttr(&m)
		if err != nil {
			continue
		}
		for _, a := range attrs {
			if a.Attr.Type != syscall.IFA_ADDRESS && a.Attr.Type != syscall.IFA_LOCAL {
				continue
			}
			ip, ok := netip.AddrFromSlice(a.Value)
			if !ok || ip.IsLoopback() || ip.IsLinkLocalUnicast() {
				continue
			}
			p := netip.PrefixFrom(ip.Unmap(), ip.Unmap().BitLen()).String()
			if !slices.Contains(out, p) {
				out = append(out, p)
			}
		}
	}
	return out
}

// occupied reports whether a process other than the keeper is in the
// keeper's network namespace. A process whose namespace cannot be read
// (another user's, an undumpable one) is not counted.
func occupied(keeper int) bool {
	want, err := os.Readlink(fmt.Sprintf("/proc/%d/ns/net", keeper))
	if err != nil {
		return false
	}
	ents, err := os.ReadDir("/proc")
	if err != nil {
		return true
	}
	for _, e := range ents {
		pid, err := strconv.Atoi(e.Name())
		if err != nil || pid == keeper {
			continue
		}
		if l, err := os.Readlink("/proc/" + e.Name() + "/ns/net"); err == nil && l == want {
			return true
		}
	}
	return false
}

// KeeperMain is the keeper: in the new network namespace, it brings its
// loopback up and makes each address given (the host's own) an
// unreachable route, says "lo", then, if its first argument is "true",
// "route" once a default route appears (pasta's), and lives until its standard input ends (the holder's end).
func KeeperMain(args []string) int {
	if len(args) < 1 {
		fmt.Fprintln(os.Stderr, "netwall: keeper: want whether to wait for a route, and addresses")
		return 2
	}
	waitRoute := args[0] == "true"
	args = args[1:]
	if err := loopbackUp(); err != nil {
		fmt.Fprintf(os.Stderr, "netwall: keeper: loopback: %v\n", err)
		return 1
	}
	for _, a := range args {
		p, err := netip.ParsePrefix(a)
		if err != nil {
			fmt.Fprintf(os.Stderr, "netwall: keeper: bad address %q\n", a)
			return 2
		}
		if err := addUnreachable(p); err != nil {
			fmt.Fprintf(os.Stderr, "netwall: keeper: unreachable route to %s: %v\n", a, err)
			return 1
		}
	}
	fmt.Println("lo")
	go func() {
		for i := 0; waitRoute && i < 3000; i++ {
			if hasDefaultRoute() {
				fmt.Println("route")
				return
			}
			time.Sleep(5 * time.Millisecond)
		}
	}()
	// the holder's questions for the gate: "SEQ MAJOR MINOR INODE", is a
	// socket bound there inside? ("SEQ y" or "SEQ n")
	sc := bufio.NewScanner(os.Stdin)
	for sc.Scan() {
		var seq uint64
		var major, minor uint32
		var ino uint64
		if _, err := fmt.Sscan(sc.Text(), &seq, &major, &minor, &ino); err != nil {
			fmt.Fprintf(os.Stderr, "netwall: keeper: a bad question %q\n", sc.Text())
			continue
		}
		ok, err := boundHere(major, minor, ino)
		if err != nil {
			fmt.Fprintf(os.Stderr, "netwall: keeper: %v\n", err)
		}
		answer := "n"
		if ok {
			answer = "y"
		}
		fmt.Printf("%d %s\n", seq, answer)
	}
	return 0
}

// loopbackUp sets the namespace's lo up.
func loopbackUp() error {
	fd, err := unix.Socket(unix.AF_INET, unix.SOCK_DGRAM|unix.SOCK_CLOEXEC, 0)
	if err != nil {
		return err
	}
	defer unix.Close(fd)
	ifr, err := unix.NewIfreq("lo")
	if err != nil {
		return err
	}
	if err := unix.IoctlIfreq(fd, unix.SIOCGIFFLAGS, ifr); err != nil {
		return err
	}
	ifr.SetUint16(ifr.Uint16() | unix.IFF_UP)
	return unix.IoctlIfreq(fd, unix.SIOCSIFFLAGS, ifr)
}

// hasDefaultRoute reports whether the namespace has an IPv4 default route.
func hasDefaultRoute() bool {
	data, err := os.ReadFile("/proc/self/net/route")
	if err != nil {
		return false
	}
	for _, line := range strings.Split(string(data), "\n")[1:] {
		f := strings.Fields(line)
		if len(f) > 2 && f[1] == "00000000" {
			return true
		}
	}
	return false
}
