package realshell

import "testing"

func TestPath(t *testing.T) {
	for set, want := range map[string]string{"": "/bin/bash", "/opt/bash": "/opt/bash"} {
		if got := Path(func(k string) string {
			if k == "SPEAR_REAL_SHELL" {
				return set
			}
			return ""
		}); got != want {
			t.Errorf("SPEAR_REAL_SHELL=%q: %q, want %q", set, got, want)
		}
	}
}
