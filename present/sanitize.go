package present

import (
	"fmt"
	"spear/internal/termesc"
	"strings"
	"unicode"
	"unicode/utf8"
)

// Clean returns provider text as plain text: terminal escape sequences (CSI,
// OSC, DCS and the rest) and control characters (C0 and C1) are removed,
// except newline and tab; invalid UTF-8 becomes U+FFFD; invisible
// characters (see Invisible), which can make text read other than it is or
// carry words a reader never sees, are removed; the line and paragraph
// separators U+2028 and U+2029 become newlines.
func Clean(s string) string {
	var b strings.Builder
	b.Grow(len(s))
	for i := 0; i < len(s); {
		r, size := utf8.DecodeRuneInString(s[i:])
		switch {
		case r == utf8.RuneError && size == 1:
			b.WriteRune(utf8.RuneError)
			i++
			continue
		case r == 0x1b:
			i += termesc.Len(s[i:])
			continue
		case r == 0x9b: // C1 CSI
			i += size + termesc.CSILen(s[i+size:])
			continue
		case r == 0x9d || r == 0x90 || r == 0x9e || r == 0x9f: // C1 OSC, DCS, PM, APC
			i += size + termesc.StringLen(s[i+size:])
			continue
		case r == '\n' || r == '\t':
			b.WriteRune(r)
		case r == '\r':
			// a carriage return can overwrite a line on a terminal
		case r == 0x2028 || r == 0x2029:
			b.WriteByte('\n')
		case unicode.IsControl(r) || Invisible(r):
		default:
			b.WriteRune(r)
		}
		i += size
	}
	return b.String()
}

// Invisible reports whether r is a character that shows nothing, or changes
// how the text around it is shown, and so can hide words from a person who
// reads the text: bidirectional controls (U+202A–U+202E, U+2066–U+2069,
// U+200E, U+200F, U+061C), zero-width characters (U+200B–U+200D, U+2060,
// U+FEFF) and every other format character (Unicode category Cf), the tag
// characters and variation selectors of plane 14 (U+E0000–U+E0FFF), the
// combining grapheme joiner U+034F and the Hangul fillers.
func Invisible(r rune) bool {
	switch {
	case r < 0xad:
		return false
	case r >= 0xe0000 && r <= 0xe0fff:
		return true
	case r == 0x034f || r == 0x115f || r == 0x1160 || r == 0x3164 || r == 0xffa0:
		return true
	}
	return unicode.Is(unicode.Cf, r)
}

// hidden reports whether r must not reach a reader as it is: a control
// character, an invisible one, or a line or paragraph separator.
func hidden(r rune) bool {
	return unicode.IsControl(r) || Invisible(r) || r == 0x2028 || r == 0x2029
}

// Visible returns s with every character that a reader would not see as
// itself (controls but newline and tab, invisible characters, line and
// paragraph separators, invalid UTF-8) written as <U+XXXX>, so that a
// person is shown exactly what is there.
func Visible(s string) string {
	if strings.IndexFunc(s, func(r rune) bool { return r == utf8.RuneError || r != '\n' && r != '\t' && hidden(r) }) < 0 {
		return s
	}
	var b strings.Builder
	for i := 0; i < len(s); {
		r, size := utf8.DecodeRuneInString(s[i:])
		switch {
		case r == utf8.RuneError && size == 1:
			fmt.Fprintf(&b, "<0x%02X>", s[i])
		case r != '\n' && r != '\t' && hidden(r):
			fmt.Fprintf(&b, "<%U>", r)
		default:
			b.WriteString(s[i : i+size])
		}
		i += size
	}
	return b.String()
}

// OneLine returns provider text cleaned, on one line, with runs of white
// space folded, and at most max runes long (cut with "…").
func OneLine(s string, max int) string {
	return Bound(strings.Join(strings.Fields(Clean(s)), " "), max)
}

// Bound cuts s to at most max runes, ending in "…" when it was cut.
func Bound(s string, max int) string {
	if utf8.RuneCountInString(s) <= max {
		return s
	}
	if max < 1 {
		return ""
	}
	runes := []rune(s)
	return string(runes[:max-1]) + "…"
}
