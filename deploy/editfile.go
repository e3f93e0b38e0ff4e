package deploy

import (
	"bytes"
	"errors"
	"fmt"
	"io/fs"
	"os"
	"path/filepath"
	"strings"
	"syscall"
)

// newRegistryMode is the mode of a registry file that an edit creates:
// its env values may be tokens, so only its owner reads it.
const newRegistryMode = 0o600

// EditRegistryFile changes the registry file at path with edit, which gets
// the file's content (nil when it does not exist yet) and returns the new
// content. Edits of one registry run one at a time (an exclusive flock of
// its directory). The new content replaces the file atomically: it is
// written to a temporary file in the same directory, with the file's mode
// (0600 for a new file), synced and renamed over it, so a reader sees the
// old file or the new one, never a part. A symlink is followed and its
// target replaced, and a missing directory is created (0700). When edit
// fails, or returns the content unchanged, nothing is touched. changed
// reports whether the file was written. edit may be called more than once.
func EditRegistryFile(path string, edit func(data []byte) ([]byte, error)) (changed bool, err error) {
	if target, err := filepath.EvalSymlinks(path); err == nil {
		path = target
	}
	dir := filepath.Dir(path)
	if _, err := os.Stat(dir); errors.Is(err, fs.ErrNotExist) {
		// Nothing is created for an edit that fails on a missing file.
		if _, err := edit(nil); err != nil {
			return false, err
		}
		if err := os.MkdirAll(dir, 0o700); err != nil {
			return false, fmt.Errorf("creating the registry's directory: %w", err)
		}
	}
	unlock, err := lockDir(dir)
	if err != nil {
		return false, err
	}
	defer unlock()

	mode := fs.FileMode(newRegistryMode)
	data, err := ReadRegistryFile(path)
	if err != nil {
		return false, err
	}
	if fi, err := os.Stat(path); err == nil {
		mode = fi.Mode().Perm()
	}
	out, err := edit(data)
	if err != nil {
		return false, err
	}
	if data != nil && bytes.Equal(out, data) {
		return false, nil
	}
	return true, writeAtomic(path, out, mode)
}

// ReadRegistryFile returns a registry file's content, or nil when it does
// not exist yet.
func ReadRegistryFile(path string) ([]byte, error) {
	data, err := readConfig(path)
	if errors.Is(err, fs.ErrNotExist) {
		return nil, nil
	}
	if err == nil && data == nil {
		data = []byte{} // an empty file exists: it is not a new one
	}
	return data, err
}

// lockDir takes an exclusive flock of dir, which stays the same inode
// however often the files in it are renamed over.
func lockDir(dir string) (func(), error) {
	f, err := os.Open(dir)
	if err != nil {
		return nil, fmt.Errorf("locking the registry's directory: %w", err)
	}
	if err := syscall.Flock(int(f.Fd()), syscall.LOCK_EX); err != nil {
		f.Close()
		return nil, fmt.Errorf("locking the registry's directory %s: %w", dir, err)
	}
	return func() { f.Close() }, nil
}

func writeAtomic(path string, data []byte, mode fs.FileMode) error {
	tmp, err := os.CreateTemp(filepath.Dir(path), "."+filepath.Base(path)+".*")
	if err != nil {
		return fmt.Errorf("writing %s: %w", path, err)
	}
	done := false
	defer func() {
		if !done {
			tmp.Close()
			os.Remove(tmp.Name())
		}
	}()
	if _, err := tmp.Write(data); err != nil {
		return fmt.Errorf("writing %s: %w", path, err)
	}
	if err := tmp.Chmod(mode); err != nil {
		return fmt.Errorf("writing %s: %w", path, err)
	}
	if err := tmp.Sync(); err != nil {
		return fmt.Errorf("writing %s: %w", path, err)
	}
	if err := tmp.Close(); err != nil {
		return fmt.Errorf("writing %s: %w", path, err)
	}
	if err := os.Rename(tmp.Name(), path); err != nil {
		return fmt.Errorf("writing %s: %w", path, err)
	}
	done = true
	return nil
}

// CommandNotFoundError is a server command that names nothing that can be
// run.
type CommandNotFoundError struct {
	Name string // as given
	Why  string
}

func (e *CommandNotFoundError) Error() string {
	name := e.Name
	if !strings.Contains(name, "/") {
		name = "/path/to/" + name
	}
	return fmt.Sprintf("command %q %s; install it, or give the absolute path of the server, as in -- %s", e.Name, e.Why, name)
}

// ResolveCommand returns the absolute path of the server that name would
// start when the operator runs it: a bare name is looked up in pathList
// (a PATH value) with its empty and relative entries skipped, as the
// gateway does; a relative path is taken from dir. The result is
// checked to be an executable file.
func ResolveCommand(name, pathList, dir string) (string, error) {
	if name == "" {
		return "", &CommandNotFoundError{Name: name, Why: "is empty"}
	}
	if strings.Contains(name, "/") {
		p := name
		if !filepath.IsAbs(p) {
			p = filepath.Join(dir, p)
		}
		p = filepath.Clean(p)
		if why := notExecutable(p); why != "" {
			return "", &CommandNotFoundError{Name: name, Why: why}
		}
		return p, nil
	}
	for _, d := range filepath.SplitList(pathList) {
		if d == "" || !filepath.IsAbs(d) {
			continue
		}
		p := filepath.Join(d, name)
		if notExecutable(p) == "" {
			return p, nil
		}
	}
	return "", &CommandNotFoundError{Name: name, Why: "is not found in PATH (its empty and relative entries are skipped)"}
}

// notExecutable says why p cannot be started, or "".
func notExecutable(p string) string {
	fi, err := os.Stat(p)
	switch {
	case errors.Is(err, fs.ErrNotExist):
		return "does not exist"
	case err != nil:
		return "cannot be read: " + err.Error()
	case fi.IsDir():
		return "is a directory"
	case fi.Mode()&0o111 == 0:
		return "is not executable"
	}
	return ""
}
