// Package depcheck checks, for tests, that a binary links only the
// packages it is allowed: what a small binary links is what every one of
// its starts pays for.
package depcheck

import (
	"os/exec"
	"strings"
	"testing"
)

// Rules say what a binary may link.
type Rules struct {
	// Allowed are the packages outside the standard library it may link.
	Allowed map[string]bool
	// Forbidden are standard packages it must not link.
	Forbidden []string
	// Max bounds the whole package set, the standard library included.
	Max int
	// Why is said with every package that is not allowed.
	Why string
}

// Check fails t for every package that pkg (an import path) links against
// the rules.
func Check(t *testing.T, pkg string, r Rules) {
	t.Helper()
	out, err := exec.Command("go", "list", "-deps", "-f", "{{.ImportPath}} {{.Standard}}", pkg).CombinedOutput()
	if err != nil {
		t.Fatalf("go list: %v\n%s", err, out)
	}
	std := map[string]bool{}
	n := 0
	for _, line := range strings.Split(strings.TrimSpace(string(out)), "\n") {
		path, isStd, _ := strings.Cut(line, " ")
		n++
		if isStd == "true" {
			std[path] = true
			continue
		}
		if !r.Allowed[path] {
			t.Errorf("%s links %s: %s", pkg, path, r.Why)
		}
	}
	for _, p := range r.Forbidden {
		if std[p] {
			t.Errorf("%s links %s", pkg, p)
		}
	}
	if n > r.Max {
		t.Errorf("%s links %d packages, more than %d", pkg, n, r.Max)
	}
}
