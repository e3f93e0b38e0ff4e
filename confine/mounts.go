package confine

import (
	"errors"
	"fmt"
	"io/fs"
	"os"
	"path/filepath"
	"sort"
	"strings"

	"golang.org/x/sys/unix"
)

// staging is where the confinement's own small tmpfs (source marker) stays
// mounted, read-only, holding the empty file that hidden files are covered
// with. /proc/fs is a directory every kernel has (per-filesystem statistics
// and the nfsd mount point) and ordinary work never needs; covering it also
// gives every confinement its marker, whatever the policy.
const staging = "/proc/fs"

// emptyFile is the stand-in for hidden files, inside staging.
const emptyFile = staging + "/empty"

// readOnlyAlways are read-only for every shell, with everything mounted
// beneath them: /sys, so that no shell can write a cgroup it was delegated
// (freeze, kill or starve the processes in it), which the kernel allows
// to any process of the user.
var readOnlyAlways = []string{"/sys"}

// rootOnly are read-only for a root shell too: all of /proc, so that it
// cannot set kernel.core_pattern, the uevent helper, binfmt_misc handlers
// or sysrq, each a way to run something outside, nor write the
// oom_score_adj, autogroup or other files of a process outside, which it
// owns (for another user, the deployment's processes are not dumpable:
// their /proc files belong to root). A root shell cannot write a uid map
// for a user namespace of its own then. It writes its own standard files
// through /proc/self/fd as before: those lead to the files themselves.
var rootOnly = []string{"/proc"}

// plan is a policy resolved against the filesystem: what to mount where.
type plan struct {
	// pins are directories above the policy's paths, shallowest first, to
	// bind onto themselves so that they become mount points: a mount point
	// cannot be renamed or removed, so the shell cannot move a hidden
	// directory's parent aside and put a forged one in its place.
	pins      []string
	hideDirs  []string
	hideFiles []string
	readOnly  []string
	// net is the network namespace to join, or nil for the host's.
	net *Network
	// gate is the launcher's connection to net's gate, or -1.
	gate int
}

// newPlan resolves p. It fails, naming the path, if a path is not absolute or
// does not exist.
func newPlan(p Policy) (*plan, error) {
	type target struct {
		given, real string
		dir, hide   bool
	}
	var targets []target
	add := func(given string, hide bool) error {
		kind := "read-only"
		if hide {
			kind = "hidden"
		}
		if given == "" || !filepath.IsAbs(given) || strings.ContainsRune(given, 0) {
			return fmt.Errorf("confine: %s path %q is not an absolute path", kind, given)
		}
		real, err := filepath.EvalSymlinks(given)
		if err != nil {
			if errors.Is(err, fs.ErrNotExist) {
				return fmt.Errorf("confine: %s path %s does not exist", kind, given)
			}
			return fmt.Errorf("confine: %s path %s: %w", kind, given, err)
		}
		st, err := os.Stat(real)
		if err != nil {
			return fmt.Errorf("confine: %s path %s: %w", kind, given, err)
		}
		if real == "/" {
			return fmt.Errorf("confine: %s path %s is the root directory", kind, given)
		}
		targets = append(targets, target{filepath.Clean(given), real, st.IsDir(), hide})
		return nil
	}
	for _, h := range p.Hide {
		if err := add(h, true); err != nil {
			return nil, err
		}
	}
	for _, r := range p.ReadOnly {
		if err := add(r, false); err != nil {
			return nil, err
		}
	}

	// A path at or beneath a hidden directory is hidden with it; hiding
	// beats read-only.
	var hidden []string
	for _, t := range targets {
		if t.hide && t.dir {
			hidden = append(hidden, t.real)
		}
	}
	covered := func(path string, self bool) bool {
		for _, h := range hidden {
			if path == h && !self {
				return true
			}
			if strings.HasPrefix(path, h+"/") {
				return true
			}
		}
		return false
	}

	// A symbolic link on the way to a path is not covered by any mount:
	// where the shell can write its directory, it could remove the link
	// and put a directory of its own in its place, which the deployment,
	// reading the path as given, would then take for its own.
	for _, t := range targets {
		if link := repointableLink(t.given, covered); link != "" {
			kind := "read-only"
			if t.hide {
				kind = "hidden"
			}
			return nil, &LinkError{Kind: kind, Path: t.given, Link: link, Real: t.real}
		}
	}

	pl := &plan{net: p.Network, gate: -1}
	seen := map[string]bool{}
	pins := map[string]bool{}
	for _, t := range targets {
		if covered(t.real, t.hide && t.dir) || seen[t.real] {
			continue
		}
		seen[t.real] = true
		switch {
		case t.hide && t.dir:
			pl.hideDirs = append(pl.hideDirs, t.real)
		case t.hide:
			pl.hideFiles = append(pl.hideFiles, t.real)
		default:
			pl.readOnly = append(pl.readOnly, t.real)
		}
		for _, d := range ancestors(t.real) {
			pins[d] = true
		}
		// The directories of the given path up to its first symbolic
		// link are real directories the reader walks through too.
		for _, d := range ancestors(t.given) {
			if r, err := filepath.EvalSymlinks(d); err != nil || r != d {
				break
			}
			pins[d] = true
		}
	}
	for d := range pins {
		if covered(d, false) || isMountRoot(d) {
			continue
		}
		pl.pins = append(pl.pins, d)
	}
	byDepth := func(s []string) {
		sort.Slice(s, func(i, j int) bool {
			di, dj := strings.Count(s[i], "/"), strings.Count(s[j], "/")
			if di != dj {
				return di < dj
			}
			return s[i] < s[j]
		})
	}
	byDepth(pl.pins)
	byDepth(pl.hideDirs)
	return pl, nil
}

// repointableLink returns the first symbolic link on the way to path (path
// itself included) whose directory this process can write and that no
// hidden directory covers (covered), or "". The shell runs as the same
// user, so what this process can write there, the shell could too.
func repointableLink(path string, covered func(string, bool) bool) string {
	parts := strings.Split(strings.TrimPrefix(filepath.Clean(path), "/"), "/")
	p := ""
	for _, part := range parts {
		p += "/" + part
		fi, err := os.Lstat(p)
		if err != nil {
			return ""
		}
		if fi.Mode()&fs.ModeSymlink == 0 {
			continue
		}
		dir := filepath.Dir(p)
		if real, err := filepath.EvalSymlinks(dir); err == nil && covered(real, false) {
			continue
		}
		if unix.Access(dir, unix.W_OK) == nil {
			return p
		}
	}
	return ""
}

// ancestors returns the directories above path, without "/", shallowest
// first.
func ancestors(path string) []string {
	var out []string
	for d := filepath.Dir(path); d != "/" && d != "."; d = filepath.Dir(d) {
		out = append(out, d)
	}
	for i, j := 0, len(out)-1; i < j; i, j = i+1, j-1 {
		out[i], out[j] = out[j], out[i]
	}
	return out
}

// isMountRoot reports whether path is already the root of a mount (and so
// already a mount point that cannot be renamed).
func isMountRoot(path string) bool {
	var st unix.Statx_t
	if err := unix.Statx(unix.AT_FDCWD, path, unix.AT_SYMLINK_NOFOLLOW, 0, &st); err != nil {
		return false
	}
	return st.Attributes_mask&unix.STATX_ATTR_MOUNT_ROOT != 0 && st.Attributes&unix.STATX_ATTR_MOUNT_ROOT != 0
}

// mount carries out the plan in the calling thread's mount namespace, which
// must be private to it. root says whether the shell will run as root.
func (pl *plan) mount(root bool) error {
	if err := unix.Mount("", "/", "", unix.MS_REC|unix.MS_PRIVATE, ""); err != nil {
		return fmt.Errorf("confine: make / private: %w", err)
	}
	const hard = unix.MS_NOSUID | unix.MS_NODEV | unix.MS_NOEXEC
	// Writable by its owner, the launcher, which may have no capability
	// but CAP_SYS_ADMIN (in a user namespace), until the file is made.
	if err := unix.Mount(marker, staging, "tmpfs", hard, "size=4k,nr_inodes=4,mode=0755"); err != nil {
		return fmt.Errorf("confine: mount staging tmpfs on %s: %w", staging, err)
	}
	fd, err := unix.Open(emptyFile, unix.O_CREAT|unix.O_EXCL|unix.O_WRONLY|unix.O_CLOEXEC, 0o444)
	if err != nil {
		return fmt.Errorf("confine: create %s: %w", emptyFile, err)
	}
	unix.Close(fd)
	if err := unix.Chmod(staging, 0o555); err != nil {
		return fmt.Errorf("confine: chmod %s: %w", staging, err)
	}
	if err := unix.Mount("", staging, "", unix.MS_REMOUNT|unix.MS_RDONLY|hard, ""); err != nil {
		return fmt.Errorf("confine: make staging read-only: %w", err)
	}

	for _, d := range pl.pins {
		if err := unix.Mount(d, d, "", unix.MS_BIND|unix.MS_REC, ""); err != nil {
			return fmt.Errorf("confine: pin %s: %w", d, err)
		}
	}
	for _, d := range pl.hideDirs {
		if err := unix.Mount(marker, d, "tmpfs", unix.MS_RDONLY|hard, "size=4k,nr_inodes=4,mode=0555"); err != nil {
			return fmt.Errorf("confine: hide %s: %w", d, err)
		}
	}
	for _, f := range pl.hideFiles {
		if err := unix.Mount(emptyFile, f, "", unix.MS_BIND, ""); err != nil {
			return fmt.Errorf("confine: hide %s: %w", f, err)
		}
		if err := makeReadOnly(f, false); err != nil {
			return fmt.Errorf("confine: hide %s: %w", f, err)
		}
	}
	for _, f := range pl.readOnly {
		if err := unix.Mount(f, f, "", unix.MS_BIND|unix.MS_REC, ""); err != nil {
			return fmt.Errorf("confine: make %s read-only: %w", f, err)
		}
		if err := makeReadOnly(f, true); err != nil {
			return fmt.Errorf("confine: make %s read-only: %w", f, err)
		}
	}
	if err := hideBlockDevices(root); err != nil {
		return err
	}
	roots := append([]string{}, readOnlyAlways...)
	if root {
		roots = append(roots, rootOnly...)
	}
	for _, p := range roots {
		if _, err := os.Lstat(p); err != nil {
			continue // not mounted here: nothing to write
		}
		// A mount of this namespace's own can be made read-only as it
		// is; a path that is not one is bound onto itself first.
		if !isMountRoot(p) {
			if err := unix.Mount(p, p, "", unix.MS_BIND|unix.MS_REC, ""); err != nil {
				return fmt.Errorf("confine: make %s read-only: %w", p, err)
			}
		}
		if err := makeReadOnly(p, true); err != nil {
			return fmt.Errorf("confine: make %s read-only: %w", p, err)
		}
	}
	return nil
}

// noBlockDevices are directories of /dev that hold no block device node of
// their own (udev's links to the nodes, other filesystems, other devices).
var noBlockDevices = map[string]bool{
	"block": true, "bus": true, "char": true, "cpu": true, "disk": true, "dri": true,
	"fd": true, "hugepages": true, "input": true, "mqueue": true, "net": true,
	"pts": true, "serial": true, "shm": true, "snd": true, "v4l": true, "vfio": true,
}

// hideBlockDevices covers every block device node in /dev (and one level of
// directories below it) that the shell could open with the empty file: read
// raw, a disk holds every hidden file's contents. For root that is every
// one; for another user those its permissions let it read or write (the
// disk group's, say).
func hideBlockDevices(root bool) error {
	var devices []string
	var scan func(dir string, depth int)
	scan = func(dir string, depth int) {
		ents, err := os.ReadDir(dir)
		if err != nil {
			return
		}
		for _, e := range ents {
			path := filepath.Join(dir, e.Name())
			switch {
			case e.Type()&fs.ModeDevice != 0 && e.Type()&fs.ModeCharDevice == 0:
				if root || unix.Faccessat(unix.AT_FDCWD, path, unix.R_OK, unix.AT_EACCESS) == nil ||
					unix.Faccessat(unix.AT_FDCWD, path, unix.W_OK, unix.AT_EACCESS) == nil {
					devices = append(devices, path)
				}
			case e.IsDir() && depth > 0 && !noBlockDevices[e.Name()]:
				scan(path, depth-1)
			}
		}
	}
	scan("/dev", 1)
	// The staging tmpfs is read-only as a whole, so each bind of its empty
	// file is read-only without a flag of its own.
	for _, d := range devices {
		if err := unix.Mount(emptyFile, d, "", unix.MS_BIND, ""); err != nil {
			return fmt.Errorf("confine: hide block device %s: %w", d, err)
		}
	}
	return nil
}

// makeReadOnly makes the mount at path read-only, with everything mounted
// beneath it if recursive.
func makeReadOnly(path string, recursive bool) error {
	var flags uint
	if recursive {
		flags = unix.AT_RECURSIVE
	}
	attr := unix.MountAttr{Attr_set: unix.MOUNT_ATTR_RDONLY}
	return unix.MountSetattr(unix.AT_FDCWD, path, flags, &attr)
}

// LinkError is a path the shell is to be kept from (hidden or read-only)
// that goes through a symbolic link in a directory the shell could write:
// no mount covers the link, so the shell could re-point it.
type LinkError struct {
	// Kind is "hidden" or "read-only".
	Kind string
	// Path is the path as given; Link the symbolic link on its way; Real
	// the path without links.
	Path, Link, Real string
}

func (e *LinkError) Error() string {
	return fmt.Sprintf("confine: %s path %s goes through the symbolic link %s, in a directory the turn's shell could write, so the shell could re-point it; name the path without links (%s), and have whatever reads it use that path", e.Kind, e.Path, e.Link, e.Real)
}
