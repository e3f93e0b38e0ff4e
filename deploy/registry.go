package deploy

import (
	"encoding/json"
	"errors"
	"fmt"
	"io/fs"
	"math"
	"path/filepath"
	"sort"
	"strings"
	"time"

	"spear/internal/strictjson"
)

// DefaultTimeout is a provider's timeout when its entry names none, and
// MaxTimeout the largest an entry may name.
const (
	DefaultTimeout = 10 * time.Second
	MaxTimeout     = 300 * time.Second
)

// Provider is one valid entry of capabilities.json.
type Provider struct {
	ID      string
	Command []string
	Scope   Scope
	Tasks   []Task
	Env     map[string]string
	Read    []string
	Write   WritePolicy
	Enabled bool
	Timeout time.Duration
	// Private are absolute paths only the provider may read (token files,
	// credentials, install directories): the turn's shell is confined away
	// from them.
	Private []string
	// Lifetime says whether the server is kept for the session or started
	// for each use.
	Lifetime Lifetime
	// Dir is the directory the server starts in: the registry's own, which
	// the turn's shell cannot write. It is never the turn's workspace.
	Dir string
}

// Serves reports whether the provider's tasks include class.
func (p *Provider) Serves(class Task) bool {
	for _, t := range p.Tasks {
		if t == class {
			return true
		}
	}
	return false
}

// Reads reports whether the registry names tool as one that only reads.
func (p *Provider) Reads(tool string) bool {
	for _, r := range p.Read {
		if r == tool {
			return true
		}
	}
	return false
}

// ClassOf returns the class the registry gives a tool of p: READ when its
// read key names the tool, else WRITE.
func (p *Provider) ClassOf(tool string) Access {
	if p.Reads(tool) {
		return Read
	}
	return Write
}

// EnvNames returns the names of the provider's extra variables, sorted;
// their values are never recorded.
func (p *Provider) EnvNames() []string {
	names := make([]string, 0, len(p.Env))
	for k := range p.Env {
		names = append(names, k)
	}
	sort.Strings(names)
	return names
}

// Problem is one thing wrong with a registry entry or file.
type Problem struct {
	File  string
	Entry string // the entry's id or name, else "#N"
	Key   string
	Msg   string
}

func (p Problem) Error() string {
	var b strings.Builder
	b.WriteString(p.File)
	if p.Entry != "" {
		fmt.Fprintf(&b, ": entry %s", p.Entry)
	}
	if p.Key != "" {
		fmt.Fprintf(&b, ": key %q", p.Key)
	}
	b.WriteString(": ")
	b.WriteString(p.Msg)
	return b.String()
}

// Registry is the provider registry.
type Registry struct {
	Path      string
	Missing   bool
	Providers []*Provider
	Problems  []Problem
}

// Provider returns the valid entry with the given id, or nil.
func (r *Registry) Provider(id string) *Provider {
	for _, p := range r.Providers {
		if p.ID == id {
			return p
		}
	}
	return nil
}

var providerKeys = []string{"id", "command", "scope", "tasks", "env", "read", "write", "enabled", "timeout", "private", "lifetime"}

// LoadRegistry reads capabilities.json. A missing file registers nothing.
// An entry with an unknown key, a wrong type or a bad value is rejected as
// a Problem that names the entry, the key and what is allowed; the other
// entries still load. A file that is not JSON is a *FileError.
func LoadRegistry(path string) (*Registry, error) {
	data, err := readConfig(path)
	if errors.Is(err, fs.ErrNotExist) {
		return &Registry{Path: path, Missing: true}, nil
	}
	if err != nil {
		return nil, err
	}
	return ParseRegistry(path, data)
}

// ParseRegistry reads capabilities.json's content; path names it in errors.
func ParseRegistry(path string, data []byte) (*Registry, error) {
	providers, problems, err := parseEntries(path, data, entrySpec[*Provider]{
		listKey: "providers",
		decode:  func(i int, raw json.RawMessage) (*Provider, *Problem) { return decodeProvider(path, i, raw) },
		name:    func(p *Provider) string { return p.ID },
		nameKey: "id",
		dupMsg:  "another entry has this id; ids must be unique",
	})
	if err != nil {
		return nil, err
	}
	dir := filepath.Dir(path)
	if abs, err := filepath.Abs(dir); err == nil {
		dir = abs
	}
	for _, p := range providers {
		p.Dir = dir
	}
	return &Registry{Path: path, Providers: providers, Problems: problems}, nil
}

func decodeProvider(path string, i int, raw json.RawMessage) (*Provider, *Problem) {
	entry := fmt.Sprintf("#%d", i+1)
	bad := func(key, format string, args ...any) *Problem {
		return &Problem{File: path, Entry: entry, Key: key, Msg: fmt.Sprintf(format, args...)}
	}
	var m map[string]json.RawMessage
	if err := json.Unmarshal(raw, &m); err != nil {
		return nil, bad("", "an entry must be an object, found %s", strictjson.TypeName(raw))
	}
	p := &Provider{Tasks: []Task{TaskImplementation, TaskMixed}, Write: WriteRefuse, Enabled: true, Timeout: DefaultTimeout, Lifetime: LifetimeSession}
	if v, ok := m["id"]; ok {
		if err := json.Unmarshal(v, &p.ID); err != nil {
			return nil, bad("id", "must be a string, found %s", strictjson.TypeName(v))
		}
		if !validID(p.ID) {
			return nil, bad("id", "%q is not a valid id: use 1 to 64 lower-case letters, digits, '-' or '_', starting with a letter", p.ID)
		}
		entry = p.ID
	} else {
		return nil, bad("id", "missing; every provider needs an id")
	}
	keys := make([]string, 0, len(m))
	for k := range m {
		keys = append(keys, k)
	}
	sort.Strings(keys)
	for _, k := range keys {
		v := m[k]
		switch k {
		case "id":
		case "command":
			if err := json.Unmarshal(v, &p.Command); err != nil || p.Command == nil {
				return nil, bad(k, "must be a list of strings (the server and its arguments), found %s", strictjson.TypeName(v))
			}
			if len(p.Command) == 0 || p.Command[0] == "" {
				return nil, bad(k, "must name the server to start, as in [\"/opt/x/bin/server\", \"--flag\"]")
			}
			if c := p.Command[0]; strings.Contains(c, "/") && !filepath.IsAbs(c) {
				return nil, bad(k, "%q is a relative path, which would be found from whatever directory the server starts in; give an absolute path, or a bare name found in PATH", c)
			}
		case "scope":
			var s string
			if err := json.Unmarshal(v, &s); err != nil {
				return nil, bad(k, "must be a string such as \"global\", \"corpus a, b\", \"family x\" or \"path /dir\", found %s", strictjson.TypeName(v))
			}
			sc, err := ParseScope(s)
			if err != nil {
				return nil, bad(k, "%v", err)
			}
			p.Scope = sc
		case "tasks":
			var tasks []Task
			if err := json.Unmarshal(v, &tasks); err != nil || tasks == nil {
				return nil, bad(k, "must be a list drawn from implementation, mixed, general, found %s", strictjson.TypeName(v))
			}
			seen := map[Task]bool{}
			for _, t := range tasks {
				if t != TaskImplementation && t != TaskMixed && t != TaskGeneral {
					return nil, bad(k, "%q is not a task class; allowed: implementation, mixed, general", t)
				}
				if seen[t] {
					return nil, bad(k, "%q is listed twice", t)
				}
				seen[t] = true
			}
			p.Tasks = tasks
		case "env":
			var env map[string]json.RawMessage
			if err := json.Unmarshal(v, &env); err != nil || env == nil {
				return nil, bad(k, "must be an object of variable names to string values, found %s", strictjson.TypeName(v))
			}
			p.Env = map[string]string{}
			for name, val := range env {
				if !ValidEnvName(name) {
					return nil, bad(k, "%q is not a valid variable name", name)
				}
				var s string
				if err := json.Unmarshal(val, &s); err != nil {
					return nil, bad(k, "the value of %s must be a string, found %s", name, strictjson.TypeName(val))
				}
				p.Env[name] = s
			}
		case "read":
			if err := json.Unmarshal(v, &p.Read); err != nil || p.Read == nil {
				return nil, bad(k, "must be a list of tool names, found %s", strictjson.TypeName(v))
			}
			seen := map[string]bool{}
			for _, t := range p.Read {
				if t == "" || seen[t] {
					return nil, bad(k, "tool names must be non-empty and listed once, found %q", t)
				}
				seen[t] = true
			}
		case "write":
			if err := json.Unmarshal(v, &p.Write); err != nil {
				return nil, bad(k, "must be a string: refuse, confirm or allow; found %s", strictjson.TypeName(v))
			}
			if p.Write != WriteRefuse && p.Write != WriteConfirm && p.Write != WriteAllow {
				return nil, bad(k, "%q is not a write policy; allowed: refuse, confirm, allow", p.Write)
			}
		case "private":
			if err := json.Unmarshal(v, &p.Private); err != nil || p.Private == nil {
				return nil, bad(k, "must be a list of absolute paths, found %s", strictjson.TypeName(v))
			}
			for i, path := range p.Private {
				if !filepath.IsAbs(path) {
					return nil, bad(k, "%q is not an absolute path", path)
				}
				if HasDotDot(path) {
					return nil, bad(k, "%q has a \"..\" in it; name the path without one", path)
				}
				p.Private[i] = filepath.Clean(path)
			}
		case "lifetime":
			if err := json.Unmarshal(v, &p.Lifetime); err != nil {
				return nil, bad(k, "must be a string: session or call; found %s", strictjson.TypeName(v))
			}
			if p.Lifetime != LifetimeSession && p.Lifetime != LifetimeCall {
				return nil, bad(k, "%q is not a lifetime; allowed: session, call", p.Lifetime)
			}
		case "enabled":
			if err := json.Unmarshal(v, &p.Enabled); err != nil {
				return nil, bad(k, "must be true or false, found %s", strictjson.TypeName(v))
			}
		case "timeout":
			var secs float64
			if err := json.Unmarshal(v, &secs); err != nil {
				return nil, bad(k, "must be a number of seconds, found %s", strictjson.TypeName(v))
			}
			if secs <= 0 || math.IsNaN(secs) || secs > MaxTimeout.Seconds() {
				return nil, bad(k, "%v is out of range; give seconds above 0 and at most %d", secs, int(MaxTimeout.Seconds()))
			}
			p.Timeout = time.Duration(secs * float64(time.Second))
		default:
			hint := ""
			if near := nearest(k, providerKeys); near != "" {
				hint = fmt.Sprintf(" (did you mean %q?)", near)
			}
			return nil, bad(k, "unknown key%s; allowed: %s", hint, strings.Join(providerKeys, ", "))
		}
	}
	if p.Command == nil {
		return nil, bad("command", "missing; every provider needs the server's argument list")
	}
	return p, nil
}

// nearest returns the candidate within two edits of s, if any.
func nearest(s string, candidates []string) string {
	best, bestD := "", 3
	for _, c := range candidates {
		if d := editDistance(s, c); d < bestD {
			best, bestD = c, d
		}
	}
	return best
}

// editDistance is the Damerau–Levenshtein distance of a and b (adjacent
// transpositions count as one edit, so "wirte" is one edit from "write").
func editDistance(a, b string) int {
	d := make([][]int, len(a)+1)
	for i := range d {
		d[i] = make([]int, len(b)+1)
		d[i][0] = i
	}
	for j := range d[0] {
		d[0][j] = j
	}
	for i := 1; i <= len(a); i++ {
		for j := 1; j <= len(b); j++ {
			cost := 1
			if a[i-1] == b[j-1] {
				cost = 0
			}
			d[i][j] = min(d[i-1][j]+1, d[i][j-1]+1, d[i-1][j-1]+cost)
			if i > 1 && j > 1 && a[i-1] == b[j-2] && a[i-2] == b[j-1] {
				d[i][j] = min(d[i][j], d[i-2][j-2]+1)
			}
		}
	}
	return d[len(a)][len(b)]
}
