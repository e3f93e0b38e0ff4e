package deploy

import (
	"strings"
	"testing"
)

func TestSettingsRefuseDotDot(t *testing.T) {
	for _, name := range []string{"SPEAR_CONFIG_DIR", "SPEAR_STATE_DIR", "SPEAR_TURN_FILE", "HOME", "XDG_CONFIG_HOME"} {
		env := map[string]string{"HOME": "/h", name: "/srv/spear/current/../config"}
		_, err := SettingsFrom(func(k string) string { return env[k] })
		if err == nil || !strings.Contains(err.Error(), `has a ".." in it`) || !strings.Contains(err.Error(), name) {
			t.Errorf("%s with ..: %v", name, err)
		}
	}
	for _, ok := range []string{"/srv/a..b", "/srv/..x/y", "/srv/x.."} {
		if HasDotDot(ok) {
			t.Errorf("HasDotDot(%q)", ok)
		}
	}
	s, err := SettingsFrom(func(k string) string {
		return map[string]string{"HOME": "/h", "SPEAR_CONFINE": "off", "SPEAR_STATE_DIR": "/a/../b"}[k]
	})
	if err == nil || s.Confine {
		t.Errorf("off with a ..: confine %v, %v; the setting is still read", s.Confine, err)
	}
}

func TestRegistryRefusesDotDotPrivate(t *testing.T) {
	r, err := ParseRegistry("capabilities.json", []byte(`{"providers": [{"id": "a", "command": ["x"], "scope": "global", "private": ["/srv/cur/../tok"]}]}`))
	if err != nil || r.Provider("a") != nil || len(r.Problems) != 1 || !strings.Contains(r.Problems[0].Msg, `has a ".." in it`) {
		t.Errorf("private with ..: %v %+v", err, r)
	}
}
