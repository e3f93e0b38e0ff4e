package handoff

import (
	"os"
	"path/filepath"
	"slices"
	"strings"
	"testing"
)

func TestParse(t *testing.T) {
	cases := []struct {
		args []string
		mode string
		rest []string
		err  string
	}{
		{[]string{"answer", "list"}, Answer, []string{"list"}, ""},
		{[]string{"answer"}, Answer, []string{}, ""},
		{[]string{"shell", "spear-term", "-l"}, Shell, []string{"spear-term", "-l"}, ""},
		{[]string{"shell"}, "", nil, "no argv[0]"},
		{nil, "", nil, "no mode"},
		{[]string{"run", "x"}, "", nil, `unknown mode "run"`},
	}
	for _, tc := range cases {
		mode, rest, err := Parse(tc.args)
		if tc.err != "" {
			if err == nil || !strings.Contains(err.Error(), tc.err) {
				t.Errorf("%q: error %v, want %q", tc.args, err, tc.err)
			}
			continue
		}
		if err != nil || mode != tc.mode || !slices.Equal(rest, tc.rest) {
			t.Errorf("%q: %q %q %v, want %q %q", tc.args, mode, rest, err, tc.mode, tc.rest)
		}
	}
}

// The test binary has no spear-capability beside it: Exec says so, and
// what to do, and the process goes on.
func TestExecMissing(t *testing.T) {
	self, err := os.Executable()
	if err != nil {
		t.Fatal(err)
	}
	want := filepath.Join(filepath.Dir(self), Binary)
	if _, err := os.Stat(want); err == nil {
		t.Skipf("%s exists", want)
	}
	if p, err := Path(); err != nil || p != want {
		t.Errorf("Path() = %q, %v; want %q", p, err, want)
	}
	err = Exec(Answer, []string{"list"}, os.Environ())
	if err == nil || !strings.Contains(err.Error(), want+" is missing") || !strings.Contains(err.Error(), "make install") {
		t.Errorf("Exec: %v", err)
	}
}

// The test binary has neither spear-term nor spear-capability beside it:
// only itself is installed, as far as the confinement is concerned.
func TestInstalled(t *testing.T) {
	self, err := os.Executable()
	if err != nil {
		t.Fatal(err)
	}
	dir := filepath.Dir(self)
	var want []string
	want = append(want, self)
	for _, name := range []string{TermBinary, Binary} {
		if _, err := os.Stat(filepath.Join(dir, name)); err == nil {
			want = append(want, filepath.Join(dir, name))
		}
	}
	if got := Installed(); !slices.Equal(got, want) {
		t.Errorf("Installed() = %q, want %q", got, want)
	}
}

// FuzzParse: any arguments give a known mode with what follows it, or an
// error; never a panic.
func FuzzParse(f *testing.F) {
	f.Add("answer", "list", "")
	f.Add("shell", "spear-term", "-c")
	f.Add("shell", "", "")
	f.Add("", "", "")
	f.Fuzz(func(t *testing.T, a, b, c string) {
		for n := 0; n <= 3; n++ {
			args := []string{a, b, c}[:n]
			mode, rest, err := Parse(args)
			if err != nil {
				continue
			}
			if mode != Answer && mode != Shell || !slices.Equal(rest, args[1:]) || mode == Shell && len(rest) == 0 {
				t.Fatalf("Parse(%q) = %q, %q", args, mode, rest)
			}
		}
	})
}

// The test binary has no spear-capability beside it: its directory is
// the one to keep from the turn.
func TestMissingEntry(t *testing.T) {
	self, err := os.Executable()
	if err != nil {
		t.Fatal(err)
	}
	dir := filepath.Dir(self)
	want := dir
	if _, err := os.Lstat(filepath.Join(dir, Binary)); err == nil {
		want = ""
	}
	if got := MissingEntry(); got != want {
		t.Errorf("MissingEntry() = %q, want %q", got, want)
	}
}
