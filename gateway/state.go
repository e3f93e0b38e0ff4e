package gateway

import (
	"encoding/json"
	"errors"
	"fmt"
	"io/fs"
	"os"
	"path/filepath"
	"sort"
	"syscall"
	"time"

	"spear/deploy"
	"spear/internal/hostwire"
	"spear/outcome"
	"spear/present"
)

// TurnState is what a turn keeps between its commands, under
// SPEAR_STATE_DIR/sessions/<session>/turns/<turn>/.
type TurnState struct {
	Version   int             `json:"version"`
	Built     time.Time       `json:"built"`
	Offered   bool            `json:"offered"`
	Why       string          `json:"why,omitempty"` // why nothing is offered
	Family    *present.Family `json:"family,omitempty"`
	Described []string        `json:"described"`
}

// IsDescribed reports whether the turn has described the capability.
func (s *TurnState) IsDescribed(name string) bool {
	for _, d := range s.Described {
		if d == name {
			return true
		}
	}
	return false
}

const stateVersion = 1

// store is the on-disk state of one turn and its session, with a lock.
type store struct {
	dir     string // the turn's directory
	session string // the session's directory
}

func newStore(stateDir string, t *deploy.Turn) *store {
	session := hostwire.SessionDir(stateDir, t.Session)
	return &store{dir: filepath.Join(session, "turns", t.Turn), session: session}
}

// locked runs fn holding the turn's exclusive lock; concurrent processes of
// one turn wait for each other here.
func (s *store) locked(fn func() error) error {
	if err := os.MkdirAll(s.dir, 0o700); err != nil {
		return fmt.Errorf("creating the turn's state directory: %w", err)
	}
	f, err := os.OpenFile(filepath.Join(s.dir, "lock"), os.O_CREATE|os.O_RDWR, 0o600)
	if err != nil {
		return fmt.Errorf("opening the turn's lock: %w", err)
	}
	defer f.Close()
	if err := syscall.Flock(int(f.Fd()), syscall.LOCK_EX); err != nil {
		return fmt.Errorf("locking the turn's state: %w", err)
	}
	defer syscall.Flock(int(f.Fd()), syscall.LOCK_UN)
	return fn()
}

// load reads the turn's state; nil, nil when there is none yet.
func (s *store) load() (*TurnState, error) {
	data, err := os.ReadFile(filepath.Join(s.dir, "state.json"))
	if errors.Is(err, fs.ErrNotExist) {
		return nil, nil
	}
	if err != nil {
		return nil, fmt.Errorf("reading the turn's state: %w", err)
	}
	var st TurnState
	if err := json.Unmarshal(data, &st); err != nil || st.Version != stateVersion {
		return nil, fmt.Errorf("the turn's state in %s is damaged or from another version; remove it to start the turn afresh", s.dir)
	}
	return &st, nil
}

// save writes the state atomically: a reader sees the old or the new file,
// never part of one.
func (s *store) save(st *TurnState) error {
	st.Version = stateVersion
	sort.Strings(st.Described)
	return writeAtomic(filepath.Join(s.dir, "state.json"), st)
}

// writeAtomic writes v as compact JSON (schemas kept in it stay on one
// line) to a temporary file and renames it over path.
func writeAtomic(path string, v any) error {
	data, err := json.Marshal(v)
	if err != nil {
		return err
	}
	tmp, err := os.CreateTemp(filepath.Dir(path), ".tmp-*")
	if err != nil {
		return fmt.Errorf("writing %s: %w", path, err)
	}
	defer os.Remove(tmp.Name())
	if _, err := tmp.Write(append(data, '\n')); err != nil {
		tmp.Close()
		return fmt.Errorf("writing %s: %w", path, err)
	}
	if err := tmp.Close(); err != nil {
		return fmt.Errorf("writing %s: %w", path, err)
	}
	return os.Rename(tmp.Name(), path)
}

// sayOnce returns the providers of us that the session has not yet been
// told are unavailable, and remembers them as told. It runs under the
// turn's lock; the session's own lock orders turns of one session.
func (s *store) sayOnce(us []outcome.Unavailable) ([]outcome.Unavailable, error) {
	if len(us) == 0 {
		return nil, nil
	}
	var fresh []outcome.Unavailable
	err := lockFile(filepath.Join(s.session, "lock"), func() error {
		path := filepath.Join(s.session, "told.json")
		told := map[string]bool{}
		if data, err := os.ReadFile(path); err == nil {
			json.Unmarshal(data, &told)
		}
		for _, u := range us {
			if !told[u.Provider] {
				told[u.Provider] = true
				fresh = append(fresh, u)
			}
		}
		if len(fresh) == 0 {
			return nil
		}
		return writeAtomic(path, told)
	})
	return fresh, err
}

func lockFile(path string, fn func() error) error {
	if err := os.MkdirAll(filepath.Dir(path), 0o700); err != nil {
		return err
	}
	f, err := os.OpenFile(path, os.O_CREATE|os.O_RDWR, 0o600)
	if err != nil {
		return err
	}
	defer f.Close()
	if err := syscall.Flock(int(f.Fd()), syscall.LOCK_EX); err != nil {
		return err
	}
	defer syscall.Flock(int(f.Fd()), syscall.LOCK_UN)
	return fn()
}

// ContextText is the block the harness puts into the turn's context.
func (s *TurnState) ContextText() string {
	if !s.Offered {
		return present.NothingOffered(s.Why)
	}
	return present.ContextText(s.Family, s.Why)
}
