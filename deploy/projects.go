package deploy

import (
	"encoding/json"
	"errors"
	"fmt"
	"io/fs"
	"maps"
	"path/filepath"
	"slices"

	"spear/internal/strictjson"
)

// Project is one entry of projects.json.
type Project struct {
	Name   string `json:"name"`
	Root   string `json:"root"`
	Family string `json:"family,omitempty"`
}

// Projects is the project registry.
type Projects struct {
	Path     string
	Missing  bool // the file does not exist
	List     []Project
	Problems []Problem
}

// LoadProjects reads the project registry. A missing file is no error: it
// registers nothing. Invalid entries become Problems; the others load.
func LoadProjects(path string) (*Projects, error) {
	data, err := readConfig(path)
	if errors.Is(err, fs.ErrNotExist) {
		return &Projects{Path: path, Missing: true}, nil
	}
	if err != nil {
		return nil, err
	}
	return ParseProjects(path, data)
}

// ParseProjects reads projects.json's content; path names it in errors.
func ParseProjects(path string, data []byte) (*Projects, error) {
	list, problems, err := parseEntries(path, data, entrySpec[Project]{
		listKey: "projects",
		decode:  func(i int, raw json.RawMessage) (Project, *Problem) { return decodeProject(path, i, raw) },
		name:    func(p Project) string { return p.Name },
		nameKey: "name",
		dupMsg:  "a project of this name is already registered",
	})
	if err != nil {
		return nil, err
	}
	return &Projects{Path: path, List: list, Problems: problems}, nil
}

func decodeProject(path string, i int, raw json.RawMessage) (Project, *Problem) {
	var p Project
	entry := fmt.Sprintf("#%d", i+1)
	var m map[string]json.RawMessage
	if err := json.Unmarshal(raw, &m); err != nil {
		return p, &Problem{File: path, Entry: entry, Msg: "an entry must be an object, found " + strictjson.TypeName(raw)}
	}
	if n, ok := m["name"]; ok {
		json.Unmarshal(n, &p.Name)
	}
	if p.Name != "" {
		entry = p.Name
	}
	// Keys in order, so that of two bad keys the same one is reported
	// every time.
	for _, k := range slices.Sorted(maps.Keys(m)) {
		v := m[k]
		var s string
		if err := json.Unmarshal(v, &s); err != nil {
			if k == "name" || k == "root" || k == "family" {
				return p, &Problem{File: path, Entry: entry, Key: k, Msg: "must be a string, found " + strictjson.TypeName(v)}
			}
		}
		switch k {
		case "name":
		case "root":
			p.Root = s
		case "family":
			p.Family = s
		default:
			return p, &Problem{File: path, Entry: entry, Key: k, Msg: "unknown key; allowed: name, root, family"}
		}
	}
	switch {
	case p.Name == "":
		return p, &Problem{File: path, Entry: entry, Key: "name", Msg: "missing; every project needs a name"}
	case p.Root == "":
		return p, &Problem{File: path, Entry: entry, Key: "root", Msg: "missing; every project needs the absolute path of its root"}
	case !filepath.IsAbs(p.Root):
		return p, &Problem{File: path, Entry: entry, Key: "root", Msg: fmt.Sprintf("%q is not an absolute path", p.Root)}
	}
	p.Root = filepath.Clean(p.Root)
	return p, nil
}

// Resolve returns the project whose root contains the workspace, compared
// component by component after both are made absolute and their symlinks
// resolved; the longest such root wins. It returns nil for an unregistered
// tree, and the resolved workspace.
//
// The turn can plant symlinks wherever it writes: in its workspace, and
// often in the directory above it (moving the workspace aside and putting
// a link to another tree in its place). So the project the workspace lies
// in as given (by the turn file, which the turn cannot change) must be
// the one it resolves to: a workspace in one project as given that
// resolves to another project or to none, or in none as given that
// resolves into one, is ambiguous. Resolve then returns nil and a
// *WorkspaceConflict.
func (ps *Projects) Resolve(workspace string) (*Project, string, error) {
	ws := resolvePath(workspace)
	byResolved := ps.longest(ws, resolvePath)
	given, err := filepath.Abs(workspace)
	if err != nil {
		given = filepath.Clean(workspace)
	}
	byGiven := ps.longest(given, filepath.Clean)
	if byGiven != byResolved {
		c := &WorkspaceConflict{Workspace: given, Resolved: ws}
		if byGiven != nil {
			c.Given = byGiven.Name
		}
		if byResolved != nil {
			c.ResolvedProject = byResolved.Name
		}
		return nil, ws, c
	}
	return byResolved, ws, nil
}

// longest returns the project with the longest root containing ws, its
// roots made comparable by norm.
func (ps *Projects) longest(ws string, norm func(string) string) *Project {
	var best *Project
	bestLen := -1
	for i := range ps.List {
		root := norm(ps.List[i].Root)
		if within(root, ws) && len(root) > bestLen {
			best, bestLen = &ps.List[i], len(root)
		}
	}
	return best
}

// WorkspaceConflict is a workspace whose path as given lies in one project
// (or none) and whose resolved path lies in another project (or none).
type WorkspaceConflict struct {
	Workspace, Resolved    string
	Given, ResolvedProject string // project names; either may be empty
}

func (c *WorkspaceConflict) Error() string {
	in := func(name string) string {
		if name == "" {
			return "in no registered project"
		}
		return "in project " + name
	}
	return fmt.Sprintf("the workspace %s lies %s as given, but resolves through a symlink to %s, %s", c.Workspace, in(c.Given), c.Resolved, in(c.ResolvedProject))
}
