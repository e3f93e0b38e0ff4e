package term

import (
	"testing"

	"spear/internal/depcheck"
)

// passThroughPackages is everything spear-term's binary may link besides
// the standard library: reading the line, the classifier, the deployment's
// settings and the confinement, exec, and asking the session process for
// an answer over its socket (entry, hostwire). The gateway, the MCP client,
// JSON schemas, the audit trail and package warm belong to the session
// process and to the entry point spear-term hands the rest to
// (spear-capability), never to the binary every ordinary command starts.
var passThroughPackages = map[string]bool{
	"spear/cmd/spear-term":      true,
	"spear/cmd/spear-term/term": true,
	"spear/confine":             true,
	"spear/deploy":              true,
	"spear/entry":               true,
	"spear/netwall":             true,
	"spear/harness":             true,
	"spear/internal/hostwire":   true,
	"spear/internal/lineread":   true,
	"spear/internal/handoff":    true,
	"spear/internal/procs":      true,
	"spear/internal/strictjson": true,
	"spear/outcome":             true,
	"spear/realshell":           true,
	"spear/shellparse":          true,
	"spear/turnshell":           true,
	"mvdan.cc/sh/v3/syntax":     true,
	"mvdan.cc/sh/v3/fileutil":   true,
	"golang.org/x/sys/unix":     true,
}

// heavyStd are standard packages that only the gateway's side needs; each
// costs start-up time in every process that links it.
// net would also make the binary load the C library.
var heavyStd = []string{"net", "net/http", "crypto/tls", "crypto/x509", "text/template", "html/template", "mime", "net/url", "os/user", "runtime/cgo"}

// maxPassThroughDeps bounds the whole package set, the standard library
// included (92 when this was written, against 227 with the gateway
// linked in; 101 since the session's network, package netwall, which
// brings net/netip and unique).
const maxPassThroughDeps = 104

func TestPassThroughDeps(t *testing.T) {
	depcheck.Check(t, "spear/cmd/spear-term", depcheck.Rules{Allowed: passThroughPackages, Forbidden: heavyStd, Max: maxPassThroughDeps,
		Why: "the pass-through path must link only what reading the line and starting the shell need (hand the rest to spear-capability, package handoff)"})
}
