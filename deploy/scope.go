package deploy

import (
	"fmt"
	"path/filepath"
	"strings"
)

// Scope says where a provider applies, in the rule header's syntax.
type Scope struct {
	Kind  string   // "global", "corpus", "family" or "path"; "" applies nowhere
	Names []string // projects for corpus, families for family
	Path  string   // the directory for path
}

func (s Scope) String() string {
	switch s.Kind {
	case "":
		return "(none)"
	case "global":
		return "global"
	case "path":
		return "path " + s.Path
	default:
		return s.Kind + " " + strings.Join(s.Names, ", ")
	}
}

// ParseScope reads "global", "corpus a, b", "family x, y" or "path /dir".
func ParseScope(s string) (Scope, error) {
	s = strings.TrimSpace(s)
	kind, rest, _ := strings.Cut(s, " ")
	rest = strings.TrimSpace(rest)
	switch kind {
	case "global":
		if rest != "" {
			return Scope{}, fmt.Errorf("global takes nothing after it, found %q", rest)
		}
		return Scope{Kind: "global"}, nil
	case "corpus", "family":
		var names []string
		for _, n := range strings.Split(rest, ",") {
			n = strings.TrimSpace(n)
			if n == "" {
				return Scope{}, fmt.Errorf("%s takes a comma-separated list of names, as in %q", kind, kind+" a, b")
			}
			names = append(names, n)
		}
		return Scope{Kind: kind, Names: names}, nil
	case "path":
		if !filepath.IsAbs(rest) {
			return Scope{}, fmt.Errorf("path takes an absolute directory, as in \"path /src/web\", found %q", rest)
		}
		return Scope{Kind: "path", Path: filepath.Clean(rest)}, nil
	default:
		return Scope{}, fmt.Errorf("%q is not a scope; write global, corpus <project>[, ...], family <name>[, ...] or path <dir>", s)
	}
}

// Covers reports whether the scope includes a turn in project p (nil for an
// unregistered tree) at the workspace given (absolute, as the turn file
// says) and resolved (ws), and says why not. A path scope must contain the
// workspace both ways: the turn can plant symlinks in its workspace, which
// would otherwise make a scope of a directory in it (resolved through the
// turn's link) cover the whole workspace.
func (s Scope) Covers(p *Project, given, ws string) (bool, string) {
	if p == nil {
		return false, "the workspace is in no registered project"
	}
	switch s.Kind {
	case "":
		return false, "the entry has no scope, so it applies nowhere"
	case "global":
		return true, ""
	case "corpus":
		for _, n := range s.Names {
			if n == p.Name {
				return true, ""
			}
		}
		return false, fmt.Sprintf("scope %s does not include project %s", s, p.Name)
	case "family":
		for _, n := range s.Names {
			if p.Family != "" && n == p.Family {
				return true, ""
			}
		}
		if p.Family == "" {
			return false, fmt.Sprintf("scope %s: project %s has no family", s, p.Name)
		}
		return false, fmt.Sprintf("scope %s does not include family %s", s, p.Family)
	case "path":
		if within(filepath.Clean(s.Path), given) && within(resolvePath(s.Path), ws) {
			return true, ""
		}
		return false, fmt.Sprintf("scope %s does not contain the workspace", s)
	}
	return false, "unknown scope"
}

// resolvePath makes p absolute and resolves its symlinks as far as it
// exists.
func resolvePath(p string) string {
	abs, err := filepath.Abs(p)
	if err != nil {
		return filepath.Clean(p)
	}
	if r, err := filepath.EvalSymlinks(abs); err == nil {
		return r
	}
	return abs
}

// within reports whether path is dir or below it, compared component by
// component (/src/web2 is not within /src/web).
func within(dir, path string) bool {
	rel, err := filepath.Rel(dir, path)
	if err != nil {
		return false
	}
	return rel == "." || (rel != ".." && !strings.HasPrefix(rel, "../"))
}
