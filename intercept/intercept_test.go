package intercept

import (
	"bytes"
	"context"
	"io"
	"strings"
	"testing"

	"spear/shellparse"
)

func TestParseShellArgs(t *testing.T) {
	cases := []struct {
		args                       []string
		hasCommand                 bool
		command                    string
		script, stdin, interactive bool
		options, positional        string
	}{
		{[]string{"-c", "ls"}, true, "ls", false, false, false, "", ""},
		{[]string{"-lc", "ls", "argv0", "a"}, true, "ls", false, false, false, "-l", "argv0 a"},
		{[]string{"-l", "-c", "ls"}, true, "ls", false, false, false, "-l", ""},
		{[]string{"-c", "-e", "ls"}, true, "ls", false, false, false, "-e", ""},
		{[]string{"--login", "--norc", "-c", "ls"}, true, "ls", false, false, false, "--login --norc", ""},
		{[]string{"--rcfile", "f", "-c", "ls"}, true, "ls", false, false, false, "--rcfile f", ""},
		{[]string{"-o", "pipefail", "-O", "extglob", "-c", "ls"}, true, "ls", false, false, false, "-o pipefail -O extglob", ""},
		{[]string{"-eo", "pipefail", "-c", "ls"}, true, "ls", false, false, false, "-eo pipefail", ""},
		{[]string{"+o", "history", "-c", "ls"}, true, "ls", false, false, false, "+o history", ""},
		{[]string{"-c"}, true, "", false, false, false, "", ""},
		{[]string{"-c", "--", "ls"}, true, "ls", false, false, false, "", ""},
		{[]string{"script.sh", "a"}, false, "", true, false, false, "", "script.sh a"},
		{[]string{"-x", "script.sh"}, false, "", true, false, false, "-x", "script.sh"},
		{[]string{"-s", "a", "b"}, false, "", false, true, false, "", "a b"},
		{[]string{"-i"}, false, "", false, false, true, "", ""},
		{[]string{}, false, "", false, false, false, "", ""},
		{[]string{"-", "x"}, false, "", true, false, false, "", "x"},
	}
	for _, tc := range cases {
		sa := ParseShellArgs(tc.args)
		if sa.HasCommand != tc.hasCommand || sa.Command != tc.command || sa.Script != tc.script || sa.ReadStdin != tc.stdin ||
			sa.Interactive != tc.interactive || strings.Join(sa.Options, " ") != tc.options || strings.Join(sa.Positional, " ") != tc.positional {
			t.Errorf("%q: %+v", tc.args, sa)
		}
	}
}

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

func TestSubmissions(t *testing.T) {
	cases := []struct {
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
		{strings.Repeat("y", 200000) + "\nz\n", []string{strings.Repeat("y", 200000) + "\n", "z\n"}},
	}
	for _, tc := range cases {
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

type fakeGateway struct {
	answered [][]string
	refused  []string
}

func (g *fakeGateway) Answer(ctx context.Context, args []string, stdout, stderr io.Writer) int {
	g.answered = append(g.answered, args)
	io.WriteString(stdout, "answered\n")
	return 0
}

func (g *fakeGateway) RecordRefusal(ctx context.Context, args []string, reason string) error {
	g.refused = append(g.refused, reason)
	return nil
}

func TestRespond(t *testing.T) {
	g := &fakeGateway{}
	ic := &Interceptor{Gateway: g}
	var out, errb bytes.Buffer
	if st := ic.Respond(context.Background(), shellparse.Classify("spear-capability list"), &out, &errb); st != 0 || out.String() != "answered\n" {
		t.Errorf("invocation: %d %q", st, out.String())
	}
	out.Reset()
	if st := ic.Respond(context.Background(), shellparse.Classify("spear-capability list | cat"), &out, &errb); st != 2 || len(g.refused) != 1 || !strings.Contains(errb.String(), "spear-capability: refused: ") {
		t.Errorf("refusal: %d %q %v", st, errb.String(), g.refused)
	}
	errb.Reset()
	nested := &Interceptor{Gateway: g, Nested: func() bool { return true }}
	if st := nested.Respond(context.Background(), shellparse.Classify("spear-capability list"), &out, &errb); st != 2 || !strings.Contains(errb.String(), "does nothing") || len(g.answered) != 1 {
		t.Errorf("nested: %d %q", st, errb.String())
	}
	errb.Reset()
	none := &Interceptor{}
	if st := none.Respond(context.Background(), shellparse.Classify("spear-capability list"), &out, &errb); st != 2 || !strings.Contains(errb.String(), "no capability gateway is configured") {
		t.Errorf("no gateway: %d %q", st, errb.String())
	}
}
