package present

import (
	"strings"
	"testing"
	"unicode/utf8"
)

func TestClean(t *testing.T) {
	for in, want := range map[string]string{
		"plain":                      "plain",
		"":                           "",
		"\x1b[31mred\x1b[0m":         "red",
		"\x1b[?25lcursor":            "cursor",
		"\x1b[1;2":                   "",
		"\x1b[1\nnext":               "\nnext", // a control byte ends a control sequence and is itself kept or dropped
		"\x1b]0;title\x07after":      "after",
		"\x1b]8;;http://x\x1b\\link": "link",
		"\x1b]0;t\x1b7after":         "after", // ESC ends the string and starts a sequence of its own
		"\x1b]0;unterminated\nline":  "\nline",
		"\x1b]t\x1b":                 "",
		"\x1b]runs to the end":       "",
		"a\rb":                       "ab",
		"tab\tnew\nline":             "tab\tnew\nline",
		"bell\x07nul\x00del\x7f":     "bellnuldel",
		"\u009b31mc1":                "c1",
		"\u009b":                     "",
		"\u009d0;title\x07osc":       "osc",
		"\u0090dcs\x1b\\dcs":         "dcs",
		"\u009eprivacy\x07pm":        "pm",
		"\u009f apc\x07apc":          "apc",
		"\u0085nel":                  "nel",
		"rtl\u202eoverride\u2066x":   "rtloverridex",
		"marks\u200e\u200f\u061cend": "marksend",
		"bad\xffutf8":                "bad\ufffdutf8",
		"\x1bPdcs string\x1b\\kept":  "kept",
		"\x1b^pm\x07kept":            "kept",
		"\x1b_apc\x07kept":           "kept",
		"\x1bXsos\x07kept":           "kept",
		"\x1b(Bcharset":              "charset",
		"\x1b#8align":                "align",
		"\x1b(":                      "",
		"\x1bMreverse":               "reverse",
		"unterminated \x1b[":         "unterminated ",
		"\x1b":                       "",
		"emoji 🙂 and accents é":      "emoji 🙂 and accents é",
	} {
		if got := Clean(in); got != want {
			t.Errorf("Clean(%q) = %q, want %q", in, got, want)
		}
	}
}

func TestOneLine(t *testing.T) {
	for _, tc := range []struct {
		in   string
		max  int
		want string
	}{
		{"  a\n\tb   c\x1b[1m ", 100, "a b c"},
		{"", 10, ""},
		{" \n\t ", 10, ""},
		{"line one\r\nline two", 100, "line one line two"},
		// The bound applies after white space is folded and escapes removed.
		{"a\x1b[31m    b", 3, "a b"},
		{"abcdef", 4, "abc…"},
		{"\u202eévil\u202c", 10, "évil"},
	} {
		if got := OneLine(tc.in, tc.max); got != tc.want {
			t.Errorf("OneLine(%q, %d) = %q, want %q", tc.in, tc.max, got, tc.want)
		}
	}
}

func TestBound(t *testing.T) {
	for _, tc := range []struct {
		in   string
		max  int
		want string
	}{
		{"héllo wörld", 5, "héll…"},
		{"héllo", 5, "héllo"}, // five runes fit in five, though they are six bytes
		{"héllo!", 5, "héll…"},
		{"", 3, ""},
		{"ab", 1, "…"},
		{"🙂🙂🙂", 2, "🙂…"},
		{"ab", 0, ""}, // no room: nothing, not a panic
		{"ab", -3, ""},
		{"", 0, ""},
	} {
		got := Bound(tc.in, tc.max)
		if got != tc.want || utf8.RuneCountInString(got) > max(tc.max, 0) || !utf8.ValidString(got) {
			t.Errorf("Bound(%q, %d) = %q, want %q", tc.in, tc.max, got, tc.want)
		}
	}
}

func FuzzClean(f *testing.F) {
	for _, s := range []string{"\x1b[31mx", "\x1b]0;t\x07", "\u009b1m", "a\rb", "\xff"} {
		f.Add(s)
	}
	f.Fuzz(func(t *testing.T, s string) {
		out := Clean(s)
		if !utf8.ValidString(out) || strings.ContainsAny(out, "\x1b\r\x00\x07\u009b\u202e") {
			t.Fatalf("Clean(%q) = %q", s, out)
		}
	})
}

// A refusal may quote a provider's words: its line is cleaned, kept on one
// line, and its spacing otherwise kept as it is (hints hold JSON).
func TestWriteRefusalCleans(t *testing.T) {
	var b strings.Builder
	WriteRefusal(&b, "(root): x\x1b]0;owned\x07 is required\nnext\u202e", `invoke p/t '{"a":  "b"}'`)
	want := "spear-capability: refused: (root): x is required next\nspear-capability: hint: invoke p/t '{\"a\":  \"b\"}'\n"
	if b.String() != want {
		t.Errorf("%q, want %q", b.String(), want)
	}
}

// An ESC before a letter that is not ASCII, or a control sequence broken by
// one, takes nothing of the letter with it (termesc).
func TestCleanKeepsLettersAfterEscapes(t *testing.T) {
	for in, want := range map[string]string{"a\x1bé": "aé", "\x1b[1édone": "édone", "\x1b(Bplain": "plain"} {
		if got := Clean(in); got != want {
			t.Errorf("Clean(%q) = %q, want %q", in, got, want)
		}
	}
}
