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
	for _, f := range []string{s.ProjectsFile, s.CapabilitiesFile, s.AuditFile} {
		if inside(p.Hide, f) {
			continue
		}
		if _, err := os.Lstat(f); err == nil {
			p.Hide = append(p.Hide, f)
			continue
		}
		dir := filepath.Dir(f)
		if err := os.MkdirAll(dir, 0o700); err != nil {
			return p, fmt.Errorf("creating %s so that the turn's shell cannot create %s: %w", dir, f, err)
		}
		p.Hide = append(p.Hide, dir)
	}
	private, err := privatePaths(s.CapabilitiesFile)
	if err != nil {
		return p, err
	}
	for _, path := range private {
		if inside(p.Hide, path) {
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
	if s.TurnFile != "" && !inside(p.Hide, s.TurnFile) {
		if _, err := os.Stat(s.TurnFile); err == nil {
			p.ReadOnly = append(p.ReadOnly, s.TurnFile)
		}
	}
	slices.Sort(p.Hide)
	p.Hide = slices.Compact(p.Hide)
	return p, nil
}

// inside reports whether path is one of dirs or below one of them.
func inside(dirs []string, path string) bool {
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
