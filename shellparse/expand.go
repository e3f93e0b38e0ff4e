package shellparse

import (
	"slices"
	"strings"
	"unicode/utf8"

	"mvdan.cc/sh/v3/syntax"
)

// This file settles what a word becomes through the expansions bash does
// without side effects: brace expansion, ANSI-C quoting and quote removal.
// What it cannot settle (a parameter, a command substitution, arithmetic,
// a glob, a tilde, a brace sequence, locale quoting) stays a hole.

// piece is part of what a word expands to: text the classifier settled,
// or a hole where an expansion stands that it cannot settle.
type piece struct {
	text string
	hole bool
}

// spelling is one word that a word becomes.
type spelling []piece

// settled returns the spelling's text and whether it has no hole.
func (s spelling) settled() (string, bool) {
	var b strings.Builder
	for _, p := range s {
		if p.hole {
			return "", false
		}
		b.WriteString(p.text)
	}
	return b.String(), true
}

// maxSpellings bounds the words one brace expansion is followed into;
// past it, every brace expansion of the word is a hole.
const maxSpellings = 256

// spellings returns the words bash makes of w by brace expansion, each
// with its ANSI-C quoting decoded and its quotes removed. A brace
// sequence ({a..z}) is a hole: its values are not worked out.
func spellings(w *syntax.Word) []spelling {
	split := &syntax.Word{Parts: slices.Clone(w.Parts)}
	syntax.SplitBraces(split)
	variants, ok := braceLists(split.Parts, maxSpellings)
	if !ok {
		variants = [][]syntax.WordPart{split.Parts}
	}
	out := make([]spelling, 0, len(variants))
	for _, parts := range variants {
		out = append(out, spell(parts))
	}
	return out
}

// braceLists expands the comma lists of split word parts ({a,b}), leaving
// sequences in place. ok is false when there would be more than limit
// words.
func braceLists(parts []syntax.WordPart, limit int) (words [][]syntax.WordPart, ok bool) {
	for i, p := range parts {
		br, isBrace := p.(*syntax.BraceExp)
		if !isBrace || br.Sequence {
			continue
		}
		rest, ok := braceLists(parts[i+1:], limit)
		if !ok {
			return nil, false
		}
		for _, elem := range br.Elems {
			inner, ok := braceLists(elem.Parts, limit)
			if !ok {
				return nil, false
			}
			for _, in := range inner {
				for _, r := range rest {
					if len(words) == limit {
						return nil, false
					}
					words = append(words, slices.Concat(parts[:i:i], in, r))
				}
			}
		}
		return words, true
	}
	return [][]syntax.WordPart{parts}, true
}

// spell removes quotes from word parts that brace expansion left, decodes
// ANSI-C quoting and makes a hole of everything else.
func spell(parts []syntax.WordPart) spelling {
	var s spelling
	lit := func(t string) {
		if n := len(s); n > 0 && !s[n-1].hole {
			s[n-1].text += t
			return
		}
		s = append(s, piece{text: t})
	}
	hole := func() {
		if n := len(s); n > 0 && s[n-1].hole {
			return
		}
		s = append(s, piece{hole: true})
	}
	for i, part := range parts {
		switch p := part.(type) {
		case *syntax.Lit:
			var b strings.Builder
			rest := false
			for j := 0; j < len(p.Value); j++ {
				c := p.Value[j]
				switch {
				case c == '\\' && j+1 < len(p.Value):
					j++
					if p.Value[j] != '\n' {
						b.WriteByte(p.Value[j])
					}
				case c == '*' || c == '?':
					lit(b.String())
					b.Reset()
					hole()
				case c == '[':
					// A bracket expression may end in a later part.
					rest = true
				case c == '~' && i == 0 && j == 0:
					hole()
				default:
					b.WriteByte(c)
				}
				if rest {
					break
				}
			}
			lit(b.String())
			if rest {
				hole()
				return s
			}
		case *syntax.SglQuoted:
			if p.Dollar {
				lit(ansiC(p.Value))
			} else {
				lit(p.Value)
			}
		case *syntax.DblQuoted:
			if p.Dollar {
				hole() // $"…" is translated
				continue
			}
			for _, dp := range p.Parts {
				if l, ok := dp.(*syntax.Lit); ok {
					var b strings.Builder
					doubleQuotedLit(&b, l.Value)
					lit(b.String())
				} else {
					hole()
				}
			}
		default:
			hole()
		}
	}
	return s
}

// ansiC decodes the text inside $'…' as bash does. The string ends at the
// first NUL it yields, as bash's does.
func ansiC(s string) string {
	out, _, _ := strings.Cut(ansiCAll(s), "\x00")
	return out
}

// ansiCAll decodes the text inside $'…', NUL bytes and what follows them
// included.
func ansiCAll(s string) string {
	var b strings.Builder
	for i := 0; i < len(s); i++ {
		c := s[i]
		if c != '\\' || i+1 == len(s) {
			b.WriteByte(c)
			continue
		}
		i++
		switch c = s[i]; c {
		case 'a':
			b.WriteByte('\a')
		case 'b':
			b.WriteByte('\b')
		case 'e', 'E':
			b.WriteByte(0x1b)
		case 'f':
			b.WriteByte('\f')
		case 'n':
			b.WriteByte('\n')
		case 'r':
			b.WriteByte('\r')
		case 't':
			b.WriteByte('\t')
		case 'v':
			b.WriteByte('\v')
		case '\\', '\'', '"', '?':
			b.WriteByte(c)
		case '0', '1', '2', '3', '4', '5', '6', '7':
			v := int(c - '0')
			for n := 0; n < 2 && i+1 < len(s) && s[i+1] >= '0' && s[i+1] <= '7'; n++ {
				i++
				v = v*8 + int(s[i]-'0')
			}
			b.WriteByte(byte(v))
		case 'x':
			v, n := hexDigits(s[i+1:], 2)
			braced := false
			if n == 0 && i+1 < len(s) && s[i+1] == '{' {
				// \x{HHH…}, as ksh93 has it
				braced = true
				v, n = hexDigits(s[i+2:], len(s))
				i++
			}
			i += n
			if braced && i+1 < len(s) && s[i+1] == '}' {
				i++
			}
			if n == 0 && !braced {
				b.WriteString(`\x`)
				continue
			}
			b.WriteByte(byte(v))
		case 'u', 'U':
			max := 4
			if c == 'U' {
				max = 8
			}
			v, n := hexDigits(s[i+1:], max)
			i += n
			switch {
			case n == 0:
				b.WriteByte('\\')
				b.WriteByte(c)
			case v <= 0x7f:
				b.WriteByte(byte(v))
			case v <= utf8.MaxRune:
				b.WriteRune(rune(v))
			default:
				b.WriteRune(utf8.RuneError)
			}
		case 'c':
			if i+1 == len(s) {
				b.WriteString(`\c`)
				continue
			}
			i++
			ctl := s[i]
			if ctl == '\\' && i+1 < len(s) && s[i+1] == '\\' {
				i++
			}
			if ctl == '?' {
				b.WriteByte(0x7f)
			} else {
				if ctl >= 'a' && ctl <= 'z' {
					ctl -= 'a' - 'A'
				}
				b.WriteByte(ctl & 0x1f)
			}
		default:
			b.WriteByte('\\')
			b.WriteByte(c)
		}
	}
	return b.String()
}

// hexDigits reads up to max hex digits from the start of s.
func hexDigits(s string, max int) (v uint64, n int) {
	for n < max && n < len(s) {
		c := s[n]
		var d byte
		switch {
		case c >= '0' && c <= '9':
			d = c - '0'
		case c >= 'a' && c <= 'f':
			d = c - 'a' + 10
		case c >= 'A' && c <= 'F':
			d = c - 'A' + 10
		default:
			return v, n
		}
		if v < 1<<32 {
			v = v*16 + uint64(d)
		}
		n++
	}
	return v, n
}

// couldBeName reports whether a command word spelled s could run the
// name: its settled text is the name or a path ending in /name; or, with
// holes, the part after its last settled slash holds settled text and
// matches the name when each hole stands for any text without a slash.
// A hole that would have to supply a slash (python$X as
// python/../spear-capability) is left to the turn shell's own refusal.
func couldBeName(s spelling) bool {
	if text, ok := s.settled(); ok {
		return isName(text)
	}
	// The pieces after the last settled slash.
	base := s
	for i := len(s) - 1; i >= 0; i-- {
		if j := strings.LastIndexByte(s[i].text, '/'); !s[i].hole && j >= 0 {
			base = append(spelling{{text: s[i].text[j+1:]}}, s[i+1:]...)
			break
		}
	}
	// The settled texts between holes, empty ones included.
	lits := []string{""}
	settled := 0
	for _, p := range base {
		if p.hole {
			lits = append(lits, "")
			continue
		}
		lits[len(lits)-1] += p.text
		settled += len(p.text)
	}
	return settled > 0 && globMatch(lits, Name)
}

// globMatch reports whether s is lits[0], then any text, then lits[1],
// and so on, ending with the last of lits.
func globMatch(lits []string, s string) bool {
	if len(lits) == 1 {
		return s == lits[0]
	}
	first, last := lits[0], lits[len(lits)-1]
	if len(first)+len(last) > len(s) || !strings.HasPrefix(s, first) || !strings.HasSuffix(s, last) {
		return false
	}
	mid := s[len(first) : len(s)-len(last)]
	for _, l := range lits[1 : len(lits)-1] {
		i := strings.Index(mid, l)
		if i < 0 {
			return false
		}
		mid = mid[i+len(l):]
	}
	return true
}
