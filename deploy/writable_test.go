package deploy

import (
	"os"
	"path/filepath"
	"strings"
	"testing"
)

// TestTurnWritable: HOME, the workspace and the temporary directories are
// the turn's, as written or through a link; what lies beside or above them
// is not.
func TestTurnWritable(t *testing.T) {
	for _, tc := range []struct {
		dir  string
		want bool
	}{
		{"/home/user", false}, // beside HOME, not in it
		{"/home/u/", true},
		{"/srv", false}, // above the workspace
		{"/var/tmp/b", true},
		{"/dev/shm", true},
		{".", true},
	} {
		if got := TurnWritable(tc.dir, "/home/u", "/srv/ws"); got != tc.want {
			t.Errorf("TurnWritable(%q) = %v", tc.dir, got)
		}
	}
	// a link elsewhere to a directory in HOME is in HOME
	// (made outside every temporary directory: in the package's own)
	home := t.TempDir()
	out, err := os.MkdirTemp(".", "testlink")
	if err != nil {
		t.Fatal(err)
	}
	defer os.RemoveAll(out)
	out, _ = filepath.Abs(out)
	link := filepath.Join(out, "bin")
	if err := os.Symlink(home, link); err != nil {
		t.Fatal(err)
	}
	if !TurnWritable(link, home, "") {
		t.Errorf("a link to HOME (%s) was not taken for HOME", link)
	}
	// a HOME of "/" makes nothing writable by that rule alone
	if TurnWritable("/usr/bin", "/", "") {
		t.Error("HOME=/ took /usr/bin")
	}
}

// TestPathOutsideTurn: a PATH keeps the directories the turn's shell
// cannot write, in their order, and names the others, empty and relative
// entries among them.
func TestPathOutsideTurn(t *testing.T) {
	for _, tc := range []struct {
		path, kept, dropped string
	}{
		{"", "", ""},
		{"/usr/bin:/bin", "/usr/bin:/bin", ""},
		{"/home/u/.local/bin:/usr/bin", "/usr/bin", "/home/u/.local/bin"},
		{"/usr/local/bin:/home/u/bin:bin::/srv/ws/tools:/tmp/x:/usr/bin:/home/u", "/usr/local/bin:/usr/bin", "/home/u/bin|bin||/srv/ws/tools|/tmp/x|/home/u"},
		{"/var/tmp/bin:/dev/shm:/home/user/bin", "/home/user/bin", "/var/tmp/bin|/dev/shm"},
		{"/srv/ws:/srv", "/srv", "/srv/ws"},
	} {
		kept, dropped := PathOutsideTurn(tc.path, "/home/u", "/srv/ws")
		if kept != tc.kept || strings.Join(dropped, "|") != tc.dropped {
			t.Errorf("PathOutsideTurn(%q) = %q, %q; want %q, %q", tc.path, kept, dropped, tc.kept, tc.dropped)
		}
	}
}
