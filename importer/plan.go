package importer

import (
	"errors"
	"fmt"
	"strings"

	"spear/deploy"
)

// Options say how a file's servers become registry entries.
type Options struct {
	// Registry is the provider registry's path: every entry is checked as
	// the registry loader would check it there.
	Registry string
	// Scope is written into every entry; "" writes none, and then the
	// entries apply nowhere until one is set.
	Scope string
	// Only, when set, imports just these servers, named as the file names
	// them or by the ids they get.
	Only []string
	// Taken are the ids the registry already has.
	Taken []string
	// Resolve returns the absolute path of a server's command; nil keeps
	// the command as written.
	Resolve func(name string) (string, error)
}

// Line is one line of what an import says, such as
// {"skipped", `remote: an HTTP server (type "http"); …`}.
type Line struct {
	Tag, Text string
}

// Plan is what an import would write, and what it says of each server.
type Plan struct {
	Entries []*deploy.Entry
	Lines   []Line
}

// PlanError lists everything that stops an import. Nothing is written.
type PlanError struct {
	Problems []string
}

func (e *PlanError) Error() string { return strings.Join(e.Problems, "\n") }

// Plan turns the file's servers into registry entries: ids made valid and
// unique, commands resolved, and every entry's class left to the
// operator ("read": [] and "write": "refuse"), whatever the server may
// later say of its tools. A server that cannot be imported is a line that
// says why; an id the registry already has, a command that cannot be
// found, or an --only name the file does not list is a *PlanError.
func (f *File) Plan(o Options) (*Plan, error) {
	var problems []string
	if o.Scope != "" {
		if _, err := deploy.ParseScope(o.Scope); err != nil {
			return nil, &PlanError{[]string{"--scope: " + err.Error()}}
		}
	}
	p := &Plan{}
	for _, n := range f.Notes {
		p.Lines = append(p.Lines, Line{n.Kind, "the file's " + n.Text})
	}
	onlyUsed := map[string]bool{}
	selected := func(s *Server, id string) bool {
		if len(o.Only) == 0 {
			return true
		}
		ok := false
		for _, n := range o.Only {
			if n == s.Name || n == id {
				onlyUsed[n], ok = true, true
			}
		}
		return ok
	}
	taken := map[string]bool{}
	for _, id := range o.Taken {
		taken[id] = true
	}
	used := map[string]bool{}
	for i := range f.Servers {
		s := &f.Servers[i]
		base := MakeID(s.Name)
		if !selected(s, base) {
			p.Lines = append(p.Lines, Line{"skipped", fmt.Sprintf("%s: --only does not name it", s.Where)})
			continue
		}
		if s.Skip != "" {
			p.Lines = append(p.Lines, Line{"skipped", fmt.Sprintf("%s: %s", s.Where, s.Skip)})
			continue
		}
		id := base
		for n := 2; used[id]; n++ {
			id = withSuffix(base, n)
		}
		used[id] = true
		switch {
		case id != base:
			p.Lines = append(p.Lines, Line{"renamed", fmt.Sprintf("%s: %q from %s, because %s is another server's id in this file", id, s.Name, s.Where, base)})
		case id != s.Name:
			p.Lines = append(p.Lines, Line{"renamed", fmt.Sprintf("%s: %q from %s, because an id is 1 to 64 of a-z, 0-9, - and _, starting with a letter", id, s.Name, s.Where)})
		}
		if taken[id] {
			problems = append(problems, fmt.Sprintf("server %q: the registry already has an entry with id %s; leave the server out with --only, or remove that entry first (spear-capability remove %s)", s.Name, id, id))
			continue
		}
		command := s.Command[0]
		if o.Resolve != nil {
			path, err := o.Resolve(command)
			var nf *deploy.CommandNotFoundError
			if errors.As(err, &nf) {
				problems = append(problems, fmt.Sprintf("server %q: command %q %s; install it, write its absolute path in %s, or leave the server out with --only", s.Name, nf.Name, nf.Why, f.Path))
				continue
			}
			if err != nil {
				problems = append(problems, fmt.Sprintf("server %q: %v", s.Name, err))
				continue
			}
			command = path
		}
		p.Lines = append(p.Lines, Line{"import", fmt.Sprintf("%s from %s", id, s.Where)})
		if command != s.Command[0] {
			p.Lines = append(p.Lines, Line{"command", fmt.Sprintf("%s: %s is %s", id, s.Command[0], command)})
		}
		for _, n := range s.Notes {
			p.Lines = append(p.Lines, Line{n.Kind, fmt.Sprintf("%s: %s", id, n.Text)})
		}
		e := &deploy.Entry{
			ID:      id,
			Command: append([]string{command}, s.Command[1:]...),
			Scope:   o.Scope,
			Env:     s.Env,
			Read:    []string{},
			Write:   deploy.WriteRefuse,
		}
		if _, err := e.Check(o.Registry); err != nil {
			problems = append(problems, fmt.Sprintf("server %q: %v", s.Name, err))
			continue
		}
		p.Entries = append(p.Entries, e)
	}
	for _, n := range o.Only {
		if !onlyUsed[n] {
			var names []string
			for _, s := range f.Servers {
				names = append(names, s.Name)
			}
			problems = append(problems, fmt.Sprintf("--only names %q, which %s does not list; it lists %s", n, f.Path, strings.Join(quoteAll(names), ", ")))
		}
	}
	if problems != nil {
		return nil, &PlanError{problems}
	}
	return p, nil
}

func quoteAll(names []string) []string {
	out := make([]string, len(names))
	for i, n := range names {
		out[i] = fmt.Sprintf("%q", n)
	}
	if len(out) == 0 {
		return []string{"no servers"}
	}
	return out
}

// MakeID turns a server's name into a valid provider id: lower case; each
// run of other characters than a-z, 0-9, _ and - one "-"; "mcp-" before
// one that does not start with a letter; at most 64 bytes.
func MakeID(name string) string {
	var b strings.Builder
	dash := false
	for _, r := range strings.ToLower(name) {
		switch {
		case r >= 'a' && r <= 'z', r >= '0' && r <= '9', r == '_':
			b.WriteRune(r)
			dash = false
		default:
			if !dash && b.Len() > 0 {
				b.WriteByte('-')
				dash = true
			}
		}
	}
	id := strings.TrimRight(b.String(), "-")
	if id == "" || id[0] < 'a' || id[0] > 'z' {
		id = strings.TrimRight("mcp-"+id, "-")
	}
	if len(id) > 64 {
		id = strings.TrimRight(id[:64], "-")
	}
	return id
}

// withSuffix returns base-n, shortening base to keep 64 bytes.
func withSuffix(base string, n int) string {
	suffix := fmt.Sprintf("-%d", n)
	if len(base)+len(suffix) > 64 {
		base = strings.TrimRight(base[:64-len(suffix)], "-")
	}
	return base + suffix
}
