// Package shellparse classifies one submitted shell text as ordinary, as one
// spear-capability invocation with its literal words, or as a refusal.
//
// It knows bash syntax (through mvdan.cc/sh/v3/syntax) and nothing about
// capabilities. The name is recognised wherever a shell would run it as a
// command; a submission that mentions the name and cannot be understood
// with certainty is refused rather than handed to a shell.
package shellparse

import (
	"fmt"
	"slices"
	"strings"

	"spear/outcome"

	"mvdan.cc/sh/v3/syntax"
)

// Name is the command that is answered instead of run.
const Name = outcome.Command

// Kind says what to do with a submission.
type Kind int

const (
	// Ordinary submissions go to the real shell untouched.
	Ordinary Kind = iota
	// Invocation submissions are one spear-capability command standing
	// alone; Verdict.Args holds its words.
	Invocation
	// Refused submissions mention spear-capability where a shell would run
	// it, but not in a form that is answered; nothing of them runs.
	Refused
)

func (k Kind) String() string {
	switch k {
	case Ordinary:
		return "ordinary"
	case Invocation:
		return "invocation"
	default:
		return "refused"
	}
}

// Verdict is the classification of one submission.
type Verdict struct {
	Kind Kind
	// Args are the invocation's words after the command name, with quotes
	// removed and nothing expanded.
	Args []string
	// Refusal says why a Refused submission is refused.
	Refusal *outcome.Refusal
	// Text is a Refused submission as written, for the audit trail.
	Text string
}

// GenericHint shows the forms that are answered.
const GenericHint = outcome.InvokeForm

// Mentions reports whether src spells Name without help from the
// environment: whether, with every quote character, backslash, brace,
// comma and NUL byte taken out, it contains Name, before or after each
// $'…' in it is decoded. (Bash drops NUL bytes from what it reads, so they
// count as nothing; braces and commas take in what brace expansion could
// join.) It reads the text as bytes and needs no parse, so it can judge a
// text that does not parse.
func Mentions(src string) bool {
	if strings.Contains(src, Name) {
		return true
	}
	if !strings.ContainsAny(src, "'\"\\\x00{},") {
		return false
	}
	return strings.Contains(stripQuotes(src), Name) ||
		strings.Contains(src, "$'") && strings.Contains(stripQuotes(decodeANSIC(src)), Name)
}

// stripQuotes takes out what Mentions ignores.
func stripQuotes(src string) string {
	return strings.Map(func(r rune) rune {
		switch r {
		case '\'', '"', '\\', 0, '{', '}', ',':
			return -1
		}
		return r
	}, src)
}

// decodeANSIC replaces each $'…' of src by what it means, by its bytes
// alone: a $' inside other quotes is decoded too.
func decodeANSIC(src string) string {
	var b strings.Builder
	for {
		i := strings.Index(src, "$'")
		if i < 0 {
			b.WriteString(src)
			return b.String()
		}
		b.WriteString(src[:i])
		body := src[i+2:]
		end := len(body)
		for j := 0; j < len(body); j++ {
			if body[j] == '\\' {
				j++
			} else if body[j] == '\'' {
				end = j
				break
			}
		}
		b.WriteString(ansiCAll(body[:end]))
		src = body[min(end+1, len(body)):]
	}
}

// mayRun reports whether src is worth parsing for the name: it mentions
// it, or holds an expansion that could spell it (a $, backquote, glob,
// tilde, brace or extended glob). Every other text is ordinary.
func mayRun(src string) bool {
	return Mentions(src) || strings.ContainsAny(src, "$`*?[~{(")
}

// maxDepth bounds how deep Classify looks into strings handed to eval or
// to another shell.
const maxDepth = 4

// Classify decides what to do with one submission, the whole text the turn
// sent, which may hold many lines.
func Classify(src string) Verdict {
	v := classify(src, 0)
	if v.Kind == Refused {
		v.Text = src
	}
	return v
}

func refuse(line, col uint, reason, hint string) Verdict {
	if hint == "" {
		hint = GenericHint
	}
	return Verdict{Kind: Refused, Refusal: &outcome.Refusal{Line: int(line), Col: int(col), Why: reason, Hint: hint}}
}

func classify(src string, depth int) Verdict {
	if !mayRun(src) {
		return Verdict{Kind: Ordinary}
	}
	mentions := Mentions(src)
	if i := strings.IndexByte(src, 0); i >= 0 && mentions {
		return refuse(0, 0, "the submission holds a NUL byte", "")
	}
	if strings.IndexByte(src, '\r') >= 0 && mentions {
		return refuse(0, 0, `the submission holds a carriage return (\r); end its lines with a plain newline`, "")
	}
	f, err := parse(src)
	if err == nil && strings.Contains(src, "<<") {
		if alt := asBashReads(f, src); alt != "" {
			f, err = parse(alt)
		}
	}
	if err != nil {
		if !mentions {
			return Verdict{Kind: Ordinary}
		}
		return refuse(0, 0, fmt.Sprintf("the submission mentions %s but does not parse (%v), so it is neither run nor answered", Name, err), "")
	}
	a := &analysis{src: src, depth: depth}
	a.find(f)
	if len(a.sites) == 0 {
		return Verdict{Kind: Ordinary}
	}
	return a.verdict(f)
}

func parse(src string) (*syntax.File, error) {
	return syntax.NewParser(syntax.Variant(syntax.LangBash)).Parse(strings.NewReader(src), "")
}

// asBashReads returns src with the keyword of every let and declaration
// (declare, local, export, readonly, typeset) whose words hold "<<"
// replaced by a plain command name of the same length, or "" when there is
// none. mvdan.cc/sh reads those words as arithmetic, where << is a shift;
// bash reads them as a simple command's words, where << starts a
// here-document (let x<<EOF, declare a[x<<EOF]=1, whose delimiter is
// "EOF]=1"), and the lines below are its body, not commands. Parsed again,
// the text has bash's here-documents at the same offsets. A declaration
// with a compound assignment (a=(1 2)) among those words no longer parses,
// and is judged as a text that does not parse.
func asBashReads(f *syntax.File, src string) string {
	var b []byte
	syntax.Walk(f, func(n syntax.Node) bool {
		var kw, size int
		switch n := n.(type) {
		case *syntax.LetClause:
			kw, size = int(n.Let.Offset()), len("let")
		case *syntax.DeclClause:
			kw, size = int(n.Variant.Pos().Offset()), len(n.Variant.Value)
		default:
			return true
		}
		end := int(n.End().Offset())
		if end > len(src) || kw+size > end || !strings.Contains(src[kw:end], "<<") {
			return true
		}
		if word := src[kw : kw+size]; word != "let" && !declarations[word] {
			return true // not the keyword as written: leave it
		}
		if b == nil {
			b = []byte(src)
		}
		for i := kw; i < kw+size; i++ {
			b[i] = '_'
		}
		return true
	})
	return string(b)
}

// declarations are the words mvdan.cc/sh reads as a declaration.
var declarations = map[string]bool{
	"declare": true, "local": true, "export": true, "readonly": true, "typeset": true, "nameref": true,
}

// siteKind says how a recognised site runs the name.
type siteKind int

const (
	direct  siteKind = iota // the command word itself
	wrapped                 // behind a wrapper such as env, exec or bash -c
	dynamic                 // a command word that needs expansion and mentions the name
	funcdef                 // a function of that name is defined
)

type site struct {
	kind    siteKind
	call    *syntax.CallExpr
	pos     syntax.Pos
	wrapper string
}

type analysis struct {
	src   string
	depth int
	sites []site
}

// isName reports whether a command word, quotes removed, names the command.
func isName(s string) bool {
	return s == Name || strings.HasSuffix(s, "/"+Name)
}

// wrappers run the command named by one of their arguments.
var wrappers = map[string]bool{
	"command": true, "exec": true, "builtin": true, "nohup": true, "setsid": true,
	"nice": true, "ionice": true, "stdbuf": true, "timeout": true, "env": true,
	"sudo": true, "doas": true, "xargs": true, "chroot": true, "unbuffer": true,
	"watch": true, "strace": true, "ltrace": true, "flock": true, "chrt": true,
	"taskset": true, "find": true, "parallel": true, "script": true, "busybox": true,
	"coproc": true, "trap": true, "time": true, "runuser": true, "su": true,
}

// shells run a string of shell text that an argument or a here-document holds.
var shells = map[string]bool{
	"eval": true, "bash": true, "sh": true, "dash": true, "zsh": true, "ksh": true,
	"mksh": true, "ash": true, "fish": true, "source": true, ".": true,
}

// shellPrograms are the shells a wrapper can start (eval, source and .
// are builtins, which no wrapper runs).
var shellPrograms = map[string]bool{
	"bash": true, "sh": true, "dash": true, "zsh": true, "ksh": true, "mksh": true, "ash": true, "fish": true,
}

func baseName(s string) string {
	if i := strings.LastIndexByte(s, '/'); i >= 0 {
		return s[i+1:]
	}
	return s
}

func (a *analysis) find(f *syntax.File) {
	syntax.Walk(f, func(n syntax.Node) bool {
		switch n := n.(type) {
		case *syntax.Stmt:
			a.findInShellInput(n)
		case *syntax.FuncDecl:
			if n.Name != nil && isName(n.Name.Value) {
				a.sites = append(a.sites, site{kind: funcdef, pos: n.Pos()})
			}
		case *syntax.CallExpr:
			if len(n.Args) == 0 {
				return true
			}
			word := n.Args[0]
			val, why := literal(word)
			switch {
			case why == "" && isName(val):
				a.sites = append(a.sites, site{kind: direct, call: n, pos: word.Pos()})
			case why != "" && a.mayBeName(word):
				a.sites = append(a.sites, site{kind: dynamic, call: n, pos: word.Pos()})
			case why == "" && wrappers[baseName(val)]:
				for i, arg := range n.Args[1:] {
					v, w := literal(arg)
					if (w == "" && isName(v)) || (w != "" && a.spellsName(arg)) {
						a.sites = append(a.sites, site{kind: wrapped, call: n, pos: arg.Pos(), wrapper: val})
						break
					}
					// exec bash -c '…', env X=1 sh -c '…', timeout 5
					// bash -c '…': the shell's text is a command
					// position too.
					if w == "" && shellPrograms[baseName(v)] {
						before := len(a.sites)
						a.findInShellText(&syntax.CallExpr{Args: n.Args[1+i:]}, v)
						for j := before; j < len(a.sites); j++ {
							a.sites[j].call, a.sites[j].wrapper = n, val+" "+v
						}
						break
					}
				}
			case why == "" && shells[baseName(val)]:
				a.findInShellText(n, val)
			}
		}
		return true
	})
}

// findInShellText looks into the strings that eval or a shell would run:
// its literal arguments and the here-documents of its statement.
func (a *analysis) findInShellText(call *syntax.CallExpr, shell string) {
	var texts []string
	for _, arg := range call.Args[1:] {
		if v, why := literal(arg); why == "" {
			texts = append(texts, v)
		} else if vals, ok := settledWords(arg); ok {
			texts = append(texts, vals...)
		} else if Mentions(a.text(arg)) {
			a.sites = append(a.sites, site{kind: wrapped, call: call, pos: arg.Pos(), wrapper: shell})
			return
		}
	}
	if shell == "eval" {
		texts = []string{strings.Join(texts, " ")}
	}
	for _, t := range texts {
		if a.nested(t) {
			a.sites = append(a.sites, site{kind: wrapped, call: call, pos: call.Pos(), wrapper: shell})
			return
		}
	}
}

// findInShellInput looks into the here-documents and here-strings that a
// shell (not eval) reads its commands from, as in bash <<EOF.
func (a *analysis) findInShellInput(stmt *syntax.Stmt) {
	call, ok := stmt.Cmd.(*syntax.CallExpr)
	if !ok || len(call.Args) == 0 {
		return
	}
	shell, why := literal(call.Args[0])
	if why != "" || !shells[baseName(shell)] || baseName(shell) == "eval" {
		return
	}
	for _, r := range stmt.Redirs {
		var body string
		switch {
		case r.Hdoc != nil:
			body = a.text(r.Hdoc)
		case r.Op == syntax.WordHdoc && r.Word != nil:
			if v, why := literal(r.Word); why == "" {
				body = v
			} else if vals, ok := settledWords(r.Word); ok {
				body = strings.Join(vals, " ")
			} else {
				body = a.text(r.Word)
			}
		default:
			continue
		}
		if a.nested(body) {
			a.sites = append(a.sites, site{kind: wrapped, call: call, pos: r.Pos(), wrapper: shell})
			return
		}
	}
}

// mayBeName reports whether a command word that needs expansion could run
// the name: it mentions it, or one of the words it expands to could be it.
func (a *analysis) mayBeName(w *syntax.Word) bool {
	return Mentions(a.text(w)) || slices.ContainsFunc(spellings(w), couldBeName)
}

// spellsName reports whether an argument that needs expansion mentions the
// name or expands, with nothing left unsettled, to it.
func (a *analysis) spellsName(w *syntax.Word) bool {
	if Mentions(a.text(w)) {
		return true
	}
	vals, _ := settledWords(w)
	return slices.ContainsFunc(vals, isName)
}

// settledWords returns the words w expands to when the classifier can
// settle every one of them.
func settledWords(w *syntax.Word) ([]string, bool) {
	var vals []string
	for _, s := range spellings(w) {
		v, ok := s.settled()
		if !ok {
			return nil, false
		}
		vals = append(vals, v)
	}
	return vals, true
}

// nested reports whether shell text handed to another shell runs the name.
func (a *analysis) nested(text string) bool {
	if !mayRun(text) {
		return false
	}
	if a.depth >= maxDepth {
		return Mentions(text)
	}
	return classify(text, a.depth+1).Kind != Ordinary
}

// text returns the source text of a node.
func (a *analysis) text(n syntax.Node) string {
	start, end := int(n.Pos().Offset()), int(n.End().Offset())
	if start < 0 || end > len(a.src) || start > end {
		return ""
	}
	return a.src[start:end]
}

func (a *analysis) verdict(f *syntax.File) Verdict {
	first := a.sites[0]
	hint := a.hint(first)
	switch first.kind {
	case funcdef:
		return refuse(first.pos.Line(), first.pos.Col(), "the submission defines a function named "+Name+", which would hide the command", GenericHint)
	case wrapped:
		return refuse(first.pos.Line(), first.pos.Col(), fmt.Sprintf("%s runs behind %q here; it is answered only as a command of its own, never through another command", Name, first.wrapper), hint)
	case dynamic:
		return refuse(first.pos.Line(), first.pos.Col(), fmt.Sprintf("the command word %s needs expansion; write %s literally", a.text(first.call.Args[0]), Name), hint)
	}
	if len(a.sites) > 1 {
		return refuse(a.sites[1].pos.Line(), a.sites[1].pos.Col(), fmt.Sprintf("the submission holds %d %s commands; send one invocation per submission", len(a.sites), Name), hint)
	}
	if len(f.Stmts) != 1 {
		return refuse(first.pos.Line(), first.pos.Col(), "the submission runs other commands besides "+Name+"; send the invocation on its own", hint)
	}
	stmt := f.Stmts[0]
	line, col := first.pos.Line(), first.pos.Col()
	if stmt.Cmd != first.call {
		return refuse(line, col, Name+" is part of "+describe(stmt.Cmd)+"; it must stand alone", hint)
	}
	call := first.call
	switch {
	case stmt.Background:
		return refuse(line, col, Name+" is sent to the background with &; it must stand alone", hint)
	case stmt.Negated:
		return refuse(line, col, Name+" is negated with !; it must stand alone", hint)
	case stmt.Coprocess || stmt.Disown:
		return refuse(line, col, Name+" is run as a co-process; it must stand alone", hint)
	case len(stmt.Redirs) > 0:
		return refuse(stmt.Redirs[0].Pos().Line(), stmt.Redirs[0].Pos().Col(), fmt.Sprintf("%s has a redirection (%s); its output cannot be redirected", Name, a.text(stmt.Redirs[0])), hint)
	case len(call.Assigns) > 0:
		return refuse(line, col, fmt.Sprintf("%s is preceded by the assignment %s; variables cannot be set for it", Name, a.text(call.Assigns[0])), hint)
	}
	body := a.text(call)
	if strings.Contains(body, "\\\n") {
		return refuse(line, col, Name+" continues over lines with a backslash; write it on one line", hint)
	}
	if call.Pos().Line() != call.End().Line() || strings.Contains(body, "\n") {
		return refuse(line, col, "a word of the "+Name+" command spans lines; write it on one line", hint)
	}
	args := make([]string, 0, len(call.Args)-1)
	for _, w := range call.Args[1:] {
		val, why := literal(w)
		if why != "" {
			return refuse(w.Pos().Line(), w.Pos().Col(), fmt.Sprintf("the word %s needs %s, and words are never expanded here; write its value literally, in single quotes", a.text(w), why), hint)
		}
		args = append(args, val)
	}
	return Verdict{Kind: Invocation, Args: args}
}

// describe names the construct a statement is, for refusals.
func describe(cmd syntax.Command) string {
	switch c := cmd.(type) {
	case *syntax.BinaryCmd:
		switch c.Op {
		case syntax.Pipe, syntax.PipeAll:
			return "a pipeline (" + c.Op.String() + ")"
		default:
			return "a list (" + c.Op.String() + ")"
		}
	case *syntax.Subshell:
		return "a subshell ( )"
	case *syntax.Block:
		return "a group { }"
	case *syntax.IfClause:
		return "an if statement"
	case *syntax.WhileClause:
		return "a loop"
	case *syntax.ForClause:
		return "a for loop"
	case *syntax.CaseClause:
		return "a case statement"
	case *syntax.FuncDecl:
		return "a function definition"
	case *syntax.TimeClause:
		return "a time command"
	case *syntax.CoprocClause:
		return "a coproc command"
	case *syntax.TestClause:
		return "a [[ ]] test"
	case *syntax.ArithmCmd:
		return "an arithmetic command"
	case *syntax.DeclClause:
		return "a declaration"
	case *syntax.LetClause:
		return "a let command"
	default:
		return "another command's words (a command substitution)"
	}
}

// hint shows the recognised command written the right way: its literal
// words, quoted, on a line of their own.
func (a *analysis) hint(s site) string {
	if s.call == nil || (s.kind == wrapped && shells[baseName(s.wrapper)]) {
		return GenericHint
	}
	start := 0
	for i, w := range s.call.Args {
		if v, why := literal(w); why == "" && isName(v) {
			start = i
			break
		}
		if w.Pos() == s.pos {
			start = i
		}
	}
	words := []string{Name}
	for _, w := range s.call.Args[start+1:] {
		v, why := literal(w)
		if why != "" {
			words = append(words, "'<the value of "+a.text(w)+">'")
			continue
		}
		words = append(words, Quote(v))
	}
	if len(words) == 1 {
		return GenericHint
	}
	return strings.Join(words, " ")
}

// Quote returns s as one shell word: unchanged when it is plain, else in
// single quotes.
func Quote(s string) string {
	if s != "" && strings.IndexFunc(s, func(r rune) bool {
		return !(r >= 'a' && r <= 'z' || r >= 'A' && r <= 'Z' || r >= '0' && r <= '9' || strings.ContainsRune("_-./,:=@%+", r))
	}) < 0 {
		return s
	}
	return "'" + strings.ReplaceAll(s, "'", `'\''`) + "'"
}

// literal returns a word's value after quote removal. When the word would
// need expansion, why names the kind of expansion and val is meaningless.
func literal(w *syntax.Word) (val, why string) {
	braced := syntax.Word{Parts: slices.Clone(w.Parts)}
	if syntax.SplitBraces(&braced) && expandsBraces(braced.Parts) {
		return "", "brace expansion"
	}
	var b strings.Builder
	for i, part := range w.Parts {
		switch p := part.(type) {
		case *syntax.Lit:
			if why := unquotedLit(&b, p.Value, i == 0); why != "" {
				return "", why
			}
		case *syntax.SglQuoted:
			if p.Dollar {
				return "", "ANSI-C quoting ($'…'); use plain single quotes"
			}
			b.WriteString(p.Value)
		case *syntax.DblQuoted:
			if p.Dollar {
				return "", `locale quoting ($"…")`
			}
			for _, dp := range p.Parts {
				lit, ok := dp.(*syntax.Lit)
				if !ok {
					return "", expansionName(dp)
				}
				doubleQuotedLit(&b, lit.Value)
			}
		default:
			return "", expansionName(part)
		}
	}
	return b.String(), ""
}

// expandsBraces reports whether split word parts hold a brace expansion
// that bash would expand: a sequence, or two or more elements ({} and {a}
// stay literal).
func expandsBraces(parts []syntax.WordPart) bool {
	for _, p := range parts {
		if b, ok := p.(*syntax.BraceExp); ok {
			if b.Sequence || len(b.Elems) > 1 {
				return true
			}
			for _, e := range b.Elems {
				if expandsBraces(e.Parts) {
					return true
				}
			}
		}
	}
	return false
}

func expansionName(p syntax.WordPart) string {
	switch p.(type) {
	case *syntax.ParamExp:
		return "parameter expansion"
	case *syntax.CmdSubst:
		return "command substitution"
	case *syntax.ArithmExp:
		return "arithmetic expansion"
	case *syntax.ProcSubst:
		return "process substitution"
	case *syntax.ExtGlob:
		return "an extended glob"
	case *syntax.BraceExp:
		return "brace expansion"
	default:
		return "expansion"
	}
}

// unquotedLit appends an unquoted literal's value, removing backslashes, and
// names any expansion it would undergo: a glob or a tilde.
func unquotedLit(b *strings.Builder, s string, first bool) string {
	for i := 0; i < len(s); i++ {
		c := s[i]
		switch {
		case c == '\\' && i+1 == len(s):
			// Only the end of the text can follow a backslash that ends
			// a literal, and bash -c keeps one that escapes nothing.
			b.WriteByte(c)
		case c == '\\':
			i++
			if s[i] != '\n' {
				b.WriteByte(s[i])
			}
		case c == '*' || c == '?' || c == '[':
			return "pathname expansion (the glob character " + string(c) + ")"
		case c == '~' && ((first && i == 0) || (i > 0 && (s[i-1] == '=' || s[i-1] == ':'))):
			return "tilde expansion"
		default:
			b.WriteByte(c)
		}
	}
	return ""
}

// doubleQuotedLit appends a literal inside double quotes, where a backslash
// escapes only $ ` " \ and a newline.
func doubleQuotedLit(b *strings.Builder, s string) {
	for i := 0; i < len(s); i++ {
		if s[i] == '\\' && i+1 < len(s) {
			switch s[i+1] {
			case '$', '`', '"', '\\':
				b.WriteByte(s[i+1])
				i++
				continue
			case '\n':
				i++
				continue
			}
		}
		b.WriteByte(s[i])
	}
}
