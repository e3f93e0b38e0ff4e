package entry

import (
	"testing"

	"spear/internal/depcheck"
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
	depcheck.Check(t, "spear/cmd/spear-answer", depcheck.Rules{Allowed: entryPackages, Forbidden: heavyStd, Max: maxEntryDeps,
		Why: "the quick entry point must link only what reaching the session process needs"})
}
