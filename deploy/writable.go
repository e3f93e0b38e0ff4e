package deploy

import (
	"os"
	"path/filepath"
	"strings"

	"golang.org/x/sys/unix"
)

// tempDirs are the temporary directories every shell writes in.
func tempDirs() []string { return []string{os.TempDir(), "/tmp", "/var/tmp", "/dev/shm"} }

// TurnWritable reports whether path is, or may be, one the turn's shell
// writes: a relative one (the shell's own working directory); one at or
// below home, the workspace or a temporary directory, as written or once
// its symlinks are resolved; or, for a user other than root, one this user
// may write, or that is below one (the turn's shell runs as the same user,
// and could rename it away and replace it, or make it when it does not
// exist yet). For root every path the confinement does not cover is
// writable: a root turn is only as contained as docs/security.md says.
func TurnWritable(path, home, workspace string) bool {
	if !filepath.IsAbs(path) {
		return true
	}
	var roots []string
	for _, w := range append([]string{home, workspace}, tempDirs()...) {
		// a HOME of "/" would make every path the turn's
		if filepath.IsAbs(w) && filepath.Clean(w) != "/" {
			roots = append(roots, filepath.Clean(w))
		}
	}
	names := []string{filepath.Clean(path)}
	if real, err := filepath.EvalSymlinks(path); err == nil && real != names[0] {
		names = append(names, real)
	}
	for _, name := range names {
		if Inside(roots, name) {
			return true
		}
		if os.Geteuid() == 0 {
			continue
		}
		for p := name; p != "/"; p = filepath.Dir(p) {
			if unix.Access(p, unix.W_OK) == nil {
				return true
			}
		}
	}
	return false
}

// PathOutsideTurn returns list, a PATH, without the directories the turn's
// shell may write in (TurnWritable: empty and relative entries among
// them), and the entries it left out, in their order. It is the PATH of
// what the gateway runs outside the confinement: a turn that could put a
// program of its own in one of those directories would have it run there.
func PathOutsideTurn(list, home, workspace string) (string, []string) {
	var kept, dropped []string
	for _, dir := range filepath.SplitList(list) {
		if TurnWritable(dir, home, workspace) {
			dropped = append(dropped, dir)
			continue
		}
		kept = append(kept, dir)
	}
	return strings.Join(kept, string(filepath.ListSeparator)), dropped
}
