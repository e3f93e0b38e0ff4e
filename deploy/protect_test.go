package deploy

import (
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
	want := []string{caps, filepath.Join(root, "cfg"), filepath.Join(root, "install"), filepath.Join(root, "logs"), filepath.Join(root, "missing"), filepath.Join(root, "state"), token}
	slices.Sort(want)
	if !slices.Equal(p.Hide, want) {
		t.Errorf("hide %v\nwant %v", p.Hide, want)
	}
	if !slices.Equal(p.ReadOnly, []string{turn}) {
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
