package intercept

import (
	"errors"
	"os"
	"os/exec"
	"strings"
	"syscall"
	"testing"
	"time"

	"mvdan.cc/sh/v3/syntax"
)

func cut(t testing.TB, in string) []string {
	s := newSubmissions(strings.NewReader(in))
	var out []string
	for {
		src, ok := s.next()
		if !ok {
			return out
		}
		out = append(out, src)
	}
}

var submissionCases = []struct {
	in   string
	want []string
}{
	{"a\nb\n", []string{"a\n", "b\n"}},
	{"a; b\n", []string{"a; b\n"}},
	{"last without newline", []string{"last without newline"}},
	{"if true\nthen x\nfi\nnext\n", []string{"if true\nthen x\nfi\n", "next\n"}},
	{"cat <<EOF\nbody\nEOF\nnext\n", []string{"cat <<EOF\nbody\nEOF\n", "next\n"}},
	{"echo 'a\nb'\n", []string{"echo 'a\nb'\n"}},
	{"ls \\\n -l\n", []string{"ls \\\n -l\n"}},
	{"echo )\nafter\n", []string{"echo )\n", "after\n"}},
	{"echo 'open\n", []string{"echo 'open\n"}},
	{"\n# c\nx\n", []string{"\n", "# c\n", "x\n"}},
	{"f() {\n  x\n}\n", []string{"f() {\n  x\n}\n"}},
	{"", nil},
	{"a\n\n", []string{"a\n", "\n"}},
	{"echo $(\nls\n)\n", []string{"echo $(\nls\n)\n"}},
	{"for i in 1 2\ndo\n echo $i\ndone; echo x\n", []string{"for i in 1 2\ndo\n echo $i\ndone; echo x\n"}},
	{"echo )\necho (\n", []string{"echo )\n", "echo (\n"}},
	{"cat <<<x\ny\n", []string{"cat <<<x\n", "y\n"}},
	{strings.Repeat("y", 200000) + "\nz\n", []string{strings.Repeat("y", 200000) + "\n", "z\n"}},
}

func TestSubmissions(t *testing.T) {
	for _, tc := range submissionCases {
		got := cut(t, tc.in)
		if strings.Join(got, "\x00") != strings.Join(tc.want, "\x00") {
			t.Errorf("%.60q: got %.200q, want %.200q", tc.in, got, tc.want)
		}
	}
}

func FuzzSubmissions(f *testing.F) {
	for _, s := range []string{"a\nb", "if x\nthen y\nfi\n", "cat <<E\nx\nE\n", "echo )\n", "'\n", "$(\n)\n"} {
		f.Add(s)
	}
	f.Fuzz(func(t *testing.T, in string) {
		// Cutting never loses or adds a byte.
		if got := strings.Join(cut(t, in), ""); got != in {
			t.Fatalf("%q cut and joined is %q", in, got)
		}
	})
}

func TestReadSubmissionsStops(t *testing.T) {
	done := make(chan struct{})
	subs := readSubmissions(strings.NewReader("a\nb\nc\n"), nil, done)
	if src := <-subs; src != "a\n" {
		t.Fatalf("first submission %q", src)
	}
	close(done)
	timeout := time.After(5 * time.Second)
	for n := 0; ; n++ {
		select {
		case _, ok := <-subs:
			if !ok {
				return
			}
			if n > 0 {
				t.Fatal("submissions still come after done")
			}
		case <-timeout:
			t.Fatal("the channel is not closed after done")
		}
	}
}

func newChecker(t testing.TB) *bashChecker {
	t.Helper()
	if _, err := exec.LookPath("/bin/bash"); err != nil {
		t.Skip("the syntax checker runs /bin/bash")
	}
	chk := newBashChecker("/bin/bash", nil)
	t.Cleanup(chk.Close)
	return chk
}

// cutWith cuts in as stream mode does, asking chk where mvdan.cc/sh is
// not sure.
func cutWith(t testing.TB, chk completer, in string) []string {
	s := newSubmissions(strings.NewReader(in))
	s.check = chk
	var out []string
	for {
		src, ok := s.next()
		if !ok {
			return out
		}
		out = append(out, src)
	}
}

// bashCut cuts in by asking chk about the text after every line: the
// boundaries bash has.
func bashCut(t testing.TB, chk completer, in string) (subs []string, syntaxErr bool) {
	text := ""
	for _, line := range strings.SplitAfter(in, "\n") {
		if line == "" {
			continue
		}
		text += line
		if !strings.HasSuffix(line, "\n") {
			break
		}
		c, err := chk.complete(text)
		if err != nil {
			t.Fatalf("%q: %v", text, err)
		}
		syntaxErr = syntaxErr || c.syntaxErr
		if c.done {
			subs, text = append(subs, text), ""
		}
	}
	if text != "" {
		subs = append(subs, text)
	}
	return subs, syntaxErr
}

// countingChecker counts the questions it passes on.
type countingChecker struct {
	completer
	n int
}

func (c *countingChecker) complete(text string) (completion, error) {
	c.n++
	return c.completer.complete(text)
}

func TestSubmissionsBash(t *testing.T) {
	chk := newChecker(t)
	cases := []struct {
		in   string
		want []string
		asks int // how many questions bash is asked, at most
	}{
		// mvdan.cc/sh cannot parse $((  )); bash can, so the here-document
		// is one submission, never one per line.
		{"cat > f <<EOF\nline one\necho total $((  ))\nspear-capability list\necho ran\nEOF\necho after\n",
			[]string{"cat > f <<EOF\nline one\necho total $((  ))\nspear-capability list\necho ran\nEOF\n", "echo after\n"}, 2},
		{"cat > f <<EOF\n" + strings.Repeat("line $((  ))\n", 1000) + "EOF\nx\n",
			[]string{"cat > f <<EOF\n" + strings.Repeat("line $((  ))\n", 1000) + "EOF\n", "x\n"}, 2},
		{"cat <<-EOF\n\tbody $((  ))\n\tEOF\nx\n", []string{"cat <<-EOF\n\tbody $((  ))\n\tEOF\n", "x\n"}, 2},
		{"cat <<EOF\n$((  ))\nEO\\\nF\nafter\n", []string{"cat <<EOF\n$((  ))\nEO\\\nF\n", "after\n"}, 3},
		{"cat <<A; cat <<B\n$((  ))\nA\nb\nB\nx\n", []string{"cat <<A; cat <<B\n$((  ))\nA\nb\nB\n", "x\n"}, 3},
		{"echo total $((  ))\nnext\n", []string{"echo total $((  ))\n", "next\n"}, 1},
		{"echo $((  )) 'a\nb\nc'\nd\n", []string{"echo $((  )) 'a\nb\nc'\n", "d\n"}, 2},
		{"echo $((  )) \\\nb\nc\n", []string{"echo $((  )) \\\nb\n", "c\n"}, 4},
		{"echo $((  )) # x \\\nb\n", []string{"echo $((  )) # x \\\n", "b\n"}, 2},
		{"\\\nls\nx\n", []string{"\\\nls\n", "x\n"}, 2},
		{"if true\nthen echo $((  ))\nfi\nx\n", []string{"if true\nthen echo $((  ))\nfi\n", "x\n"}, 3},
		{"if true\n)\nx\n", []string{"if true\n)\n", "x\n"}, 2},
		{"echo )\nafter\n", []string{"echo )\n", "after\n"}, 1},
		{"echo 'open\n", []string{"echo 'open\n"}, 1},
		{"echo $((  ))", []string{"echo $((  ))"}, 0},
		{"cat <<'EOF'\n$((  ))\nEOF\nx\n", []string{"cat <<'EOF'\n$((  ))\nEOF\n", "x\n"}, 2},
		// mvdan.cc/sh reads a shift where bash reads a here-document:
		// its body is never a submission of its own.
		{"let x<<EOF\nspear-capability list\nEOF\necho after\n", []string{"let x<<EOF\nspear-capability list\nEOF\n", "echo after\n"}, 2},
		{"let x<<-EOF\n\tspear-capability list\n\tEOF\nx\n", []string{"let x<<-EOF\n\tspear-capability list\n\tEOF\n", "x\n"}, 2},
		{"let x<<'EOF' y\nspear-capability list\nEOF\nx\n", []string{"let x<<'EOF' y\nspear-capability list\nEOF\n", "x\n"}, 2},
		{"true; let x<<EOF\nEOF\nx\n", []string{"true; let x<<EOF\nEOF\n", "x\n"}, 2},
		{"echo $(let x<<EOF\nspear-capability list\nEOF\n)\nx\n", []string{"echo $(let x<<EOF\nspear-capability list\nEOF\n)\n", "x\n"}, 4},
		{"let x<<<EOF <<EOF\nspear-capability list\nEOF\nx\n", []string{"let x<<<EOF <<EOF\nspear-capability list\nEOF\n", "x\n"}, 2},
		{"declare a[x<<EOF]=1\nspear-capability list\nEOF\nEOF]=1\nx\n", []string{"declare a[x<<EOF]=1\nspear-capability list\nEOF\nEOF]=1\n", "x\n"}, 2},
		{"local a[x<<EOF]\nspear-capability list\nEOF]\nx\n", []string{"local a[x<<EOF]\nspear-capability list\nEOF]\n", "x\n"}, 2},
		{"export a[x<<EOF]=1\nspear-capability list", []string{"export a[x<<EOF]=1\nspear-capability list"}, 1},
		// Where bash reads no here-document either, it is asked once.
		{"echo $((1<<3)) 'a<<b'\nx\n", []string{"echo $((1<<3)) 'a<<b'\n", "x\n"}, 1},
		{"a[x<<EOF]=1\nspear-capability list\nEOF\n", []string{"a[x<<EOF]=1\n", "spear-capability list\n", "EOF\n"}, 1},
		{"((x<<EOF))\nspear-capability list\n", []string{"((x<<EOF))\n", "spear-capability list\n"}, 1},
		// A here-string is one, for both; bash is not asked.
		{"cat <<< \"$x\"\ngrep a <<<b | wc -l\n", []string{"cat <<< \"$x\"\n", "grep a <<<b | wc -l\n"}, 0},
		// Ordinary lines ask nothing.
		{"ls -l\ngo test ./...\necho \"$HOME\" | wc -c\n", []string{"ls -l\n", "go test ./...\n", "echo \"$HOME\" | wc -c\n"}, 0},
	}
	for _, tc := range cases {
		cc := &countingChecker{completer: chk}
		got := cutWith(t, cc, tc.in)
		if strings.Join(got, "\x00") != strings.Join(tc.want, "\x00") {
			t.Errorf("%.80q: got %.200q, want %.200q", tc.in, got, tc.want)
		}
		if cc.n > tc.asks {
			t.Errorf("%.80q: bash was asked %d times, want at most %d", tc.in, cc.n, tc.asks)
		}
	}
}

// TestSubmissionsBashAgrees cuts TestSubmissions' inputs with bash's help:
// where mvdan.cc/sh parses them, nothing changes.
func TestSubmissionsBashAgrees(t *testing.T) {
	chk := newChecker(t)
	for _, tc := range submissionCases {
		got := cutWith(t, chk, tc.in)
		if strings.Join(got, "\x00") != strings.Join(tc.want, "\x00") {
			t.Errorf("%.60q: got %.200q, want %.200q", tc.in, got, tc.want)
		}
	}
}

func TestReadCompletion(t *testing.T) {
	cases := []struct {
		said   string
		status int
		want   completion
	}{
		{"", 0, completion{done: true}},
		{"bash: eval: line 3: syntax error near unexpected token `)'\nbash: eval: line 3: `echo )'\n", 2, completion{done: true, syntaxErr: true}},
		{"bash: eval: line 4: syntax error: unexpected end of file\n", 2, completion{}},
		{"bash: eval: line 4: syntax error: unexpected end of file from `if' command on line 2\n", 2, completion{}},
		{"bash: line 4: warning: here-document at line 3 delimited by end-of-file (wanted `E O')\n", 0, completion{heredoc: "E O"}},
		{"bash: line 4: warning: here-document at line 3 delimited by end-of-file (wanted `a')b')\n", 0, completion{heredoc: "a')b"}},
		{"bash: eval: line 3: unexpected EOF while looking for matching `''\n", 2, completion{quote: '\''}},
		{"bash: eval: line 3: unexpected EOF while looking for matching `)'\n", 2, completion{}},
		{"bash: something else\n", 1, completion{done: true}},
	}
	for _, tc := range cases {
		if got := readCompletion(tc.said, tc.status); got != tc.want {
			t.Errorf("%q, %d: %+v, want %+v", tc.said, tc.status, got, tc.want)
		}
	}
}

func TestCheckerRunsNothing(t *testing.T) {
	chk := newChecker(t)
	dir := t.TempDir()
	for _, src := range []string{"touch %s/a\n", "set +n; touch %s/b\n", "echo $(touch %s/c)\n", "x=$(touch %s/d) y\n", "cat <<EOF\n$(touch %s/e)\nEOF\n"} {
		if _, err := chk.complete(strings.ReplaceAll(src, "%s", dir)); err != nil {
			t.Fatal(err)
		}
	}
	if entries, _ := os.ReadDir(dir); len(entries) > 0 {
		t.Errorf("checking syntax ran commands: %v", entries)
	}
}

func TestCheckerUnavailable(t *testing.T) {
	chk := newBashChecker("/nonexistent/bash", nil)
	defer chk.Close()
	if _, err := chk.complete("echo x\n"); err == nil {
		t.Fatal("no error from a checker that cannot start")
	}
	// Without bash, a text mvdan.cc/sh cannot parse ends at its line.
	got := cutWith(t, chk, "cat <<EOF\n$((  ))\nEOF\n")
	if len(got) < 2 || strings.Join(got, "") != "cat <<EOF\n$((  ))\nEOF\n" {
		t.Errorf("got %q", got)
	}
}

// TestCheckerConfined: the checker's bash starts through the Confiner it
// is given; when the confinement cannot be set up, nothing runs, and no
// unconfined bash is started in its place, then or later.
func TestCheckerConfined(t *testing.T) {
	if _, err := exec.LookPath("/bin/bash"); err != nil {
		t.Skip("the syntax checker runs /bin/bash")
	}
	fc := &fakeConfiner{}
	chk := newBashChecker("/bin/bash", fc)
	defer chk.Close()
	if c, err := chk.complete("if true\n"); err != nil || c.done {
		t.Fatalf("%+v, %v", c, err)
	}
	if fc.commands != 1 {
		t.Errorf("%d confined commands, want 1", fc.commands)
	}

	dir := t.TempDir()
	shell := dir + "/bash"
	if err := os.WriteFile(shell, []byte("#!/bin/sh\ntouch "+dir+"/ran\nexec /bin/bash \"$@\"\n"), 0o755); err != nil {
		t.Fatal(err)
	}
	fc = &fakeConfiner{fail: errors.New("no landlock")}
	chk = newBashChecker(shell, fc)
	defer chk.Close()
	for range 2 {
		if _, err := chk.complete("if true\n"); err == nil || !strings.Contains(err.Error(), "no landlock") {
			t.Errorf("error %v, want the confinement's", err)
		}
	}
	if fc.commands != 1 {
		t.Errorf("%d confined commands, want 1: a checker that cannot be confined is not tried again", fc.commands)
	}
	if _, err := os.Stat(dir + "/ran"); err == nil {
		t.Error("the shell ran although it could not be confined")
	}
}

// FuzzSubmissionsBash checks the boundaries stream mode finds with bash's
// help: joined, the submissions are the input; and where every submission
// bash finds parses with mvdan.cc/sh too, and bash finds no syntax error,
// the submissions are bash's.
func FuzzSubmissionsBash(f *testing.F) {
	for _, s := range []string{
		"a\nb", "if x\nthen y\nfi\n", "cat <<E\nx\nE\n", "echo )\n", "'\n", "$(\n)\n",
		"cat <<EOF\n$((  ))\nEOF\nx\n", "echo a \\\nb\n", "# c \\\nb\n", "cat <<A\nA\\\n\nA\n",
		"f() {\n:\n}\n", "case x in\nx) :;;\nesac\n", "echo \"a\nb\"\n", "a=(1\n2)\n", "echo ${x:-\n}\n",
		"cat <<-E\n\tx\n\tE\n", "echo `\n`\n", "[[ a ==\nb ]]\n", "x |\ny\n", "x &&\ny\n", "echo $'a\\\nb'\n",
		"let x<<E\nb\nE\nc\n", "declare a[x<<E]=1\nb\nE]=1\nc\n", "echo $((1<<2))\nb\n", "cat <<<x\nb\n",
	} {
		f.Add(s)
	}
	if _, err := exec.LookPath("/bin/bash"); err != nil {
		f.Skip("the syntax checker runs /bin/bash")
	}
	// One checker for every input: it replaces a bash that failed.
	chk := newBashChecker("/bin/bash", nil)
	f.Cleanup(chk.Close)
	f.Fuzz(func(t *testing.T, in string) {
		got := cutWith(t, chk, in)
		if joined := strings.Join(got, ""); joined != in {
			t.Fatalf("%q cut and joined is %q", in, joined)
		}
		if strings.ContainsAny(in, "\x00") {
			t.Skip()
		}
		want, syntaxErr := bashCut(t, chk, in)
		if syntaxErr {
			t.Skip()
		}
		for _, sub := range want {
			if _, err := syntax.NewParser(syntax.Variant(syntax.LangBash)).Parse(strings.NewReader(sub), ""); err != nil {
				t.Skip()
			}
		}
		if strings.Join(got, "\x00") != strings.Join(want, "\x00") {
			t.Fatalf("%q: cut into %q, bash reads %q", in, got, want)
		}
	})
}

// ordinaryLines is a session of one-line commands, as an agent sends them.
var ordinaryLines = strings.Repeat("cd ~/src/app && go test ./... 2>&1 | tail -20\ngrep -rn 'func main' --include=*.go . | head\necho \"done: $?\"\n", 100)

// BenchmarkSubmissionsOrdinary cuts one-line commands: bash is never asked.
func BenchmarkSubmissionsOrdinary(b *testing.B) {
	chk := newChecker(b)
	b.SetBytes(int64(len(ordinaryLines)))
	for i := 0; i < b.N; i++ {
		if n := len(cutWith(b, chk, ordinaryLines)); n != 300 {
			b.Fatalf("%d submissions", n)
		}
	}
}

// BenchmarkSubmissionsHeredoc cuts a here-document of 200 lines that
// mvdan.cc/sh cannot parse: bash is asked twice.
func BenchmarkSubmissionsHeredoc(b *testing.B) {
	chk := newChecker(b)
	in := "cat > f <<EOF\n" + strings.Repeat("total $((  )) of the line\n", 200) + "EOF\n"
	b.SetBytes(int64(len(in)))
	for i := 0; i < b.N; i++ {
		if n := len(cutWith(b, chk, in)); n != 1 {
			b.Fatalf("%d submissions", n)
		}
	}
}

// BenchmarkSubmissionsMultiline cuts a five-line if statement: bash is
// asked after each line but the last.
func BenchmarkSubmissionsMultiline(b *testing.B) {
	chk := newChecker(b)
	in := "if [ -f go.mod ]\nthen\n  go vet ./...\n  go test ./...\nfi\n"
	b.SetBytes(int64(len(in)))
	for i := 0; i < b.N; i++ {
		if n := len(cutWith(b, chk, in)); n != 1 {
			b.Fatalf("%d submissions", n)
		}
	}
}

// TestCheckerRecovers has the checker's bash die: the next question starts
// a new one.
func TestCheckerRecovers(t *testing.T) {
	chk := newChecker(t)
	if c, err := chk.complete("if true\n"); err != nil || c.done {
		t.Fatalf("%+v, %v", c, err)
	}
	syscall.Kill(-chk.cmd.Process.Pid, syscall.SIGKILL)
	if _, err := chk.complete("if true\nthen :\n"); err == nil {
		t.Fatal("no error from a checker whose bash died")
	}
	if c, err := chk.complete("if true\nthen :\nfi\n"); err != nil || !c.done {
		t.Fatalf("after a restart: %+v, %v", c, err)
	}
}
