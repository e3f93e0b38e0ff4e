package entry

import (
	"os/exec"
	"strings"
	"testing"
)

// entryPackages is everything spear-answer's binary may link besides the
// standard library: the deployment's settings and the turn file, the
// nested check, the session process's wire, the hand-on to
// spear-capability. The gateway, the MCP client, JSON schemas, the audit
// trail and package warm run in the session process, never here.
var entryPackages = map[string]bool{
	"spear/cmd/spear-answer":    true,
	"spear/entry":               true,
	"spear/confine":             true,
	"spear/deploy":              true,
	"spear/internal/handoff":    true,
	"spear/internal/hostwire":   true,
	"spear/internal/procs":      true,
	"spear/internal/strictjson": true,
	"spear/outcome":             true,
	"spear/turnshell":           true,
	"golang.org/x/sys/unix":     true,
}

// heavyStd are standard packages each of which costs start-up time, and
// net would make the binary load the C library.
var heavyStd = []string{"net", "net/http", "crypto/tls", "crypto/x509", "text/template", "html/template", "mime", "net/url", "os/user", "runtime/cgo"}

// maxEntryDeps bounds the whole package set, the standard library included
// (86 when this was written; spear-capability links 235).
const maxEntryDeps = 95

func TestEntryDeps(t *testing.T) {
	out, err := exec.Command("go", "list", "-deps", "-f", "{{.ImportPath}} {{.Standard}}", "spear/cmd/spear-answer").CombinedOutput()
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
		if !entryPackages[path] {
			t.Errorf("spear-answer links %s: the quick entry point must link only what reaching the session process needs", path)
		}
	}
	for _, p := range heavyStd {
		if std[p] {
			t.Errorf("spear-answer links %s", p)
		}
	}
	if n > maxEntryDeps {
		t.Errorf("spear-answer links %d packages, more than %d", n, maxEntryDeps)
	}
}
