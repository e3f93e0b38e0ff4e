package harness

import (
	"os"
	"path/filepath"
	"strings"
	"testing"

	"spear/shellparse"
)

// TestCaptured: every known wrapper matches the real text its harness sent
// (the model's command there is spear-capability list), and no other
// wrapper matches it.
func TestCaptured(t *testing.T) {
	for _, w := range Known {
		data, err := os.ReadFile(filepath.Join("..", "testdata", "wrappers", w.Captured))
		if err != nil {
			t.Fatalf("%s: %v", w.Name, err)
		}
		m := Find(string(data))
		if m == nil || m.Wrapper != w {
			t.Errorf("%s: the captured text %s is not recognised as it (got %+v)", w.Name, w.Captured, m)
			continue
		}
		if m.Model != "spear-capability list" {
			t.Errorf("%s: the model's text is %q", w.Name, m.Model)
		}
		if got := m.Replace(m.Model); got != string(data) {
			t.Errorf("%s: putting the model's text back gives\n%s", w.Name, got)
		}
		v, _ := Classify(string(data))
		if v.Kind != shellparse.Invocation || strings.Join(v.Args, " ") != "list" {
			t.Errorf("%s: classified %v %q", w.Name, v.Kind, v.Args)
		}
	}
}

// TestFind: a wrapper is known only exactly; the model's text comes out
// with its quotes removed, and goes back in quoted as the wrapper quotes it.
func TestFind(t *testing.T) {
	claude := func(cmd string) string {
		return "source /home/u/.claude/shell-snapshots/snapshot-bash-1-a.sh 2>/dev/null || true && shopt -u extglob 2>/dev/null || true && eval " + cmd + " < /dev/null && pwd -P >| /tmp/claude-1a2b-cwd"
	}
	for _, tc := range []struct {
		src, model string
		found      bool
	}{
		{claude(`'ls -la'`), "ls -la", true},
		{claude(`'echo '\''hi'\'''`), "echo 'hi'", true},
		{claude(`'echo '"'"'a|b'"'"''`), "echo 'a|b'", true},
		{claude(`'spear-capability invoke n/w '\''{"a": 1}'\'''`), `spear-capability invoke n/w '{"a": 1}'`, true},
		{claude(`'a' 'b'`), "", false},                          // two words
		{claude(`"ls"`), "", false},                             // not single-quoted
		{claude(`'ls'`) + "; spear-capability list", "", false}, // something after
		{"true; " + claude(`'ls'`), "", false},                  // something before
		{strings.Replace(claude(`'ls'`), "/home/u/", "/home/$USER/", 1), "", false},
		{strings.Replace(claude(`'ls'`), "/tmp/claude-1a2b-cwd", "$(spear-capability list)", 1), "", false},
		{"eval 'spear-capability list'", "", false},
	} {
		m := Find(tc.src)
		if (m != nil) != tc.found || m != nil && m.Model != tc.model {
			t.Errorf("Find(%q) = %+v, want found %v model %q", tc.src, m, tc.found, tc.model)
		}
	}
	m := Find(claude(`'ls'`))
	if got := m.Replace("it's"); got != claude(`'it'\''s'`) {
		t.Errorf("Replace: %s", got)
	}
}

// TestClassify: the model's text inside a known wrapper is classified on
// its own; a wrapper that is not known, around the command, is refused,
// naming the harness it looks like.
func TestClassify(t *testing.T) {
	known := "shopt -u extglob 2>/dev/null || true && eval 'touch x; spear-capability list' < /dev/null && pwd -P >| /tmp/claude-1-cwd"
	v, m := Classify(known)
	if v.Kind != shellparse.Refused || m == nil || v.Text != "touch x; spear-capability list" || !strings.Contains(v.Refusal.Why, "runs other commands besides") || !strings.Contains(v.Refusal.Why, "inside Claude Code's wrapper claude-code-bash-login") {
		t.Errorf("a mixed line in a known wrapper: %v %+v %v", v.Kind, v.Refusal, m)
	}
	v, m = Classify("shopt -u extglob 2>/dev/null || true && eval 'ls' < /dev/null && pwd -P >| /tmp/claude-1-cwd")
	if v.Kind != shellparse.Ordinary || m == nil {
		t.Errorf("an ordinary command in a known wrapper: %v %v", v.Kind, m)
	}
	unknown := "shopt -u extglob 2>/dev/null || true && eval 'spear-capability list' && pwd -P >| /tmp/claude-1-cwd"
	v, m = Classify(unknown)
	if v.Kind != shellparse.Refused || m != nil || !strings.Contains(v.Refusal.Why, "looks like Claude Code's wrapper") || !strings.Contains(v.Refusal.Why, "claude-code-bash (Claude Code 2.1.197)") {
		t.Errorf("an unknown wrapper: %v %+v", v.Kind, v.Refusal)
	}
}

// FuzzFind: no text panics Find, and a text it finds a wrapper in gives
// back the model's text, and itself when that is put back.
func FuzzFind(f *testing.F) {
	for _, w := range Known {
		if data, err := os.ReadFile(filepath.Join("..", "testdata", "wrappers", w.Captured)); err == nil {
			f.Add(string(data))
		}
	}
	f.Add("eval 'x' < /dev/null")
	f.Fuzz(func(t *testing.T, src string) {
		m := Find(src)
		if m == nil {
			return
		}
		again := Find(m.Replace(m.Model))
		if again == nil || again.Model != m.Model || again.Wrapper != m.Wrapper {
			t.Fatalf("%q: the model's text %q put back is not found again", src, m.Model)
		}
	})
}

// TestAllTemplatesCompile: every template makes a valid expression (they
// are compiled on first use, not at start).
func TestAllTemplatesCompile(t *testing.T) {
	for _, w := range Known {
		w.once.Do(w.compile)
		if w.re == nil || w.prefix == "" {
			t.Errorf("%s: %v %q", w.Name, w.re, w.prefix)
		}
	}
}

// BenchmarkFindOrdinary is what every spear-term -c pays to learn that a
// submission is no wrapper.
func BenchmarkFindOrdinary(b *testing.B) {
	for i := 0; i < b.N; i++ {
		if Find("ls -la && make test") != nil {
			b.Fatal("found a wrapper")
		}
	}
}
