package confine

import (
	"bufio"
	"fmt"
	"path/filepath"
	"strings"
)

// mountEntry is one line of /proc/self/mountinfo.
type mountEntry struct {
	point, source string
	readOnly      bool
}

func readMounts() ([]mountEntry, error) {
	f, err := openMountinfo()
	if err != nil {
		return nil, err
	}
	defer f.Close()
	var ms []mountEntry
	sc := bufio.NewScanner(f)
	sc.Buffer(make([]byte, 0, 64<<10), 1<<20)
	for sc.Scan() {
		line := sc.Bytes()
		f := strings.Fields(string(line))
		if len(f) < 6 {
			continue
		}
		ro := false
		for _, o := range strings.Split(f[5], ",") {
			ro = ro || o == "ro"
		}
		ms = append(ms, mountEntry{point: unescapeMount(f[4]), source: mountSource(line), readOnly: ro})
	}
	return ms, sc.Err()
}

// unescapeMount undoes mountinfo's octal escapes (\040 for a space, say).
func unescapeMount(s string) string {
	if !strings.Contains(s, `\`) {
		return s
	}
	var b strings.Builder
	for i := 0; i < len(s); i++ {
		if s[i] == '\\' && i+4 <= len(s) {
			if n, ok := octal3(s[i+1 : i+4]); ok {
				b.WriteByte(n)
				i += 3
				continue
			}
		}
		b.WriteByte(s[i])
	}
	return b.String()
}

func octal3(s string) (byte, bool) {
	if len(s) != 3 {
		return 0, false
	}
	n := 0
	for _, c := range []byte(s) {
		if c < '0' || c > '7' {
			return 0, false
		}
		n = n*8 + int(c-'0')
	}
	return byte(n), n < 256
}

// governing returns the mount that path (resolved) lies in: the one with
// the longest mount point containing it, the last listed (the top one) of
// those stacked on the same point.
func governing(ms []mountEntry, path string) (mountEntry, bool) {
	var best mountEntry
	found := false
	for _, m := range ms {
		if m.point == path || m.point == "/" || strings.HasPrefix(path, m.point+"/") {
			if !found || len(m.point) >= len(best.point) {
				best, found = m, true
			}
		}
	}
	return best, found
}

// resolveExisting resolves the symbolic links in the longest existing
// prefix of path and appends the rest.
func resolveExisting(path string) string {
	rest := ""
	for cur := filepath.Clean(path); ; cur = filepath.Dir(cur) {
		if r, err := filepath.EvalSymlinks(cur); err == nil {
			return filepath.Join(r, rest)
		}
		if cur == "/" || cur == "." {
			return filepath.Clean(path)
		}
		rest = filepath.Join(filepath.Base(cur), rest)
	}
}

// keptAlready checks, inside a confinement, that the enclosing confinement
// keeps p already: every hidden path lies in one of its stand-ins, every
// read-only path in a stand-in or a read-only mount, and the mount each lies
// in cannot be moved aside (the directories above it are mount points or
// read-only). Nothing can be mounted inside a confinement, so a policy that
// asks for more must fail.
func keptAlready(p Policy) error {
	ms, err := readMounts()
	if err != nil {
		return fmt.Errorf("confine: already confined, and the mount table cannot be read: %w", err)
	}
	check := func(path string, hide bool) error {
		if path == "" || !filepath.IsAbs(path) || strings.ContainsRune(path, 0) {
			return fmt.Errorf("confine: path %q is not an absolute path", path)
		}
		r := resolveExisting(path)
		m, ok := governing(ms, r)
		kept := ok && (m.source == marker || (!hide && m.readOnly))
		if kept {
			for _, d := range ancestors(m.point) {
				if dm, ok := governing(ms, d); !isMountRoot(d) && !(ok && (dm.readOnly || dm.source == marker)) {
					kept = false
				}
			}
		}
		if !kept {
			kind := "read-only"
			if hide {
				kind = "hidden"
			}
			return fmt.Errorf("confine: already confined, where nothing can be mounted, and %s path %s is not %s already", kind, path, kind)
		}
		return nil
	}
	for _, h := range p.Hide {
		if err := check(h, true); err != nil {
			return err
		}
	}
	for _, r := range p.ReadOnly {
		if err := check(r, false); err != nil {
			return err
		}
	}
	return nil
}
