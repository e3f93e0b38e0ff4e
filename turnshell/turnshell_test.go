package turnshell

import (
	"os"
	"os/exec"
	"slices"
	"spear/internal/procs"
	"strings"
	"testing"
)

func TestChildEnv(t *testing.T) {
	for _, tc := range []struct{ in, want []string }{
		{[]string{"A=1", Marker + "=old", "B=2"}, []string{"A=1", "B=2", Marker + "=1"}},
		{nil, []string{Marker + "=1"}},
		{[]string{Marker + "X=2", "B="}, []string{Marker + "X=2", "B=", Marker + "=1"}},
	} {
		if got := ChildEnv(tc.in); !slices.Equal(got, tc.want) {
			t.Errorf("ChildEnv(%q) = %q, want %q", tc.in, got, tc.want)
		}
	}
}

func TestInsideByMarker(t *testing.T) {
	if !Inside(func(k string) string { return map[string]string{Marker: "1"}[k] }) {
		t.Error("the marker does not count")
	}
}

// TestInsideByAncestor runs the test binary under a parent named
// spear-term (a copy of bash under that name) with no marker: the ancestor
// walk must find it.
func TestInsideByAncestor(t *testing.T) {
	if os.Getenv("TURNSHELL_CHILD") == "1" {
		if !Inside(func(string) string { return "" }) {
			os.Exit(3)
		}
		os.Exit(0)
	}
	if Inside(func(string) string { return "" }) {
		t.Skip("the test itself runs under spear-term")
	}
	bash, err := exec.LookPath("bash")
	if err != nil {
		t.Skip("no bash")
	}
	data, err := os.ReadFile(bash)
	if err != nil {
		t.Fatal(err)
	}
	term := t.TempDir() + "/" + TermName
	if err := os.WriteFile(term, data, 0o755); err != nil {
		t.Fatal(err)
	}
	// bash runs the test binary as a child (not exec: "; true" keeps it
	// the parent).
	cmd := exec.Command(term, "-c", `"$0" -test.run '^TestInsideByAncestor$'; true`, os.Args[0])
	cmd.Env = append(os.Environ(), "TURNSHELL_CHILD=1")
	out, err := cmd.CombinedOutput()
	if err != nil {
		t.Fatalf("%v: %s", err, out)
	}
	cmd = exec.Command(term, "-c", `"$0" -test.run '^TestInsideByAncestor$'; echo status $?`, os.Args[0])
	cmd.Env = append(os.Environ(), "TURNSHELL_CHILD=1")
	out, _ = cmd.CombinedOutput()
	if !strings.Contains(string(out), "status 0") {
		t.Errorf("under a spear-term ancestor, Inside was false: %s", out)
	}
}

func TestInsideNoMarker(t *testing.T) {
	env := func(m map[string]string) func(string) string { return func(k string) string { return m[k] } }
	if !Inside(env(map[string]string{Marker: "1"})) {
		t.Error("the marker is set, but not inside a turn's shell")
	}
	if slices.Contains(procs.Ancestors(os.Getpid()), TermName) {
		t.Skip("the test itself runs under spear-term")
	}
	if Inside(env(nil)) {
		t.Error("no marker and no spear-term among the ancestors, but inside a turn's shell")
	}
}
