// Package confine runs the turn's shell, and everything it starts, away from
// the deployment's files and processes.
//
// The shell is started in a private mount namespace where every hidden path
// is covered by an empty, read-only stand-in and every read-only path is
// bound onto itself read-only; the directories above those paths are made
// mount points too, so that the shell can neither rename them away nor put a
// forged copy in their place. The shell then runs under a Landlock domain
// with no_new_privs set. The domain grants every file access beneath "/", so
// ordinary file access is unchanged, but a process inside it can no longer
// mount, unmount or pivot_root (the stand-ins stay), cannot ptrace or read
// the /proc files (mem, environ, fd, root, cwd, ns) of any process outside
// it, and, where the kernel offers scopes, cannot signal those processes or
// connect to their abstract unix sockets. Every shell sees /sys read-only
// and runs under a seccomp filter that lets it change resource limits,
// scheduling and I/O priority only of the process that asks, and type
// into no terminal, so that it cannot starve, slow down or set up for the
// OOM killer the processes outside, which the kernel otherwise allows a
// process of the same user. A root shell additionally sees all of /proc
// read-only and loses the capabilities that would let it reach around the
// mounts or into other processes (CAP_SYS_ADMIN, raw I/O, modules,
// open-by-handle, ptrace, network administration and the like).
//
// There are two ways in: [Exec] replaces the current process (same pid) and
// [Command] starts a confining launcher, a re-execution of the current binary
// that the binary's main hands to [LauncherMain] when its first argument is
// [LauncherArg].
//
// A path is covered where it is, not wherever its contents can be found: a
// hard link made beforehand, another mount of the same filesystem or a
// symbolic link the shell may re-point (keep the deployment reading through
// the real path) lead around it. And what the shell may write stays
// writable: its own dotfiles and programs, and for a root shell the system's
// files that unconfined processes later read or run (/etc, cron, systemd
// units). What the deployment runs from a place the shell may write belongs
// in ReadOnly.
package confine

import (
	"bufio"
	"bytes"
	"fmt"
	"os"
	"strconv"
	"strings"

	"golang.org/x/sys/unix"
)

// Policy says which paths the confined side must not reach. Every path must
// be absolute and must exist when the confinement is set up; symbolic links
// in it are resolved and the real location is covered (through the link the
// confined side then also finds the stand-in). A path beneath a hidden
// directory is hidden with it.
type Policy struct {
	// Hide lists paths the confined side can neither read nor write nor
	// create anything in. A directory is covered by an empty read-only
	// directory, a file by an empty read-only file.
	Hide []string `json:"hide,omitempty"`
	// ReadOnly lists paths the confined side may read but not write,
	// truncate, replace, rename or unlink (the turn file, say). A directory
	// is read-only with everything beneath it.
	ReadOnly []string `json:"readonly,omitempty"`
	// Network, when set, is the network namespace the confined side
	// joins instead of the host's (package netwall keeps one per
	// session).
	Network *Network `json:"network,omitempty"`
}

// Network is a network namespace kept by a process outside the
// confinement, named by its paths under /proc.
type Network struct {
	// NetNS is the network namespace, /proc/PID/ns/net.
	NetNS string `json:"netns"`
	// UserNS is, for a caller without CAP_SYS_ADMIN, the user namespace
	// that owns it, /proc/PID/ns/user, in which the caller's uid and gid
	// are 0. The launcher then joins both before it starts (through
	// nsenter: a process with threads cannot join a user namespace), and
	// starts the command in a user namespace of its own below it that
	// maps UID and GID back, so the command runs as the caller.
	UserNS string `json:"userns,omitempty"`
	UID    int    `json:"uid"`
	GID    int    `json:"gid"`
	// Gate is the holder's socket that takes the confined side's
	// connects (see gateCalls), or "" for none.
	Gate string `json:"gate,omitempty"`
}

// joined reports whether the launcher runs in the network's user
// namespace, as 0 there.
func (n *Network) joined() bool { return n != nil && n.UserNS != "" }

// nsPath matches /proc/PID/ns/KIND.
func nsPath(s, kind string) bool {
	rest, ok := strings.CutPrefix(s, "/proc/")
	if !ok {
		return false
	}
	pid, ok := strings.CutSuffix(rest, "/ns/"+kind)
	if !ok || pid == "" {
		return false
	}
	_, err := strconv.Atoi(pid)
	return err == nil
}

// LauncherArg is the first argument with which [Command] re-executes the
// current binary; a main that sees it must hand the remaining arguments to
// [LauncherMain].
const LauncherArg = "__spear_confine_launch_7f3c9a"

// marker is the source name of every mount the confinement adds; a mount
// namespace that lists one is a confinement.
const marker = "spear-confined"

// Inside reports whether this process is inside a confinement: its mount
// namespace lists a mount whose source is the confinement's marker.
//
// A confined process cannot forge a false answer for itself or for anything
// it starts. The marker mount cannot be removed: Landlock forbids mount,
// umount, move_mount and pivot_root to every process in the domain, and a new
// mount namespace made with unshare starts as a copy of the current one,
// marker included. A stand-in file at /proc/self/mountinfo (in a chroot, say)
// is not on procfs and is refused. If the mount table cannot be read or
// checked, Inside reports true: a process that cannot tell must not act as if
// it were outside. And since everything a confined process starts is confined
// too, a process that were nevertheless fooled would still reach nothing its
// caller could not.
func Inside() bool {
	f, err := openMountinfo()
	if err != nil {
		return true
	}
	defer f.Close()
	sc := bufio.NewScanner(f)
	sc.Buffer(make([]byte, 0, 64<<10), 1<<20)
	for sc.Scan() {
		if mountSource(sc.Bytes()) == marker {
			return true
		}
	}
	return sc.Err() != nil
}

// openMountinfo opens /proc/self/mountinfo, and makes sure it is procfs's.
func openMountinfo() (*os.File, error) {
	f, err := os.Open("/proc/self/mountinfo")
	if err != nil {
		return nil, err
	}
	var st unix.Statfs_t
	if err := unix.Fstatfs(int(f.Fd()), &st); err != nil || st.Type != unix.PROC_SUPER_MAGIC {
		f.Close()
		return nil, fmt.Errorf("/proc/self/mountinfo is not procfs's")
	}
	return f, nil
}

// mountSource returns the source field of one /proc/self/mountinfo line:
// the second field after the " - " separator.
func mountSource(line []byte) string {
	i := bytes.Index(line, []byte(" - "))
	if i < 0 {
		return ""
	}
	f := strings.Fields(string(line[i+3:]))
	if len(f) < 2 {
		return ""
	}
	return f[1]
}

// Support says whether and how this system can confine.
type Support struct {
	// OK reports whether Exec and Command can confine here.
	OK bool
	// Mechanism names what confines, e.g. "landlock ABI 7 + mount
	// namespace"; empty when !OK.
	Mechanism string
	// LandlockABI is the kernel's Landlock ABI version, 0 without Landlock.
	LandlockABI int
	// Scoped lists what Landlock also keeps inside the confinement:
	// "signals" and "abstract unix sockets" (ABI 6 and later).
	Scoped []string
	// Why says, when !OK, what is missing and what to do about it.
	Why string
}

// String describes the support in one line, e.g. "landlock ABI 7 + mount
// namespace (signals and abstract unix sockets scoped)".
func (s Support) String() string {
	if !s.OK {
		return "cannot confine: " + s.Why
	}
	if len(s.Scoped) == 0 {
		return s.Mechanism + " (signals and abstract unix sockets not scoped: Landlock ABI 6 needed)"
	}
	return s.Mechanism + " (" + strings.Join(s.Scoped, " and ") + " scoped)"
}

// Probe says whether and how this system can confine. It is cheap and starts
// no process: it asks the kernel for its Landlock ABI and looks at this
// process's capabilities and the user-namespace settings.
func Probe() Support {
	abi := landlockABI()
	s := Support{LandlockABI: abi}
	if abi >= 6 {
		s.Scoped = []string{"signals", "abstract unix sockets"}
	}
	if abi < 1 {
		s.Why = "the kernel offers no Landlock: it needs Linux 5.13 or later built with CONFIG_SECURITY_LANDLOCK, " +
			"with landlock in the lsm= boot parameter (or CONFIG_LSM)"
		return s
	}
	if why := seccompUnusable(); why != "" {
		s.Why = why
		return s
	}
	switch {
	case Inside():
		// No mount can be added here; what the enclosing confinement
		// keeps can be kept again, under a further Landlock domain.
		s.Mechanism = fmt.Sprintf("landlock ABI %d + seccomp within the enclosing confinement", abi)
	case mountNamespacesUnusable() != "":
		s.Why = mountNamespacesUnusable()
		return s
	case hasSysAdmin():
		s.Mechanism = fmt.Sprintf("landlock ABI %d + mount namespace + seccomp", abi)
	case userNamespacesUsable() == "":
		s.Mechanism = fmt.Sprintf("landlock ABI %d + user and mount namespaces + seccomp", abi)
	default:
		s.Why = "without CAP_SYS_ADMIN a private mount namespace needs an unprivileged user namespace, and " +
			userNamespacesUsable()
		return s
	}
	s.OK = true
	return s
}

// mountNamespacesUnusable says why no confining mount namespace can be made,
// or "".
func mountNamespacesUnusable() string {
	if n, ok := readInt("/proc/sys/user/max_mnt_namespaces"); ok && n <= 0 {
		return "user.max_mnt_namespaces is 0: set it above 0 (sysctl user.max_mnt_namespaces=10000)"
	}
	if st, err := os.Stat(staging); err != nil || !st.IsDir() {
		return staging + ", where the confinement keeps its own small tmpfs, is missing: mount procfs on /proc"
	}
	return ""
}

// userNamespacesUsable says why an unprivileged process cannot get a user
// namespace with capabilities in it, or "" if it can.
func userNamespacesUsable() string {
	if n, ok := readInt("/proc/sys/user/max_user_namespaces"); !ok || n <= 0 {
		return "user namespaces are off (user.max_user_namespaces is 0 or unreadable): " +
			"set it above 0 (sysctl user.max_user_namespaces=10000)"
	}
	if b, err := os.ReadFile("/proc/sys/kernel/unprivileged_userns_clone"); err == nil && strings.TrimSpace(string(b)) == "0" {
		return "kernel.unprivileged_userns_clone is 0: set it to 1"
	}
	if b, err := os.ReadFile("/proc/sys/kernel/apparmor_restrict_unprivileged_userns"); err == nil && strings.TrimSpace(string(b)) == "1" {
		return "AppArmor restricts unprivileged user namespaces (kernel.apparmor_restrict_unprivileged_userns is 1): " +
			"set it to 0 or give the program an AppArmor profile that allows userns"
	}
	return ""
}

func readInt(path string) (int64, bool) {
	b, err := os.ReadFile(path)
	if err != nil {
		return 0, false
	}
	n, err := strconv.ParseInt(strings.TrimSpace(string(b)), 10, 64)
	return n, err == nil
}

// hasSysAdmin reports whether CAP_SYS_ADMIN is in this thread's effective
// set, which is what mounting in a new mount namespace needs.
func hasSysAdmin() bool {
	hdr := unix.CapUserHeader{Version: unix.LINUX_CAPABILITY_VERSION_3}
	var data [2]unix.CapUserData
	if err := unix.Capget(&hdr, &data[0]); err != nil {
		return false
	}
	return data[unix.CAP_SYS_ADMIN/32].Effective&(1<<(unix.CAP_SYS_ADMIN%32)) != 0
}

// NeedsUserNamespace reports whether this process needs a user namespace of
// its own to make mount (or network) namespaces: it lacks CAP_SYS_ADMIN.
func NeedsUserNamespace() bool { return !hasSysAdmin() }
