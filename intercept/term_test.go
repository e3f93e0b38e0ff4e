package intercept

import (
	"context"
	"errors"
	"io"
	"os"
	"os/exec"
	"slices"
	"spear/turnshell"
	"strconv"
	"strings"
	"syscall"
	"testing"
	"time"
)

// testTerm is a Shim whose outputs are files the test reads back, whose
// gateway is a fake and whose Exec records what it would run.
type testTerm struct {
	*Shim
	gw    *fakeGateway
	execs [][]string // path, then argv
	execE []string   // the environment of the last exec
}

func newTestTerm(t *testing.T, args []string, env map[string]string, stdin io.Reader) *testTerm {
	t.Helper()
	if env == nil {
		env = map[string]string{}
	}
	env["PATH"] = os.Getenv("PATH")
	var list []string
	for k, v := range env {
		list = append(list, k+"="+v)
	}
	slices.Sort(list)
	file := func(name string) *os.File {
		f, err := os.CreateTemp(t.TempDir(), name)
		if err != nil {
			t.Fatal(err)
		}
		t.Cleanup(func() { f.Close() })
		return f
	}
	tt := &testTerm{gw: &fakeGateway{status: 3}}
	tt.Shim = &Shim{
		Argv0: "spear-term", Args: args, Env: list, Getenv: func(k string) string { return env[k] },
		Stdin: stdin, Stdout: file("stdout"), Stderr: file("stderr"),
		Interceptor: &Interceptor{Gateway: tt.gw},
		Exec: func(path string, argv, env []string) error {
			tt.execs = append(tt.execs, append([]string{path}, argv...))
			tt.execE = env
			return errors.New("not really")
		},
	}
	return tt
}

func readBack(t *testing.T, f *os.File) string {
	t.Helper()
	data, err := os.ReadFile(f.Name())
	if err != nil {
		t.Fatal(err)
	}
	return string(data)
}

func (tt *testTerm) stdout(t *testing.T) string { return readBack(t, tt.Stdout) }
func (tt *testTerm) stderr(t *testing.T) string { return readBack(t, tt.Stderr) }

func TestRunDispatch(t *testing.T) {
	cases := []struct {
		args   []string
		status int
		exec   string // what the real shell is run with, "" for not at all
		stdout string
		stderr string
	}{
		{[]string{"-c", "ls -l"}, 127, "/bin/bash /bin/bash -c ls -l", "", "spear-term: cannot run the real shell /bin/bash: not really (set SPEAR_REAL_SHELL to a bash)\n"},
		{[]string{"-c", "echo spear-capability"}, 127, "/bin/bash /bin/bash -c echo spear-capability", "", "cannot run the real shell"},
		{[]string{"-lc", "spear-capability describe t/x", "argv0"}, 3, "", "answered describe|t/x\n", ""},
		{[]string{"-c", "spear-capability list; ls"}, 2, "", "", "spear-capability: refused: the submission runs other commands"},
		{[]string{"script.sh", "a"}, 127, "/bin/bash /bin/bash script.sh a", "", "cannot run the real shell"},
		{[]string{"-x", "script.sh"}, 127, "/bin/bash /bin/bash -x script.sh", "", "cannot run the real shell"},
	}
	for _, tc := range cases {
		tt := newTestTerm(t, tc.args, nil, strings.NewReader(""))
		status := tt.Run(context.Background())
		var exec []string
		for _, e := range tt.execs {
			exec = append(exec, strings.Join(e, " "))
		}
		if status != tc.status || strings.Join(exec, "\n") != tc.exec || tt.stdout(t) != tc.stdout || !strings.Contains(tt.stderr(t), tc.stderr) || (tc.stderr == "") != (tt.stderr(t) == "") {
			t.Errorf("%q: status %d, exec %q, stdout %q, stderr %q; want %d, %q, %q, %q", tc.args, status, exec, tt.stdout(t), tt.stderr(t), tc.status, tc.exec, tc.stdout, tc.stderr)
		}
	}
}

func TestPassThrough(t *testing.T) {
	cases := []struct {
		argv0, shell string
		want         string // path, then argv
	}{
		{"spear-term", "", "/bin/bash /bin/bash -c ls"},
		{"/usr/local/bin/spear-term", "/opt/bash5/bin/bash", "/opt/bash5/bin/bash /opt/bash5/bin/bash -c ls"},
		{"-spear-term", "", "/bin/bash -bash -c ls"},
		{"-spear-term", "/opt/bash5/bin/mybash", "/opt/bash5/bin/mybash -mybash -c ls"},
	}
	for _, tc := range cases {
		env := map[string]string{"A": "1", turnshell.Marker: "old"}
		if tc.shell != "" {
			env["SPEAR_REAL_SHELL"] = tc.shell
		}
		tt := newTestTerm(t, []string{"-c", "ls"}, env, nil)
		tt.Argv0 = tc.argv0
		if status := tt.passThrough(); status != 127 {
			t.Errorf("%s: status %d after a failed exec, want 127", tc.argv0, status)
		}
		if len(tt.execs) != 1 || strings.Join(tt.execs[0], " ") != tc.want {
			t.Errorf("%s with SPEAR_REAL_SHELL=%q: exec %q, want %q", tc.argv0, tc.shell, tt.execs, tc.want)
		}
		if !slices.Contains(tt.execE, "A=1") || !slices.Contains(tt.execE, turnshell.Marker+"=1") || slices.Contains(tt.execE, turnshell.Marker+"=old") {
			t.Errorf("%s: the shell's environment is %q", tc.argv0, tt.execE)
		}
	}
}

func TestStatusReporter(t *testing.T) {
	r, w, err := os.Pipe()
	if err != nil {
		t.Fatal(err)
	}
	defer r.Close()
	// The reporter owns the descriptor it is given, as spear-term owns
	// SPEAR_STATUS_FD, and closes it once it is gone: give it its own.
	dup, err := syscall.Dup(int(w.Fd()))
	if err != nil {
		t.Fatal(err)
	}
	w.Close()
	fd := strconv.Itoa(dup)
	// A value that names no open descriptor above 2 is an error, never
	// statuses silently sent elsewhere than the harness reads them.
	for _, bad := range []string{"x", "2", "1", "-3", "999"} {
		tt := newTestTerm(t, nil, map[string]string{"SPEAR_STATUS_FD": bad}, nil)
		if _, err := tt.statusReporter(false); err == nil || !strings.Contains(err.Error(), "SPEAR_STATUS_FD") {
			t.Errorf("SPEAR_STATUS_FD=%q: %v, want an error naming it", bad, err)
		}
	}
	cases := []struct {
		fd     string
		stderr string
		pipe   bool
	}{
		{"", "spear-term: status 0\nspear-term: status 130\n", false},
		{fd, "", true},
	}
	for _, tc := range cases {
		tt := newTestTerm(t, nil, map[string]string{"SPEAR_STATUS_FD": tc.fd}, nil)
		report, err := tt.statusReporter(false)
		if err != nil {
			t.Fatal(err)
		}
		report(0)
		report(130)
		if got := tt.stderr(t); got != tc.stderr {
			t.Errorf("SPEAR_STATUS_FD=%q: stderr %q, want %q", tc.fd, got, tc.stderr)
		}
	}
	r.SetReadDeadline(time.Now().Add(5 * time.Second))
	data := make([]byte, len("0\n130\n"))
	if _, err := io.ReadFull(r, data); err != nil || string(data) != "0\n130\n" {
		t.Errorf("the status descriptor got %q", data)
	}
}

// TestStreamStatusFDStaysOut has the turn's shell try to write the status
// descriptor: it is not open there, so the harness reads only the true
// statuses.
func TestStreamStatusFDStaysOut(t *testing.T) {
	needBash(t)
	r, w, err := os.Pipe()
	if err != nil {
		t.Fatal(err)
	}
	defer r.Close()
	// As a harness hands it down: inheritable. The reporter owns it. Its
	// number is one bash does not use for itself (it keeps a copy of its
	// own status pipe on 10 or the next free one, where a stray write must
	// not count either): the lowest free from 100.
	fd, _, errno := syscall.Syscall(syscall.SYS_FCNTL, w.Fd(), syscall.F_DUPFD, 100)
	if errno != 0 {
		t.Fatal(errno)
	}
	w.Close()
	n := strconv.Itoa(int(fd))
	session := "echo 0 >&" + n + "; false\ntrue\n"
	tt := newTestTerm(t, nil, map[string]string{"SPEAR_STATUS_FD": n}, strings.NewReader(session))
	if status := runStream(t, tt); status != 0 {
		t.Errorf("status %d, want 0", status)
	}
	r.SetReadDeadline(time.Now().Add(5 * time.Second))
	data := make([]byte, 16)
	got, _ := io.ReadAtLeast(r, data, len("1\n0\n"))
	if data = data[:got]; string(data) != "1\n0\n" {
		t.Errorf("the harness read %q, want the true statuses 1 and 0", data)
	}
	if got := tt.stderr(t); !strings.Contains(got, n+": Bad file descriptor") {
		t.Errorf("stderr %q: the shell could use descriptor %s", got, n)
	}
}

func TestNewDelimiter(t *testing.T) {
	src := "cat <<__SPEAR_END_\n__SPEAR_END_\n"
	a, b := newDelimiter(src), newDelimiter(src)
	if a == b || !strings.HasPrefix(a, "__SPEAR_END_") || len(a) != len("__SPEAR_END_")+16 || strings.Contains(src, a) {
		t.Errorf("delimiters %q and %q", a, b)
	}
}

func needBash(t *testing.T) {
	if _, err := exec.LookPath("/bin/bash"); err != nil {
		t.Skip("stream mode runs /bin/bash")
	}
}

// runStream runs tt in stream mode and fails the test if it does not end
// within a few seconds.
func runStream(t *testing.T, tt *testTerm) int {
	t.Helper()
	done := make(chan int, 1)
	go func() { done <- tt.Run(context.Background()) }()
	select {
	case status := <-done:
		return status
	case <-time.After(10 * time.Second):
		t.Fatalf("stream mode did not end; stderr so far: %q", tt.stderr(t))
		return 0
	}
}

func TestStream(t *testing.T) {
	needBash(t)
	session := `echo one
false
spear-capability describe t/x
echo status=$?
x=5; echo x=$x
cat <<EOF
doc $x
EOF

spear-capability list | cat
echo after=$?
if true
then echo multi
fi
echo )
echo stdin=$(cat)
exit 4
echo never
`
	tt := newTestTerm(t, []string{"-s", "arg1"}, nil, strings.NewReader(session))
	if status := runStream(t, tt); status != 4 {
		t.Errorf("status %d, want the shell's 4", status)
	}
	want := "one\nanswered describe|t/x\nstatus=3\nx=5\ndoc 5\nafter=2\nmulti\nstdin=\n"
	if got := tt.stdout(t); got != want {
		t.Errorf("stdout %q, want %q", got, want)
	}
	stderr := tt.stderr(t)
	if got := statusesOf(stderr); got != "0 1 3 0 0 0 2 0 0 2 0 4" {
		t.Errorf("statuses %s; stderr %q", got, stderr)
	}
	for _, s := range []string{"spear-capability: refused: spear-capability is part of a pipeline", "syntax error"} {
		if !strings.Contains(stderr, s) {
			t.Errorf("stderr %q does not say %q", stderr, s)
		}
	}
	if len(tt.gw.refused) != 1 || len(tt.gw.answered) != 1 {
		t.Errorf("the gateway answered %q and recorded %q", tt.gw.answered, tt.gw.refused)
	}
}

func TestStreamEndOfInput(t *testing.T) {
	needBash(t)
	tt := newTestTerm(t, nil, nil, strings.NewReader("true\n\n   \nfalse"))
	if status := runStream(t, tt); status != 1 {
		t.Errorf("status %d, want the last submission's 1", status)
	}
	if got := tt.stderr(t); got != "spear-term: status 0\nspear-term: status 1\n" {
		t.Errorf("stderr %q", got)
	}
}

func TestStreamNoShell(t *testing.T) {
	tt := newTestTerm(t, nil, map[string]string{"SPEAR_REAL_SHELL": "/nonexistent/bash"}, strings.NewReader("true\n"))
	if status := tt.Run(context.Background()); status != 127 {
		t.Errorf("status %d, want 127", status)
	}
	if got := tt.stderr(t); !strings.HasPrefix(got, "spear-term: cannot start the real shell /nonexistent/bash: ") {
		t.Errorf("stderr %q", got)
	}
}

// TestStreamShellEnds has the shell end while stdin stays open and says
// nothing more: spear-term ends with it, with its status.
func TestStreamShellEnds(t *testing.T) {
	needBash(t)
	cases := []struct {
		name   string
		submit string
		signal syscall.Signal // sent to the shell once it is ready
		ready  [2]int         // statuses reported and pids written when it is
		status int
	}{
		{"killed while idle", "(sleep 0.2; kill -KILL $$) &\n", 0, [2]int{}, 137},
		{"terminated while idle", "true\n", syscall.SIGTERM, [2]int{2, 1}, 143},
		{"hung up while idle, a command holding its descriptors", "sleep 10 & echo $! >>pids\n", syscall.SIGHUP, [2]int{2, 2}, 129},
		{"terminated while it waits for a command", "sleep 10 & echo $! >>pids; wait\n", syscall.SIGTERM, [2]int{1, 2}, 143},
		{"exits", "exit 7\n", 0, [2]int{}, 7},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			dir := t.TempDir()
			pr, pw := io.Pipe()
			defer pw.Close()
			tt := newTestTerm(t, nil, nil, pr)
			go func() {
				io.WriteString(pw, "cd "+dir+"; echo $$ >pids\n")
				io.WriteString(pw, tc.submit)
			}()
			if tc.signal != 0 {
				go func() {
					for deadline := time.Now().Add(5 * time.Second); time.Now().Before(deadline); time.Sleep(10 * time.Millisecond) {
						data, _ := os.ReadFile(dir + "/pids")
						pids := strings.Fields(string(data))
						if strings.Count(tt.stderr(t), "status") == tc.ready[0] && len(pids) == tc.ready[1] {
							pid, _ := strconv.Atoi(pids[0])
							syscall.Kill(pid, tc.signal)
							return
						}
					}
				}()
			}
			status := runStream(t, tt)
			if data, err := os.ReadFile(dir + "/pids"); err == nil {
				for _, f := range strings.Fields(string(data))[1:] {
					pid, _ := strconv.Atoi(f)
					syscall.Kill(pid, syscall.SIGKILL)
				}
			}
			if status != tc.status {
				t.Errorf("status %d, want %d; stderr %q", status, tc.status, tt.stderr(t))
			}
			if got := tt.stderr(t); !strings.HasSuffix(got, "spear-term: status "+strconv.Itoa(tc.status)+"\n") {
				t.Errorf("stderr %q does not end with the shell's status", got)
			}
		})
	}
}

// fakeConfiner records what it is asked to confine; Command starts the
// shell unconfined, tagging its environment so the test can see it was used.
type fakeConfiner struct {
	execs    [][]string
	commands int
	started  [][]string // path, then args, of each Command
	fail     error
}

func (f *fakeConfiner) Exec(path string, argv, env []string) error {
	f.execs = append(f.execs, append([]string{path}, argv...))
	if f.fail != nil {
		return f.fail
	}
	return errors.New("not really")
}

func (f *fakeConfiner) Command(path string, args ...string) (*exec.Cmd, error) {
	f.commands++
	f.started = append(f.started, append([]string{path}, args...))
	if f.fail != nil {
		return nil, f.fail
	}
	return exec.Command(path, args...), nil
}

// TestConfinedPassThrough: with a Confiner, an ordinary line goes to the
// real shell through it and never through the unconfined Exec; when the
// confinement cannot be set up nothing runs and the status is 126.
func TestConfinedPassThrough(t *testing.T) {
	tt := newTestTerm(t, []string{"-c", "ls"}, nil, nil)
	fc := &fakeConfiner{fail: errors.New("no mount namespace")}
	tt.Confiner = fc
	if status := tt.Run(context.Background()); status != 126 {
		t.Errorf("status %d, want 126", status)
	}
	if len(tt.execs) != 0 || len(fc.execs) != 1 || strings.Join(fc.execs[0], " ") != "/bin/bash /bin/bash -c ls" {
		t.Errorf("unconfined execs %q, confined %q", tt.execs, fc.execs)
	}
	if !strings.Contains(tt.stderr(t), "cannot start the real shell /bin/bash confined: no mount namespace (nothing ran") {
		t.Errorf("stderr %q", tt.stderr(t))
	}
}

// TestConfinedStream: stream mode starts its persistent shell through the
// Confiner, and a Confiner that fails starts no shell at all.
func TestConfinedStream(t *testing.T) {
	if _, err := exec.LookPath("bash"); err != nil {
		t.Skip("no bash")
	}
	tt := newTestTerm(t, nil, map[string]string{"SPEAR_REAL_SHELL": "/bin/bash"}, strings.NewReader("echo hi\n"))
	fc := &fakeConfiner{}
	tt.Confiner = fc
	if status := tt.Run(context.Background()); status != 0 || fc.commands != 1 || !strings.Contains(tt.stdout(t), "hi") {
		t.Errorf("status %d, commands %d, stdout %q", status, fc.commands, tt.stdout(t))
	}
	tt = newTestTerm(t, nil, map[string]string{"SPEAR_REAL_SHELL": "/bin/bash"}, strings.NewReader("echo hi\n"))
	tt.Confiner = &fakeConfiner{fail: errors.New("no landlock")}
	if status := tt.Run(context.Background()); status == 0 || strings.Contains(tt.stdout(t), "hi") || !strings.Contains(tt.stderr(t), "no landlock") {
		t.Errorf("failing confiner: status %d, stdout %q, stderr %q", status, tt.stdout(t), tt.stderr(t))
	}
}

// TestStreamHeredocsAsBash: where bash reads a here-document and
// mvdan.cc/sh a shift (let x<<EOF, declare a[x<<EOF]=1), the body goes
// to bash with its command, and no line of it is answered or run.
func TestStreamHeredocsAsBash(t *testing.T) {
	needBash(t)
	session := "let x<<EOF\nspear-capability list\nEOF\necho status=$?\n" +
		"declare a[x<<EOF]=1\nspear-capability list\nEOF\nEOF]=1\necho after\n"
	tt := newTestTerm(t, nil, nil, strings.NewReader(session))
	if status := runStream(t, tt); status != 0 {
		t.Errorf("status %d, want 0", status)
	}
	if got, want := tt.stdout(t), "status=1\nafter\n"; got != want {
		t.Errorf("stdout %q, want %q", got, want)
	}
	stderr := tt.stderr(t)
	if got := statusesOf(stderr); got != "1 0 1 0" {
		t.Errorf("statuses %s; stderr %q", got, stderr)
	}
	if len(tt.gw.answered) != 0 || len(tt.gw.refused) != 0 {
		t.Errorf("the gateway answered %q and recorded %q", tt.gw.answered, tt.gw.refused)
	}
}

// TestConfinedStreamChecker: the bash that checks multi-line submissions'
// syntax is started through the Confiner too, never by itself.
func TestConfinedStreamChecker(t *testing.T) {
	needBash(t)
	tt := newTestTerm(t, nil, map[string]string{"SPEAR_REAL_SHELL": "/bin/bash"}, strings.NewReader("echo hi\nif true\nthen echo multi\nfi\n"))
	fc := &fakeConfiner{}
	tt.Confiner = fc
	if status := runStream(t, tt); status != 0 || tt.stdout(t) != "hi\nmulti\n" {
		t.Errorf("status %d, stdout %q, stderr %q", status, tt.stdout(t), tt.stderr(t))
	}
	if fc.commands != 2 || !slices.Contains(fc.started[1], checkScript) || fc.started[1][0] != "/bin/bash" {
		t.Errorf("confined %q, want the shell and then the checker", fc.started)
	}
}

// statusesOf returns the statuses stream mode wrote on stderr, in order,
// separated by spaces.
func statusesOf(stderr string) string {
	var statuses []string
	for _, line := range strings.Split(stderr, "\n") {
		if s, ok := strings.CutPrefix(line, "spear-term: status "); ok {
			statuses = append(statuses, s)
		}
	}
	return strings.Join(statuses, " ")
}
