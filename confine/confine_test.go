package confine

import (
	"bytes"
	"encoding/hex"
	"encoding/json"
	"net"
	"os"
	"os/exec"
	"os/signal"
	"path/filepath"
	"regexp"
	"strconv"
	"strings"
	"sync/atomic"
	"syscall"
	"testing"
	"time"

	"golang.org/x/sys/unix"
)

const nobody = 65534

func requireSupport(t testing.TB) Support {
	t.Helper()
	s := Probe()
	if !s.OK && os.Getenv("SPEAR_REQUIRE_CONFINE") == "1" {
		// make test sets it: a confinement that broke must fail, not
		// skip every test of it
		t.Fatalf("this system cannot confine: %s", s.Why)
	}
	if !s.OK {
		t.Skipf("this system cannot confine: %s", s.Why)
	}
	return s
}

func requireRoot(t testing.TB) {
	t.Helper()
	if os.Geteuid() != 0 {
		t.Skip("needs root: the non-root path is tested by running the helpers as nobody")
	}
}

// newTree builds a deployment to attack under a fresh directory owned by
// uid, and the policy that protects it. Every file is readable and writable
// by uid, so that only the confinement can stand in the way.
func newTree(t testing.TB, uid int) (tree, Policy) {
	t.Helper()
	base, err := os.MkdirTemp("", "confine-test-")
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { os.RemoveAll(base) })
	tr := tree{
		Base:       base,
		Home:       filepath.Join(base, "home"),
		HiddenDir:  filepath.Join(base, "home", ".config", "spear"),
		HiddenFile: filepath.Join(base, "token"),
		ReadOnly:   filepath.Join(base, "turn", "turn.json"),
		Alias:      filepath.Join(base, "alias", "vault"),
		AliasReal:  filepath.Join(base, "real", "vault"),
		Link:       filepath.Join(base, "link-to-secret"),
		Mnt:        filepath.Join(base, "mnt"),
	}
	for _, d := range []string{tr.HiddenDir, filepath.Dir(tr.ReadOnly), tr.AliasReal, tr.Mnt} {
		must(t, os.MkdirAll(d, 0o755))
	}
	must(t, os.WriteFile(filepath.Join(tr.HiddenDir, "registry"), []byte(secret), 0o644))
	must(t, os.WriteFile(filepath.Join(tr.Home, ".config", "other"), []byte("other"), 0o644))
	must(t, os.WriteFile(tr.HiddenFile, []byte(secret), 0o644))
	must(t, os.WriteFile(tr.ReadOnly, []byte("turn"), 0o644))
	must(t, os.WriteFile(filepath.Join(tr.AliasReal, "key"), []byte(secret), 0o644))
	must(t, os.Symlink("real", filepath.Join(base, "alias")))
	must(t, os.Symlink(filepath.Join(tr.HiddenDir, "registry"), tr.Link))
	must(t, filepath.Walk(base, func(p string, _ os.FileInfo, err error) error {
		if err != nil {
			return err
		}
		return os.Lchown(p, uid, uid)
	}))
	must(t, os.Chmod(base, 0o755))
	return tr, Policy{
		// The real path: a policy that names the alias is refused (see
		// TestPlanRefusesRepointableLink); reading through it still
		// meets the hidden directory.
		Hide:     []string{tr.HiddenDir, tr.HiddenFile, tr.AliasReal},
		ReadOnly: []string{tr.ReadOnly},
	}
}

const secret = "s3cret-deployment-value"

func must(t testing.TB, err error) {
	t.Helper()
	if err != nil {
		t.Fatal(err)
	}
}

// unconfined is what the attacks aim at besides files: an abstract socket
// the test process listens on, a SIGUSR1 counter, and a victim to ptrace.
type unconfined struct {
	abstract string
	usr1     atomic.Int32
	victim   *exec.Cmd
}

func newUnconfined(t *testing.T, victimUID int) *unconfined {
	u := &unconfined{abstract: "spear-confine-test-" + randomHex(6)}
	l, err := net.Listen("unix", "@"+u.abstract)
	must(t, err)
	t.Cleanup(func() { l.Close() })
	go func() {
		for {
			c, err := l.Accept()
			if err != nil {
				return
			}
			c.Close()
		}
	}()
	sigs := make(chan os.Signal, 16)
	signal.Notify(sigs, syscall.SIGUSR1)
	done := make(chan struct{})
	go func() {
		for {
			select {
			case <-sigs:
				u.usr1.Add(1)
			case <-done:
				return
			}
		}
	}()
	t.Cleanup(func() { signal.Stop(sigs); close(done) })
	u.victim = exec.Command("sleep", "300")
	if victimUID != 0 {
		u.victim.SysProcAttr = &syscall.SysProcAttr{Credential: &syscall.Credential{Uid: uint32(victimUID), Gid: uint32(victimUID)}}
	}
	must(t, u.victim.Start())
	t.Cleanup(func() { u.victim.Process.Kill(); u.victim.Wait() })
	return u
}

func (u *unconfined) spec(tr tree, p Policy, root bool) spec {
	s := spec{Policy: p, Tree: tr, Victim: u.victim.Process.Pid, Abstract: u.abstract}
	if root {
		s.SignalPid = os.Getpid()
		h, _, err := unix.NameToHandleAt(unix.AT_FDCWD, filepath.Join(tr.HiddenDir, "registry"), 0)
		if err == nil {
			s.Handle, s.HandleType = hex.EncodeToString(h.Bytes()), h.Type()
		}
		s.SysFile = "/sys/kernel/profiling"
		if _, err := os.Stat(s.SysFile); err != nil {
			s.SysFile = ""
		}
	}
	return s
}

// runProbe runs the probe with spec s: confined through Command from this
// process, or unconfined for a control run.
func runProbe(t *testing.T, s spec) map[string]string {
	t.Helper()
	self, err := os.Executable()
	must(t, err)
	b, _ := json.Marshal(s)
	var cmd *exec.Cmd
	if s.Control {
		cmd = exec.Command(self)
	} else {
		cmd, err = Command(s.Policy, self)
		must(t, err)
	}
	cmd.Env = append(helperEnv(), envMode+"=probe", envSpec+"="+string(b))
	return probeOutput(t, cmd)
}

func probeOutput(t *testing.T, cmd *exec.Cmd) map[string]string {
	t.Helper()
	var stderr bytes.Buffer
	cmd.Stderr = &stderr
	out, err := cmd.Output()
	if err != nil {
		t.Fatalf("probe: %v\nstdout: %s\nstderr: %s", err, out, stderr.String())
	}
	res := map[string]string{}
	if err := json.Unmarshal(out, &res); err != nil {
		t.Fatalf("probe output: %v\n%s\nstderr: %s", err, out, stderr.String())
	}
	return res
}

// denied asserts that attempt name failed, with one of the errors in want if
// any are given.
func denied(t *testing.T, res map[string]string, name string, want ...syscall.Errno) {
	t.Helper()
	got, ok := res[name]
	switch {
	case !ok:
		t.Errorf("%s: not tried", name)
	case !strings.HasPrefix(got, "err: "):
		t.Errorf("%s: reached (%q), want it refused", name, got)
	case len(want) > 0:
		for _, e := range want {
			if strings.HasSuffix(got, e.Error()) {
				return
			}
		}
		t.Errorf("%s: %s, want one of %v", name, got, want)
	}
}

// reached asserts that attempt name worked and, if want is given, what it
// got.
func reached(t *testing.T, res map[string]string, name string, want ...string) {
	t.Helper()
	got, ok := res[name]
	switch {
	case !ok:
		t.Errorf("%s: not tried", name)
	case !strings.HasPrefix(got, "ok: "):
		t.Errorf("%s: %s, want it to work", name, got)
	case len(want) > 0 && got != "ok: "+want[0]:
		t.Errorf("%s: got %q, want %q", name, strings.TrimPrefix(got, "ok: "), want[0])
	}
}

// keptToItself checks that the shell could change neither the parent's
// limits and scheduling nor those of every process of the user, write no
// cgroup, and type into no terminal (the seccomp filter and a read-only
// /sys), while it sets its own limits as before.
func keptToItself(t *testing.T, res map[string]string) {
	t.Helper()
	denied(t, res, "prlimit-parent", unix.EPERM)
	denied(t, res, "setpriority-parent", unix.EPERM)
	denied(t, res, "setpriority-user", unix.EPERM)
	denied(t, res, "sched-setaffinity-parent", unix.EPERM)
	reached(t, res, "sys-mounts", "read-only")
	denied(t, res, "tiocsti", unix.EPERM)
	reached(t, res, "prlimit-self")
}

// usernsRefused checks that a user namespace of the shell's own could
// neither unmount (EINVAL: the kernel keeps mounts inherited into a less
// privileged namespace locked; EPERM: Landlock) nor mount, nor read what
// is hidden.
func usernsRefused(t *testing.T, res map[string]string) {
	t.Helper()
	// One line of the output says it; under -cover a binary run as
	// another user adds lines about the coverage it could not write.
	want := regexp.MustCompile(`(?m)^ok: umount-hidden=(EPERM|EINVAL) umount-marker=(EPERM|EINVAL) mount=EPERM read=ENOENT$`)
	if got := res["userns-umount"]; !want.MatchString(got) {
		t.Errorf("userns-umount: got %q, want it refused", got)
	}
}

func noSecret(t *testing.T, res map[string]string, name string) {
	t.Helper()
	if got := res[name]; strings.Contains(got, secret) || strings.Contains(got, os.Getenv(envSecret)) {
		t.Errorf("%s: the secret leaked: %q", name, got)
	}
}

// TestAttacksAsRoot runs every attack from a confined root process and, as
// a control, from an unconfined one: what the control reaches and the
// confined process does not, the confinement took away.
func TestAttacksAsRoot(t *testing.T) {
	sup := requireSupport(t)
	requireRoot(t)
	u := newUnconfined(t, 0)

	t.Run("control", func(t *testing.T) {
		tr, p := newTree(t, 0)
		s := u.spec(tr, p, true)
		s.Control = true
		before := u.usr1.Load()
		res := runProbe(t, s)
		for _, name := range []string{
			"hidden-create", "hidden-write", "hidden-mkdir", "hidden-via-new-hardlink",
			"hidden-rename-dir", "hidden-rename-parent", "hidden-rename-grandparent",
			"hidden-file-write", "ro-write", "ro-rename-away", "ro-rename-parent",
			"mount-tmpfs", "proc-mem", "proc-fd", "proc-root", "proc-cwd", "proc-ns",
			"ptrace-victim", "setns-parent", "kill-0", "kill-usr1", "abstract-connect",
			"prlimit-parent", "setpriority-parent", "setpriority-user", "sched-setaffinity-parent", "prlimit-self",
			"abstract-own", "core-pattern-write", "sys-write",
		} {
			reached(t, res, name)
		}
		for _, name := range []string{"hidden-read", "hidden-via-old-symlink", "hidden-via-new-symlink",
			"hidden-file-read", "alias-read", "alias-real-read", "open-by-handle"} {
			reached(t, res, name, secret)
		}
		reached(t, res, "hidden-list", "registry")
		if !strings.Contains(res["tiocsti"], "inappropriate ioctl") {
			t.Errorf("tiocsti: the control got %q, not ENOTTY", res["tiocsti"])
		}
		if !strings.Contains(res["userns-umount"], "mount=0") {
			t.Errorf("userns-umount: the control could not mount: %q", res["userns-umount"])
		}
		reached(t, res, "inside", "false")
		reached(t, res, "inside-grandchild", "false")
		if res["block-devices"] == "ok: " {
			t.Log("this machine has no block device for the confined run to lose")
		}
		if !strings.Contains(res["proc-environ"], os.Getenv(envSecret)) {
			t.Errorf("proc-environ: the control did not find the secret: %q", res["proc-environ"])
		}
		waitFor(func() bool { return u.usr1.Load() > before })
		if u.usr1.Load() == before {
			t.Error("kill-usr1: the control's signal did not arrive")
		}
	})

	t.Run("confined", func(t *testing.T) {
		tr, p := newTree(t, 0)
		s := u.spec(tr, p, true)
		before := u.usr1.Load()
		res := runProbe(t, s)
		for name := range res {
			noSecret(t, res, name)
		}
		// Hidden directory: nothing to read or list, nothing can be
		// made there, and no way around through links.
		denied(t, res, "hidden-read", unix.ENOENT)
		reached(t, res, "hidden-list", "")
		denied(t, res, "hidden-create", unix.EROFS)
		denied(t, res, "hidden-write", unix.ENOENT)
		denied(t, res, "hidden-mkdir", unix.EROFS)
		denied(t, res, "hidden-via-old-symlink", unix.ENOENT)
		denied(t, res, "hidden-via-new-symlink", unix.ENOENT)
		denied(t, res, "hidden-via-new-hardlink", unix.ENOENT)
		// Nor can it be moved aside, with its parents, to put a forged
		// one in its place.
		denied(t, res, "hidden-rename-dir", unix.EBUSY)
		denied(t, res, "hidden-rename-parent", unix.EBUSY)
		denied(t, res, "hidden-rename-grandparent", unix.EBUSY)
		// Hidden file: reads as empty, cannot be written or removed.
		reached(t, res, "hidden-file-read", "")
		denied(t, res, "hidden-file-write", unix.EROFS)
		denied(t, res, "hidden-file-unlink", unix.EBUSY)
		// A path given through a symbolic link: hidden under both names.
		denied(t, res, "alias-read", unix.ENOENT)
		denied(t, res, "alias-real-read", unix.ENOENT)
		// Read-only file: readable, not writable or replaceable.
		reached(t, res, "ro-read", "turn")
		denied(t, res, "ro-write", unix.EROFS)
		denied(t, res, "ro-truncate", unix.EROFS)
		denied(t, res, "ro-rename-over", unix.EBUSY)
		denied(t, res, "ro-unlink", unix.EBUSY)
		denied(t, res, "ro-rename-away", unix.EBUSY)
		denied(t, res, "ro-rename-parent", unix.EBUSY)
		// No mount or umount, not even in a new mount namespace.
		denied(t, res, "mount-tmpfs", unix.EPERM)
		denied(t, res, "umount-hidden", unix.EPERM)
		denied(t, res, "umount-marker", unix.EPERM)
		// A user namespace gives the shell CAP_SYS_ADMIN over a mount
		// namespace of its own; Landlock still refuses.
		usernsRefused(t, res)
		// The unconfined parent's /proc files, ptrace, setns, signals
		// and abstract sockets are out of reach.
		denied(t, res, "proc-environ", unix.EACCES)
		denied(t, res, "proc-mem", unix.EACCES)
		denied(t, res, "proc-fd", unix.EACCES)
		denied(t, res, "proc-root", unix.EACCES)
		denied(t, res, "proc-cwd", unix.EACCES)
		denied(t, res, "proc-ns", unix.EACCES)
		denied(t, res, "ptrace-parent", unix.EPERM)
		denied(t, res, "ptrace-victim", unix.EPERM)
		keptToItself(t, res)
		denied(t, res, "setns-parent", unix.EPERM)
		denied(t, res, "open-by-handle", unix.EPERM)
		if sup.LandlockABI >= 6 {
			denied(t, res, "kill-0", unix.EPERM)
			denied(t, res, "kill-usr1", unix.EPERM)
			denied(t, res, "abstract-connect", unix.EPERM)
		}
		reached(t, res, "abstract-own")
		// Root cannot reach the kernel's knobs.
		denied(t, res, "core-pattern-write", unix.EROFS)
		if s.SysFile != "" {
			denied(t, res, "sys-write", unix.EROFS)
		}
		// Nor read a disk raw.
		reached(t, res, "block-devices", "")
		checkBounding(t, res["cap-bounding"])
		reached(t, res, "inside", "true")
		reached(t, res, "inside-grandchild", "true")
		reached(t, res, "no-new-privs", "1")
		time.Sleep(50 * time.Millisecond)
		if u.usr1.Load() != before && sup.LandlockABI >= 6 {
			t.Error("kill-usr1: a SIGUSR1 from the confined process arrived")
		}
		// The tree outside is as it was.
		if b, _ := os.ReadFile(tr.ReadOnly); string(b) != "turn" {
			t.Errorf("the read-only file now holds %q", b)
		}
		if b, _ := os.ReadFile(tr.HiddenFile); string(b) != secret {
			t.Errorf("the hidden file now holds %q", b)
		}
	})
}

func checkBounding(t *testing.T, got string) {
	t.Helper()
	v, err := strconv.ParseUint(strings.TrimPrefix(got, "ok: "), 16, 64)
	if err != nil {
		t.Errorf("cap-bounding: %q", got)
		return
	}
	for _, c := range rootDrops {
		if v&(1<<c) != 0 {
			t.Errorf("cap-bounding %s: capability %d is still in the bounding set", got, c)
		}
	}
	if v&(1<<unix.CAP_DAC_OVERRIDE) == 0 || v&(1<<unix.CAP_CHOWN) == 0 {
		t.Errorf("cap-bounding %s: ordinary root capabilities are gone too", got)
	}
}

func waitFor(cond func() bool) {
	for i := 0; i < 100 && !cond(); i++ {
		time.Sleep(10 * time.Millisecond)
	}
}

// TestInside: this process is outside; the probes check the inside.
func TestInside(t *testing.T) {
	if Inside() {
		t.Fatal("Inside() is true in the unconfined test process")
	}
	line := []byte("36 35 98:0 /mnt1 /mnt2 rw,noatime master:1 - tmpfs spear-confined rw,size=4k")
	if got := mountSource(line); got != marker {
		t.Errorf("mountSource = %q", got)
	}
	if got := mountSource([]byte("garbage")); got != "" {
		t.Errorf("mountSource(garbage) = %q", got)
	}
}

// A path that goes through a symbolic link in a directory the shell could
// write is refused: the shell could remove the link and put its own
// directory there, which the deployment would read. A link inside a hidden
// directory is out of the shell's reach and allowed.
func TestPlanRefusesRepointableLink(t *testing.T) {
	tr, p := newTree(t, os.Getuid())
	p.Hide = append(p.Hide, tr.Alias)
	_, err := newPlan(p)
	if err == nil || !strings.Contains(err.Error(), "goes through the symbolic link "+filepath.Join(tr.Base, "alias")) || !strings.Contains(err.Error(), tr.AliasReal) {
		t.Fatalf("newPlan with %s: %v", tr.Alias, err)
	}
	inner := filepath.Join(tr.HiddenDir, "inner-link")
	must(t, os.Symlink(".", inner))
	p.Hide = append(p.Hide[:len(p.Hide)-1], filepath.Join(inner, "registry"))
	if _, err := newPlan(p); err != nil {
		t.Errorf("a link inside a hidden directory: %v", err)
	}
}

// TestGateFilter: the gate's filter assembles for this architecture and
// ends every path in a return.
func TestGateFilter(t *testing.T) {
	f, err := gateFilter()
	if err != nil {
		t.Fatal(err)
	}
	if last := f[len(f)-1]; last.Code != ret {
		t.Errorf("the filter ends in %#v, not a return", last)
	}
}
