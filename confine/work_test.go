package confine

import (
	"bufio"
	"bytes"
	"encoding/json"
	"fmt"
	"io"
	"net"
	"os"
	"os/exec"
	"path/filepath"
	"strconv"
	"strings"
	"syscall"
	"testing"
	"time"
)

// workScript is ordinary development work; it prints "work done" at the end.
const workScript = `
set -eu
cd "$HOME"
touch newfile
ls >/dev/null
echo moved > tomove && mv tomove .config/ && [ "$(cat .config/tomove)" = moved ] && rm .config/tomove
ls -A | grep -qx .config
ls -A .config | grep -qx other
echo scratch > "/tmp/confine-work-$$" && rm "/tmp/confine-work-$$"
mkdir -p project && cd project
git init -q .
echo hello > a.txt
git add a.txt
git -c user.email=t@example.com -c user.name=t commit -qm init
git log --oneline | grep -q init
exec 3<>"/dev/tcp/127.0.0.1/$PORT"
echo ping >&3
read -r reply <&3
[ "$reply" = pong ]
exec 3<&-
XDG_CONFIG_HOME=/dev/null/none go version >/dev/null # leaves no telemetry child writing into HOME
make --version >/dev/null
echo "work done"
`

// pongServer answers "pong" to each line on a loopback TCP port.
func pongServer(t *testing.T) int {
	l, err := net.Listen("tcp", "127.0.0.1:0")
	must(t, err)
	t.Cleanup(func() { l.Close() })
	go func() {
		for {
			c, err := l.Accept()
			if err != nil {
				return
			}
			go func() {
				defer c.Close()
				if _, err := bufio.NewReader(c).ReadString('\n'); err == nil {
					io.WriteString(c, "pong\n")
				}
			}()
		}
	}()
	return l.Addr().(*net.TCPAddr).Port
}

// TestOrdinaryWork: a confined bash works in HOME next to a hidden
// directory, in /tmp, with git, go, make and the network.
func TestOrdinaryWork(t *testing.T) {
	requireSupport(t)
	requireRoot(t)
	tr, p := newTree(t, 0)
	port := pongServer(t)
	cmd, err := Command(p, "/bin/bash", "-c", workScript)
	must(t, err)
	cmd.Env = append(helperEnv(), "HOME="+tr.Home, "PORT="+strconv.Itoa(port))
	out, err := cmd.CombinedOutput()
	if err != nil || !strings.Contains(string(out), "work done") {
		t.Fatalf("ordinary work failed: %v\n%s", err, out)
	}
	if _, err := os.Stat(filepath.Join(tr.Home, "newfile")); err != nil {
		t.Errorf("the file made in HOME is not there outside: %v", err)
	}
}

// TestStatusAndSignals: the shell's exit status and a signal that kills it
// reach the caller.
func TestStatusAndSignals(t *testing.T) {
	requireSupport(t)
	_, p := newTree(t, os.Geteuid())

	cmd, err := Command(p, "/bin/bash", "-c", "exit 7")
	must(t, err)
	if got := exitStatus(cmd.Run()); got != 7 {
		t.Errorf("exit 7: status %d", got)
	}

	cmd, err = Command(p, "/bin/bash", "-c", "echo ready; exec sleep 30")
	must(t, err)
	out, err := cmd.StdoutPipe()
	must(t, err)
	must(t, cmd.Start())
	if line, _ := bufio.NewReader(out).ReadString('\n'); line != "ready\n" {
		t.Fatalf("got %q", line)
	}
	must(t, cmd.Process.Signal(syscall.SIGTERM))
	if got := exitStatus(cmd.Wait()); got != 128+int(syscall.SIGTERM) {
		t.Errorf("SIGTERM: status %d", got)
	}
}

// TestFilesPassThrough: ExtraFiles reach the shell at their numbers, and the
// launcher adds no descriptor: the confined shell has just the descriptors
// the same shell run plainly has.
func TestFilesPassThrough(t *testing.T) {
	requireSupport(t)
	_, p := newTree(t, os.Geteuid())
	script := `for f in /proc/$$/fd/*; do printf '%s ' "${f##*/}"; done; echo via-fd3 >&3`
	run := func(confined bool) (string, string) {
		r, w, err := os.Pipe()
		must(t, err)
		defer r.Close()
		cmd := exec.Command("/bin/bash", "-c", script)
		if confined {
			cmd, err = Command(p, "/bin/bash", "-c", script)
			must(t, err)
		}
		cmd.ExtraFiles = []*os.File{w}
		out, err := cmd.Output()
		w.Close()
		must(t, err)
		b, _ := io.ReadAll(r)
		return strings.TrimSpace(string(out)), string(b)
	}
	plain, _ := run(false)
	got, fd3 := run(true)
	if got != plain || !strings.HasPrefix(got, "0 1 ") || !strings.Contains(got, " 3") {
		t.Errorf("the confined shell's descriptors: %q; run plainly: %q", got, plain)
	}
	if fd3 != "via-fd3\n" {
		t.Errorf("fd 3 carried %q", fd3)
	}
}

// TestWorkingDirectoryInsideHidden: a shell started in a hidden directory
// finds itself in the stand-in, not in the real directory.
func TestWorkingDirectoryInsideHidden(t *testing.T) {
	requireSupport(t)
	tr, p := newTree(t, os.Geteuid())
	cmd, err := Command(p, "/bin/bash", "-c", `ls -A .; cat registry 2>/dev/null; true`)
	must(t, err)
	cmd.Dir = tr.HiddenDir
	out, err := cmd.Output()
	must(t, err)
	if len(out) != 0 {
		t.Errorf("the shell saw %q in its hidden working directory", out)
	}
}

// runHelper runs the test binary self in a helper mode with spec s and
// returns its output and exit status.
func runHelper(t *testing.T, self, mode string, s spec, uid int) (string, int, int) {
	t.Helper()
	b, _ := json.Marshal(s)
	cmd := exec.Command(self)
	cmd.Env = append(helperEnv(), envMode+"="+mode, envSpec+"="+string(b))
	if uid != os.Geteuid() {
		asUser(cmd, uid)
	}
	var stderr bytes.Buffer
	cmd.Stderr = &stderr
	out, err := cmd.Output()
	st := exitStatus(err)
	if st == 98 || st == 99 || st == 125 {
		t.Logf("helper %s: status %d, stderr: %s", mode, st, stderr.String())
	}
	return string(out), st, cmd.Process.Pid
}

func asUser(cmd *exec.Cmd, uid int) {
	cmd.SysProcAttr = &syscall.SysProcAttr{Credential: &syscall.Credential{Uid: uint32(uid), Gid: uint32(uid), Groups: []uint32{}}}
}

// TestExecUnderLauncher: Exec runs the shell confined under the launcher,
// its child: the shell's parent is the launcher, whose parent is the
// process that called Exec, and the shell's status comes back.
func TestExecUnderLauncher(t *testing.T) {
	requireSupport(t)
	self, _ := os.Executable()
	tr, p := newTree(t, os.Geteuid())
	s := spec{Policy: p, Path: "/bin/bash", Argv: []string{"bash", "-c",
		`echo "$$"; ps -o ppid= -p "$PPID"; cat "$1/registry" 2>/dev/null; ls -A "$1"; grep -c spear-confined /proc/self/mountinfo >/dev/null && echo marked; exit 3`,
		"bash", tr.HiddenDir}}
	out, status, pid := runHelper(t, self, "exec", s, os.Geteuid())
	lines := strings.Fields(out)
	if status != 3 || len(lines) != 3 || lines[0] == strconv.Itoa(pid) || lines[1] != strconv.Itoa(pid) || lines[2] != "marked" {
		t.Errorf("Exec: status %d, output %q; want 3, a pid of the shell's own, the launcher's parent %d, and marked", status, out, pid)
	}
}

// TestNested: inside a confinement Command and Exec keep what the enclosing
// confinement keeps and confine further; they refuse a policy asking for a
// mount the enclosing one lacks.
func TestNested(t *testing.T) {
	requireSupport(t)
	self, _ := os.Executable()
	tr, p := newTree(t, os.Geteuid())
	same, _ := json.Marshal(spec{Policy: p, Path: "/bin/bash", Argv: []string{"bash", "-c", `cat "$1/registry" 2>/dev/null; echo "nested $$"`, "bash", tr.HiddenDir}})
	more := p
	more.Hide = append(append([]string{}, p.Hide...), tr.Mnt)
	wider, _ := json.Marshal(spec{Policy: more, Path: "/bin/true", Argv: []string{"true"}})
	script := `
		CONFINE_TEST_SPEC="$1" CONFINE_TEST_MODE=command "$3"; echo "command=$?"
		CONFINE_TEST_SPEC="$1" CONFINE_TEST_MODE=exec "$3"; echo "exec=$?"
		CONFINE_TEST_SPEC="$2" CONFINE_TEST_MODE=command "$3" 2>&1; echo "wider=$?"
		"$3" ` + LauncherArg + ` 'v1:{}' /bin/bash bash -c 'echo "by hand $$"'; echo "hand=$?"
	`
	cmd, err := Command(p, "/bin/bash", "-c", script, "bash", string(same), string(wider), self)
	must(t, err)
	cmd.Env = helperEnv()
	out, err := cmd.CombinedOutput()
	must(t, err)
	got := string(out)
	for _, want := range []string{"command=0", "exec=0", "wider=98", "already confined", "hand=0", "by hand"} {
		if !strings.Contains(got, want) {
			t.Errorf("nested: no %q in\n%s", want, got)
		}
	}
	if strings.Contains(got, secret) {
		t.Errorf("nested: the secret leaked:\n%s", got)
	}
}

// TestPolicyErrors: a path that is missing or relative is refused, named,
// before anything runs.
func TestPolicyErrors(t *testing.T) {
	tr, _ := newTree(t, os.Geteuid())
	missing := filepath.Join(tr.Base, "no-such-dir")
	for _, p := range []Policy{
		{Hide: []string{missing}},
		{ReadOnly: []string{missing}},
		{Hide: []string{"relative/path"}},
		{Hide: []string{""}},
	} {
		want := missing
		if len(p.Hide) > 0 && p.Hide[0] != missing {
			want = strconv.Quote(p.Hide[0])
		}
		if _, err := Command(p, "/bin/true"); err == nil || !strings.Contains(err.Error(), want) {
			t.Errorf("Command(%v): %v, want an error naming %s", p, err, want)
		}
		if err := Exec(p, "/bin/true", []string{"true"}, nil); err == nil || !strings.Contains(err.Error(), want) {
			t.Errorf("Exec(%v): %v, want an error naming %s", p, err, want)
		}
	}
}

// TestLauncherRejectsGarbage: the launcher refuses arguments it did not
// write, cleanly, in process and by hand.
func TestLauncherRejectsGarbage(t *testing.T) {
	for _, args := range [][]string{
		nil,
		{"x"},
		{"v1:{}", "/bin/true"},
		{"v1:{", "/bin/true", "true"},
		{"v1:{}trailing", "/bin/true", "true"},
		{"v1:{} {}", "/bin/true", "true"},
		{"v1:null", "/bin/true", "true"},
		{`v1:{"hide":["relative"]}`, "/bin/true", "true"},
		{`v1:{"hide":"/tmp"}`, "/bin/true", "true"},
		{`v1:{"unknown":1}`, "/bin/true", "true"},
		{"v2:{}", "/bin/true", "true"},
		{"{}", "/bin/true", "true"},
		{"v1:{}", "", "true"},
		{`v1:{"hide":["/no/such/path/at/all"]}`, "/bin/true", "true"},
	} {
		if _, _, _, err := decodeLaunch(args); err == nil && len(args) > 0 && !strings.Contains(args[0], "/no/such") {
			t.Errorf("decodeLaunch(%q) accepted it", args)
		}
		if got, msg := launchQuietly(t, args); got != 125 || !strings.HasPrefix(msg, "confine: ") {
			t.Errorf("LauncherMain(%q) = %d, %q; want 125 and why", args, got, msg)
		}
	}

	self, _ := os.Executable()
	cmd := exec.Command(self, LauncherArg, "v1:{not json", "/bin/true", "true")
	cmd.Env = helperEnv()
	out, err := cmd.CombinedOutput()
	if exitStatus(err) != 125 || !strings.Contains(string(out), "bad policy") || strings.Contains(string(out), "panic") {
		t.Errorf("launcher by hand with garbage: %v\n%s", err, out)
	}
	if Probe().OK {
		// Started as Command starts it: for a user other than root, in a
		// user namespace of its own, without which it could make no mount
		// namespace.
		cmd, err = Command(Policy{}, "/no/such/program", "x")
		must(t, err)
		cmd.Env = helperEnv()
		out, err = cmd.CombinedOutput()
		if exitStatus(err) != 127 || !strings.Contains(string(out), "confine: exec /no/such/program") {
			t.Errorf("launcher with a missing program: %v\n%s", err, out)
		}
	}
	if p, path, argv, err := decodeLaunch([]string{`v1:{"hide":["/a"],"readonly":["/b"]}`, "/bin/x", "x", "-c"}); err != nil ||
		len(p.Hide) != 1 || p.ReadOnly[0] != "/b" || path != "/bin/x" || strings.Join(argv, " ") != "x -c" {
		t.Errorf("decodeLaunch of a good launch: %v %q %q %v", p, path, argv, err)
	}
}

// launchQuietly runs LauncherMain in this process, for arguments it must
// refuse before it changes anything, and returns what it wrote to stderr.
func launchQuietly(t *testing.T, args []string) (int, string) {
	f, err := os.CreateTemp("", "confine-stderr-")
	must(t, err)
	defer os.Remove(f.Name())
	defer f.Close()
	stderr := os.Stderr
	os.Stderr = f
	status := LauncherMain(args)
	os.Stderr = stderr
	b, _ := os.ReadFile(f.Name())
	return status, string(b)
}

// TestProbe: this system confines, and says how.
func TestProbe(t *testing.T) {
	s := Probe()
	t.Logf("Probe: %s", s)
	if !s.OK {
		t.Skipf("cannot confine here: %s", s.Why)
	}
	if s.LandlockABI < 1 || !strings.HasPrefix(s.String(), fmt.Sprintf("landlock ABI %d + ", s.LandlockABI)) {
		t.Errorf("Probe: %+v, String %q", s, s)
	}
	if s.LandlockABI >= 6 && !strings.HasSuffix(s.String(), "(signals and abstract unix sockets scoped)") {
		t.Errorf("String %q does not say what is scoped", s)
	}
	if (Support{Why: "no Landlock"}).String() != "cannot confine: no Landlock" {
		t.Error("a Support that is not OK does not say why")
	}
}

// TestAsNobody runs the key attacks, ordinary work and Exec as an ordinary
// user, for whom Command and Exec take the user-namespace launcher.
func TestAsNobody(t *testing.T) {
	sup := requireSupport(t)
	requireRoot(t) // to become nobody
	if why := userNamespacesUsable(); why != "" {
		t.Skipf("an ordinary user cannot confine here: %s", why)
	}
	self := nobodyBinary(t)
	u := newUnconfined(t, nobody)

	t.Run("support", func(t *testing.T) {
		out, _, _ := runHelper(t, self, "support", spec{}, nobody)
		if !strings.Contains(out, "user and mount namespaces") {
			t.Errorf("Probe as nobody: %q", out)
		}
	})

	probe := func(t *testing.T, control bool) map[string]string {
		tr, p := newTree(t, nobody)
		s := u.spec(tr, p, false)
		s.Control, s.Helper = control, true
		out, status, _ := runHelper(t, self, "command", s, nobody)
		res := map[string]string{}
		if err := json.Unmarshal([]byte(out), &res); err != nil || status != 0 {
			t.Fatalf("probe as nobody: status %d, %v\n%s", status, err, out)
		}
		return res
	}
	t.Run("control", func(t *testing.T) {
		res := probe(t, true)
		reached(t, res, "hidden-read", secret)
		reached(t, res, "hidden-file-read", secret)
		reached(t, res, "ro-write")
		reached(t, res, "hidden-rename-parent")
		reached(t, res, "ptrace-victim")
		reached(t, res, "kill-0")
		reached(t, res, "abstract-connect")
		reached(t, res, "inside", "false")
		if !strings.Contains(res["proc-environ"], os.Getenv(envSecret)) {
			t.Errorf("proc-environ: the control did not find the secret: %q", res["proc-environ"])
		}
	})
	t.Run("confined", func(t *testing.T) {
		res := probe(t, false)
		for name := range res {
			noSecret(t, res, name)
		}
		denied(t, res, "hidden-read", syscall.ENOENT)
		reached(t, res, "hidden-list", "")
		denied(t, res, "hidden-create", syscall.EROFS)
		denied(t, res, "hidden-via-new-hardlink", syscall.ENOENT)
		reached(t, res, "hidden-file-read", "")
		denied(t, res, "alias-read", syscall.ENOENT)
		reached(t, res, "ro-read", "turn")
		denied(t, res, "ro-write", syscall.EROFS)
		denied(t, res, "ro-rename-over", syscall.EBUSY)
		denied(t, res, "hidden-rename-parent", syscall.EBUSY)
		denied(t, res, "ro-rename-parent", syscall.EBUSY)
		denied(t, res, "proc-environ", syscall.EACCES)
		denied(t, res, "proc-mem", syscall.EACCES)
		denied(t, res, "ptrace-victim", syscall.EPERM)
		keptToItself(t, res)
		usernsRefused(t, res)
		if sup.LandlockABI >= 6 {
			denied(t, res, "kill-0", syscall.EPERM)
			denied(t, res, "abstract-connect", syscall.EPERM)
		}
		reached(t, res, "abstract-own")
		reached(t, res, "inside", "true")
		reached(t, res, "inside-grandchild", "true")
		reached(t, res, "no-new-privs", "1")
		reached(t, res, "cap-effective", "0000000000000000")
	})
	t.Run("work", func(t *testing.T) {
		tr, p := newTree(t, nobody)
		s := spec{Policy: p, Path: "/bin/bash", Argv: []string{"bash", "-c", workScript},
			Env: []string{"HOME=" + tr.Home, "PORT=" + strconv.Itoa(pongServer(t))}}
		out, status, _ := runHelper(t, self, "command", s, nobody)
		if status != 0 || !strings.Contains(out, "work done") {
			t.Errorf("ordinary work as nobody: status %d\n%s", status, out)
		}
	})
	t.Run("exec", func(t *testing.T) {
		tr, p := newTree(t, nobody)
		s := spec{Policy: p, Path: "/bin/bash", Argv: []string{"bash", "-c",
			`echo "$$"; cat "$1/registry" 2>/dev/null; grep -q spear-confined /proc/self/mountinfo && echo marked; exit 3`,
			"bash", tr.HiddenDir}}
		out, status, pid := runHelper(t, self, "exec", s, nobody)
		lines := strings.Fields(out)
		if status != 3 || len(lines) != 2 || lines[1] != "marked" || lines[0] == strconv.Itoa(pid) {
			t.Errorf("Exec as nobody: status %d, output %q (the launcher runs as a child of %d)", status, out, pid)
		}
	})
	t.Run("exec-signals", func(t *testing.T) {
		_, p := newTree(t, nobody)
		for _, sig := range []syscall.Signal{syscall.SIGTERM, syscall.SIGHUP, syscall.SIGINT} {
			s := spec{Policy: p, Path: "/bin/bash", Argv: []string{"bash", "-c", "echo ready; exec sleep 30"}}
			b, _ := json.Marshal(s)
			cmd := exec.Command(self)
			cmd.Env = append(helperEnv(), envMode+"=exec", envSpec+"="+string(b))
			asUser(cmd, nobody)
			out, err := cmd.StdoutPipe()
			must(t, err)
			must(t, cmd.Start())
			if line, _ := bufio.NewReader(out).ReadString('\n'); line != "ready\n" {
				t.Fatalf("got %q", line)
			}
			must(t, cmd.Process.Signal(sig))
			if got := exitStatus(cmd.Wait()); got != 128+int(sig) {
				t.Errorf("%v to the Exec parent: status %d, want %d", sig, got, 128+int(sig))
			}
		}
	})
}

// nobodyBinary copies the test binary where nobody can run it.
func nobodyBinary(t *testing.T) string {
	self, err := os.Executable()
	must(t, err)
	dir, err := os.MkdirTemp("", "confine-bin-")
	must(t, err)
	t.Cleanup(func() { os.RemoveAll(dir) })
	must(t, os.Chmod(dir, 0o755))
	b, err := os.ReadFile(self)
	must(t, err)
	path := filepath.Join(dir, "confine.test")
	must(t, os.WriteFile(path, b, 0o755))
	return path
}

// BenchmarkExecTrue compares "bash -c true" run through Exec, confined, with
// the same run by a plain exec. Both start the test binary as a child, which
// then executes bash in place; the ratios are what confinement costs, in wall
// time and in the CPU time the child uses (the steadier of the two on a busy
// machine).
func BenchmarkExecTrue(b *testing.B) {
	requireSupport(b)
	self, err := os.Executable()
	must(b, err)
	_, p := newTree(b, os.Geteuid())
	run := func(mode string) (wall, cpu time.Duration) {
		s, _ := json.Marshal(spec{Policy: p, Path: "/bin/bash", Argv: []string{"bash", "-c", "true"}})
		cmd := exec.Command(self)
		cmd.Env = append(helperEnv(), envMode+"="+mode, envSpec+"="+string(s))
		start := time.Now()
		if out, err := cmd.CombinedOutput(); err != nil {
			b.Fatalf("%s: %v\n%s", mode, err, out)
		}
		return time.Since(start), cmd.ProcessState.UserTime() + cmd.ProcessState.SystemTime()
	}
	run("exec")
	run("plain")
	var confined, plain, confinedCPU, plainCPU time.Duration
	b.ResetTimer()
	for i := 0; i < b.N; i++ {
		w, c := run("exec")
		confined, confinedCPU = confined+w, confinedCPU+c
		w, c = run("plain")
		plain, plainCPU = plain+w, plainCPU+c
	}
	n := float64(b.N)
	b.ReportMetric(float64(confined.Nanoseconds())/n, "confined-ns/op")
	b.ReportMetric(float64(plain.Nanoseconds())/n, "plain-ns/op")
	b.ReportMetric(float64(confinedCPU.Nanoseconds())/n, "confined-cpu-ns/op")
	b.ReportMetric(float64(plainCPU.Nanoseconds())/n, "plain-cpu-ns/op")
	b.ReportMetric(float64(confined)/float64(plain), "ratio")
	b.ReportMetric(float64(confinedCPU)/float64(plainCPU), "cpu-ratio")
}
