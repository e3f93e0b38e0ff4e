// Package harness recognises the wrappers that agent harnesses put around
// the model's command before they hand it to the turn's shell, finds the
// model's text in one, and puts other text in its place.
//
// A wrapper is known only exactly: the whole submission must match one
// generation of one harness's wrapper, captured from the harness itself
// (testdata/wrappers), with nothing but the model's text and the harness's
// own file names varying. Anything else is not a wrapper, and is classified
// as the turn's text, whole.
package harness

import (
	"fmt"
	"regexp"
	"strings"
	"sync"
)

// holding says how a wrapper holds the model's text.
type holding int

const (
	// quoted: one single-quoted shell word, as eval or SHELL -c takes it;
	// a quote inside is closed, written with a backslash or inside double
	// quotes, and opened again.
	quoted holding = iota
	// lines: the model's text as it is, lines of its own inside a group.
	lines
)

// Wrapper is one generation of one harness's wrapper.
type Wrapper struct {
	// Name is how the audit trail names it, e.g. claude-code-bash.
	Name string
	// Harness is the harness, as its users name it.
	Harness string
	// Version is the harness version its captured text came from.
	Version string
	// Captured is the file under testdata/wrappers that holds a real
	// wrapper the harness sent.
	Captured string
	// Template is the wrapper, with {{CMD}} where the model's text
	// stands, {{PATH}} for a file name of the harness's own (an absolute
	// path of letters, digits and _.-/@+ only) and {{N}} for a number.
	Template string
	hold     holding
	prefix   string // the template's text before its first placeholder
	once     sync.Once
	re       *regexp.Regexp // compiled on first use: spear-term starts for every command
}

// Match is a submission found to be a known wrapper.
type Match struct {
	Wrapper *Wrapper
	// Model is the model's text, as the shell would run it.
	Model string
	src   string
	start int // where the model's text stands in src, as the wrapper holds it
	end   int
}

// Find returns the known wrapper src is, with the model's text, or nil.
func Find(src string) *Match {
	for _, w := range Known {
		if m := w.match(src); m != nil {
			return m
		}
	}
	return nil
}

// Replace returns the submission with text in the place of the model's,
// held as the wrapper holds it: quoted for a quoted wrapper, as it is for
// one that holds lines.
func (m *Match) Replace(text string) string {
	if m.Wrapper.hold == quoted {
		text = "'" + strings.ReplaceAll(text, "'", `'\''`) + "'"
	}
	return m.src[:m.start] + text + m.src[m.end:]
}

// pieces of a template, as regular expressions.
const (
	quotedWord = `'(?:[^']|'\\''|'"'"')*'`
	pathRE     = `/[A-Za-z0-9_./@+-]+`
	numberRE   = `[0-9]+`
)

// compile makes w's regular expression from its template.
func (w *Wrapper) compile() {
	var b strings.Builder
	b.WriteString(`\A`)
	rest := w.Template
	for rest != "" {
		i := strings.Index(rest, "{{")
		if i < 0 {
			b.WriteString(regexp.QuoteMeta(rest))
			break
		}
		b.WriteString(regexp.QuoteMeta(rest[:i]))
		j := strings.Index(rest[i:], "}}")
		if j < 0 {
			panic("harness: an unclosed {{ in the template of " + w.Name)
		}
		switch name := rest[i+2 : i+j]; name {
		case "CMD":
			if w.hold == quoted {
				b.WriteString(`(?P<cmd>` + quotedWord + `)`)
			} else {
				b.WriteString(`(?P<cmd>(?s:.*))`)
			}
		case "PATH":
			b.WriteString(pathRE)
		case "N":
			b.WriteString(numberRE)
		default:
			panic(fmt.Sprintf("harness: {{%s}} in the template of %s", name, w.Name))
		}
		rest = rest[i+j+2:]
	}
	b.WriteString(`\z`)
	w.re = regexp.MustCompile(b.String())
}

func (w *Wrapper) match(src string) *Match {
	// Most submissions are no wrapper: the literal start says so at once,
	// before the expression runs.
	if !strings.HasPrefix(src, w.prefix) {
		return nil
	}
	w.once.Do(w.compile)
	loc := w.re.FindStringSubmatchIndex(src)
	if loc == nil {
		return nil
	}
	i := w.re.SubexpIndex("cmd")
	start, end := loc[2*i], loc[2*i+1]
	model := src[start:end]
	if w.hold == quoted {
		var ok bool
		if model, ok = unquote(model); !ok {
			return nil
		}
	}
	return &Match{Wrapper: w, Model: model, src: src, start: start, end: end}
}

// unquote removes the quotes of a word made of single-quoted pieces joined
// by a quote written with a backslash or inside double quotes (quotedWord).
func unquote(s string) (string, bool) {
	var b strings.Builder
	for s != "" {
		switch {
		case strings.HasPrefix(s, `\'`):
			b.WriteByte('\'')
			s = s[2:]
		case strings.HasPrefix(s, `"'"`):
			b.WriteByte('\'')
			s = s[3:]
		case s[0] == '\'':
			end := strings.IndexByte(s[1:], '\'')
			if end < 0 {
				return "", false
			}
			b.WriteString(s[1 : 1+end])
			s = s[2+end:]
		default:
			return "", false
		}
	}
	return b.String(), true
}

// Guess names the harness whose wrapper src looks like, when it is none
// of the known ones exactly: for a refusal that says what was not
// recognised. It returns "" when src looks like no harness's wrapper.
func Guess(src string) string {
	for _, g := range guesses {
		if strings.Contains(src, g.marker) {
			return g.harness
		}
	}
	return ""
}
