package deploy

import (
	"encoding/json"
	"errors"
	"fmt"
	"io/fs"
	"os"
	"path/filepath"
	"slices"
)

// Protection is what the turn's shell is confined away from
// (docs/security.md).
type Protection struct {
	// Hide are the deployment's files and directories: the configuration
	// directory, both registries, the state directory, the audit trail and
	// every provider's private paths. The shell can neither read, write
	// nor create anything there.
	Hide []string
	// ReadOnly is the turn file: readable, never writable.
	ReadOnly []string
}

// Protected returns what the turn's shell is confined away from. The
// configuration and state directories are created (mode 0700) when they
// do not exist yet, so that they can be hidden; a registry or audit file
// that does not exist yet is hidden through its directory, so that the
// shell cannot create it. Every provider's private paths are read from the
// registry leniently: an entry that is invalid for another reason still
// has its private paths hidden.
func (s Settings) Protected() (Protection, error) {
	var p Protection
	for _, dir := range []string{s.ConfigDir, s.StateDir} {
		if err := os.MkdirAll(dir, 0o700); err != nil {
			return p, fmt.Errorf("creating %s so that the turn's shell can be kept out of it: %w", dir, err)
		}
		p.Hide = append(p.Hide, dir)
	}
	shared := s.sharedDirs()
	for _, f := range []string{s.ProjectsFile, s.CapabilitiesFile, s.AuditFile} {
		if Inside(p.Hide, f) {
			continue
		}
		// A file is covered by a mount on its name, which goes when the
		// file is replaced from outside (an editor or logrotate renaming
		// a new one over it): a process the turn left running would then
		// see the new one. A directory of the file's own is covered
		// whole, whatever happens to the files in it.
		dir := filepath.Dir(f)
		if !shared(dir) {
			if err := os.MkdirAll(dir, 0o700); err != nil {
				return p, fmt.Errorf("creating %s so that the turn's shell can be kept out of it: %w", dir, err)
			}
			p.Hide = append(p.Hide, dir)
			continue
		}
		if _, err := os.Lstat(f); errors.Is(err, fs.ErrNotExist) {
			// made empty, so that the shell cannot make it first
			if err := os.WriteFile(f, nil, 0o600); err != nil && !errors.Is(err, fs.ErrExist) {
				return p, fmt.Errorf("creating %s so that the turn's shell cannot create it: %w", f, err)
			}
		}
		p.Hide = append(p.Hide, f)
	}
	private, err := privatePaths(s.CapabilitiesFile)
	if err != nil {
		return p, err
	}
	for _, path := range private {
		if Inside(p.Hide, path) {
			continue
		}
		// A private path that does not exist yet (an install directory
		// before the provider's first run) is made, as an empty
		// directory, so that it can be kept from the turn: otherwise the
		// turn could make it first and fill it with code of its own.
		if _, err := os.Lstat(path); errors.Is(err, fs.ErrNotExist) {
			if err := os.MkdirAll(path, 0o700); err != nil {
				return p, fmt.Errorf("creating the private path %s, which does not exist yet, so that the turn's shell can be kept out of it: %w", path, err)
			}
		}
		p.Hide = append(p.Hide, path)
	}
	if s.TurnFile != "" && !Inside(p.Hide, s.TurnFile) {
		ro, err := s.guardTurnFile(shared)
		if err != nil {
			return p, err
		}
		p.ReadOnly = append(p.ReadOnly, ro)
	}
	slices.Sort(p.Hide)
	p.Hide = slices.Compact(p.Hide)
	return p, nil
}

// guardTurnFile returns what to keep read-only so that the turn's shell can
// neither write the turn file nor create, replace or hard-link it, whether
// it exists yet or not: a turn file the shell could create before the
// harness writes the first one (or between turns, when the harness removes
// it) would be the turn's own, its permission_mode too.
//
// Its directory, when it is one of the turn file's own (not a directory the
// turn works in, nor one in the workspace): a turn file the harness replaces
// (a new one renamed over it) then stays read-only for what the turn left
// running, and one that does not exist yet cannot be created. A directory
// that does not exist is made, as the deployment's own are. In a shared
// directory, a missing turn file is created empty, so that there is a file
// to keep read-only; an empty turn file is read as a missing one (LoadTurn).
func (s Settings) guardTurnFile(shared func(string) bool) (string, error) {
	dir := filepath.Dir(s.TurnFile)
	_, statErr := os.Stat(s.TurnFile)
	if !shared(dir) {
		// read only when it matters: this runs for every command
		if ws := turnWorkspace(s.TurnFile); ws == "" || !within(dir, ws) {
			if err := os.MkdirAll(dir, 0o700); err != nil {
				return "", fmt.Errorf("creating %s, the turn file's directory, so that the turn's shell cannot create the turn file: %w", dir, err)
			}
			return dir, nil
		}
	}
	if errors.Is(statErr, fs.ErrNotExist) {
		f, err := os.OpenFile(s.TurnFile, os.O_WRONLY|os.O_CREATE|os.O_EXCL, 0o600)
		if err == nil {
			err = f.Close()
		}
		if err != nil && !errors.Is(err, fs.ErrExist) {
			return "", fmt.Errorf("creating %s empty, so that the turn's shell cannot create the turn file: %w", s.TurnFile, err)
		}
	}
	return s.TurnFile, nil
}

// Inside reports whether path is one of dirs or below one of them,
// compared component by component.
func Inside(dirs []string, path string) bool {
	for _, d := range dirs {
		if within(d, path) {
			return true
		}
	}
	return false
}

// privatePaths reads every entry's private list, valid entry or not.
func privatePaths(registry string) ([]string, error) {
	data, err := readConfig(registry)
	if err != nil {
		// A registry that cannot be read starts no provider, so it has
		// no private path to keep; the gateway reports it.
		return nil, nil
	}
	var loose struct {
		Providers []json.RawMessage `json:"providers"`
	}
	if json.Unmarshal(data, &loose) != nil {
		// An unreadable registry starts no provider, so it has no
		// private path to keep.
		return nil, nil
	}
	var out []string
	for _, raw := range loose.Providers {
		var e struct {
			Private []json.RawMessage `json:"private"`
		}
		json.Unmarshal(raw, &e)
		for _, r := range e.Private {
			var path string
			if json.Unmarshal(r, &path) == nil && filepath.IsAbs(path) {
				out = append(out, filepath.Clean(path))
			}
		}
	}
	return out, nil
}

// sharedDirs returns a test for directories the turn's shell works in, which
// the confinement must not cover whole: the root, HOME and the directories
// above it, the working directory and those above it, and the shared
// temporary directories. Any other directory holding a deployment file is
// taken as that file's own.
func (s Settings) sharedDirs() func(dir string) bool {
	var under []string // dir is shared when it is one of these or above one
	if s.Home != "" {
		under = append(under, s.Home)
	}
	if wd, err := os.Getwd(); err == nil {
		under = append(under, wd)
	}
	temps := tempDirs()
	return func(dir string) bool {
		if dir == "" {
			return false
		}
		dir = filepath.Clean(dir)
		if dir == "/" || slices.Contains(temps, dir) {
			return true
		}
		for _, u := range under {
			if within(dir, u) {
				return true
			}
		}
		return false
	}
}

// Shared reports whether dir is one the turn's shell must be able to write
// in: /, HOME or above it, the working directory or above it, the turn's
// workspace, above it or in it, or a temporary directory. A directory that is not
// shared may be kept read-only for the turn. Anything in the workspace is
// shared too.
func (s Settings) Shared(dir string) bool {
	if s.sharedDirs()(dir) {
		return true
	}
	ws := ""
	if s.TurnFile != "" {
		ws = turnWorkspace(s.TurnFile)
	}
	dir = filepath.Clean(dir)
	return ws != "" && (within(dir, ws) || within(ws, dir))
}

// turnWorkspace is the workspace the turn file names, or "".
func turnWorkspace(path string) string {
	t, err := LoadTurn(path)
	if err != nil || t == nil {
		return ""
	}
	return t.Workspace
}
