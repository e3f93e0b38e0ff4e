package deploy

import (
	"errors"
	"io/fs"
	"os"
	"path/filepath"
	"slices"
	"testing"
)

func TestProtected(t *testing.T) {
	root := t.TempDir()
	ext := filepath.Join(root, "etc")
	os.MkdirAll(ext, 0o755)
	token := filepath.Join(root, "token")
	os.WriteFile(token, []byte("secret"), 0o600)
	turn := filepath.Join(root, "turn.json")
	os.WriteFile(turn, []byte("{}"), 0o644)
	caps := filepath.Join(ext, "capabilities.json")
	// one valid entry, one invalid for another reason: both keep their
	// private paths; a missing private path is made (an empty directory,
	// so that the turn cannot make it first) and a relative one skipped
	os.WriteFile(caps, []byte(`{"providers": [
		{"id": "a", "command": ["x"], "private": ["`+token+`", "`+filepath.Join(root, "missing")+`"]},
		{"id": "B", "command": 3, "private": ["`+filepath.Join(root, "install")+`", "rel"]}]}`), 0o600)
	os.MkdirAll(filepath.Join(root, "install"), 0o755)
	s, err := SettingsFrom(func(k string) string {
		return map[string]string{
			"SPEAR_CONFIG_DIR": filepath.Join(root, "cfg"), "SPEAR_STATE_DIR": filepath.Join(root, "state"),
			"SPEAR_CAPABILITIES_FILE": caps, "SPEAR_AUDIT_FILE": filepath.Join(root, "logs", "audit.jsonl"),
			"SPEAR_TURN_FILE": turn,
		}[k]
	})
	if err != nil {
		t.Fatal(err)
	}
	p, err := s.Protected()
	if err != nil {
		t.Fatal(err)
	}
	// the registry outside the configuration directory is hidden with its
	// directory, which is its own; so the turn file's is read-only
	want := []string{ext, filepath.Join(root, "cfg"), filepath.Join(root, "install"), filepath.Join(root, "logs"), filepath.Join(root, "missing"), filepath.Join(root, "state"), token}
	slices.Sort(want)
	if !slices.Equal(p.Hide, want) {
		t.Errorf("hide %v\nwant %v", p.Hide, want)
	}
	if !slices.Equal(p.ReadOnly, []string{root}) {
		t.Errorf("read-only %v", p.ReadOnly)
	}
	for _, d := range []string{"cfg", "state", "logs", "missing"} {
		if fi, err := os.Stat(filepath.Join(root, d)); err != nil || fi.Mode().Perm() != 0o700 {
			t.Errorf("%s not created 0700: %v", d, err)
		}
	}
}

func TestSettingsConfine(t *testing.T) {
	for v, want := range map[string]bool{"": true, "on": true, "off": false} {
		s, err := SettingsFrom(func(k string) string { return map[string]string{"HOME": "/h", "SPEAR_CONFINE": v}[k] })
		if err != nil || s.Confine != want {
			t.Errorf("SPEAR_CONFINE=%q: %v %v", v, s.Confine, err)
		}
	}
	if _, err := SettingsFrom(func(k string) string { return map[string]string{"HOME": "/h", "SPEAR_CONFINE": "of"}[k] }); err == nil {
		t.Error("SPEAR_CONFINE=of was accepted")
	}
}

// In a directory the turn works in (HOME and above, the working directory
// and above, the shared temporary directories), a deployment file is
// covered by itself, never its directory; a registry that does not exist
// there yet is made empty, so that the shell cannot make it first.
func TestProtectedSharedDirs(t *testing.T) {
	home := t.TempDir()
	ws := filepath.Join(home, "ws")
	os.MkdirAll(ws, 0o755)
	turn := filepath.Join(home, "turn.json")
	os.WriteFile(turn, []byte(`{"session": "s", "turn": "t", "workspace": "`+ws+`", "class": "implementation"}`), 0o644)
	caps := filepath.Join(home, "capabilities.json")
	s, err := SettingsFrom(func(k string) string {
		return map[string]string{"HOME": home, "SPEAR_CAPABILITIES_FILE": caps, "SPEAR_TURN_FILE": turn,
			"SPEAR_CONFIG_DIR": filepath.Join(home, "cfg"), "SPEAR_STATE_DIR": filepath.Join(home, "state")}[k]
	})
	if err != nil {
		t.Fatal(err)
	}
	p, err := s.Protected()
	if err != nil {
		t.Fatal(err)
	}
	if !slices.Contains(p.Hide, caps) || slices.Contains(p.Hide, home) {
		t.Errorf("hide %v: want %s itself, never HOME", p.Hide, caps)
	}
	if fi, err := os.Stat(caps); err != nil || fi.Size() != 0 || fi.Mode().Perm() != 0o600 {
		t.Errorf("the missing registry in HOME was not made empty: %v", err)
	}
	if !slices.Equal(p.ReadOnly, []string{turn}) {
		t.Errorf("read-only %v, want the turn file itself", p.ReadOnly)
	}
	// a turn file in a directory of its own: the directory, unless the
	// workspace is in it
	own := filepath.Join(t.TempDir(), "turns")
	os.MkdirAll(own, 0o755)
	for _, tc := range []struct{ workspace, want string }{{ws, own}, {filepath.Join(own, "ws"), filepath.Join(own, "t.json")}} {
		f := filepath.Join(own, "t.json")
		os.WriteFile(f, []byte(`{"session": "s", "turn": "t", "workspace": "`+tc.workspace+`", "class": "implementation"}`), 0o644)
		s.TurnFile = f
		p, err := s.Protected()
		if err != nil || !slices.Equal(p.ReadOnly, []string{tc.want}) {
			t.Errorf("workspace %s: read-only %v, %v; want %s", tc.workspace, p.ReadOnly, err, tc.want)
		}
	}
}

// TestShared: the directories the turn's shell must be able to write in.
func TestShared(t *testing.T) {
	home := t.TempDir()
	ws := filepath.Join(home, "src", "ws")
	turn := filepath.Join(t.TempDir(), "turn.json")
	os.WriteFile(turn, []byte(`{"session": "s", "turn": "t", "workspace": "`+ws+`", "class": "implementation"}`), 0o644)
	s := Settings{Home: home, TurnFile: turn}
	wd, _ := os.Getwd()
	for dir, want := range map[string]bool{
		"/": true, "/tmp": true, os.TempDir(): true, home: true, filepath.Dir(home): true, wd: true,
		ws: true, filepath.Join(ws, "bin"): true,
		filepath.Join(home, ".local", "bin"): false, "/usr/local/bin": false,
	} {
		if got := s.Shared(dir); got != want {
			t.Errorf("Shared(%s) = %v, want %v", dir, got, want)
		}
	}
}

// TestProtectedMissingTurnFile: a turn file that does not exist yet is
// kept from the turn too: in a shared directory an empty one is made and
// kept read-only (and read as missing), in a directory of its own that
// directory, made if need be.
func TestProtectedMissingTurnFile(t *testing.T) {
	home := t.TempDir()
	s, err := SettingsFrom(func(k string) string {
		return map[string]string{"HOME": home, "SPEAR_CONFIG_DIR": filepath.Join(home, "cfg"), "SPEAR_STATE_DIR": filepath.Join(home, "state")}[k]
	})
	if err != nil {
		t.Fatal(err)
	}
	own := filepath.Join(t.TempDir(), "turns", "t")
	for _, tc := range []struct{ turn, want string }{
		{filepath.Join(home, "turn.json"), filepath.Join(home, "turn.json")},
		{filepath.Join(own, "turn.json"), own},
	} {
		s.TurnFile = tc.turn
		p, err := s.Protected()
		if err != nil || !slices.Equal(p.ReadOnly, []string{tc.want}) {
			t.Errorf("%s: read-only %v, %v; want %s", tc.turn, p.ReadOnly, err, tc.want)
		}
		if _, err := os.Stat(tc.want); err != nil {
			t.Errorf("%s was not made: %v", tc.want, err)
		}
	}
	if _, err := LoadTurn(filepath.Join(home, "turn.json")); !errors.Is(err, fs.ErrNotExist) {
		t.Errorf("an empty turn file: %v, want one that does not exist", err)
	}
	// a turn file the harness wrote is left as it is
	f := filepath.Join(home, "turn.json")
	os.WriteFile(f, []byte(`{"session": "s", "turn": "t", "workspace": "/w", "class": "implementation"}`), 0o644)
	s.TurnFile = f
	if _, err := s.Protected(); err != nil {
		t.Fatal(err)
	}
	if tr, err := LoadTurn(f); err != nil || tr.Session != "s" {
		t.Errorf("the harness's turn file: %v, %v", tr, err)
	}
}
