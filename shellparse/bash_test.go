package shellparse

import (
	"bytes"
	"context"
	"os"
	"os/exec"
	"path/filepath"
	"slices"
	"strconv"
	"strings"
	"testing"
	"time"

	"mvdan.cc/sh/v3/syntax"
)

// quoteSeeds are argument texts whose quote removal is easy to get wrong.
var quoteSeeds = []string{
	`a\ b`, `"a\b"`, `"\$"`, `"\\"`, `"\""`, "\"\\`\"", `'it'\''s'`, `a"b"'c'd`, `\'`, `"\'"`, `'\'`,
	`x#y #z`, `a\#b`, `\\`, `\\\\`, `\"`, `'\\'`, `""`, `''""`, `"'"`, `"\!"`, `\!`, `!x`, `"!"`,
	`{}`, `{a}`, `a{b}c`, `{}x`, `{,}`, `a=b`, `=`, `a~`, `"~"`, `\~`, `\*`, `"*"`, `\?`, `\[`, `]`,
	`a$`, `"$"`, `"a$"`, `$`, `"a\`, `a\`, `"a\nb"`, `"\a"`, `--`, `-`, `'-n'`, `[[`, `]]`, `if`, `}`,
	`{`, `!`, `time`, `function`, `%s`, `^x`, "a\tb", "a\vb", "a\fb", "\u00a0", "é", "\xe2'", `"\xff"`,
	"\x01", "'\x01'", "\"\x01\"", "\\\x01", "\x7f", "'\x7f'", "\"\x7f\"", "\x1b[31m", `"{\"q\": \"x\"}"`,
	`'{"q": "boot loop"}'`, `invoke t/x '{"a":[1,2]}'`, `a\ `, `\ `, `" "`, `a;`, `a #`, `#`, `\#`,
	`{"a":1,"b":2}`, `\{a,b}`, `{a..}`, `a=''~/x`, `a=\~`, `"$ "`, `$/`, `{a}{b}`, `{a\,b}`, `a{b,c`,
	"a\\\nb", "'a\nb'", "a\n", `\é`,
}

// FuzzQuoteRemoval checks the classifier's quote removal against bash: for
// a spear-capability command whose words hold only literal text, single
// quotes, double quotes without $ or backquote, and backslashes, the words
// the classifier answers with are the argv bash -c passes. Such words may
// still hold glob, brace and tilde characters: the classifier refuses
// them, or bash leaves them as they are. Inputs bash rejects or the
// classifier refuses are skipped.
func FuzzQuoteRemoval(f *testing.F) {
	bash, err := exec.LookPath("bash")
	if err != nil {
		f.Skip("bash is needed to compare with")
	}
	// Files for a glob the classifier missed to match.
	dir := f.TempDir()
	for _, name := range []string{"a", "ab", "b", "x y"} {
		if err := os.WriteFile(filepath.Join(dir, name), nil, 0o644); err != nil {
			f.Fatal(err)
		}
	}
	for _, r := range rows {
		if args, ok := strings.CutPrefix(r.src, Name+" "); ok && r.kind == Invocation {
			f.Add(args)
		}
	}
	for _, s := range quoteSeeds {
		f.Add(s)
	}
	f.Fuzz(func(t *testing.T, args string) {
		src := Name + " " + args
		v, literal := Classify(src), literalCommand(src)
		if v.Kind == Invocation && !literal {
			t.Fatalf("%q: answered, but it is not one command of literal words", src)
		}
		if v.Kind != Invocation {
			t.Skip()
		}
		want, ok := bashWords(t, bash, dir, src)
		if !ok {
			t.Skip()
		}
		if !slices.Equal(v.Args, want) {
			t.Fatalf("%q: the classifier has the words %q, bash passes %q", src, v.Args, want)
		}
	})
}

// literalCommand reports whether src parses as one simple command with no
// redirection or assignment whose words hold only literal text and quotes,
// so that running it cannot do anything but call a command.
func literalCommand(src string) bool {
	f, err := syntax.NewParser(syntax.Variant(syntax.LangBash)).Parse(strings.NewReader(src), "")
	if err != nil || len(f.Stmts) != 1 {
		return false
	}
	stmt := f.Stmts[0]
	call, ok := stmt.Cmd.(*syntax.CallExpr)
	if !ok || len(stmt.Redirs) > 0 || stmt.Negated || stmt.Background || stmt.Coprocess || stmt.Disown || len(call.Assigns) > 0 {
		return false
	}
	literal := true
	for _, w := range call.Args {
		syntax.Walk(w, func(n syntax.Node) bool {
			switch n := n.(type) {
			case nil, *syntax.Word, *syntax.Lit:
			case *syntax.SglQuoted:
				literal = literal && !n.Dollar
			case *syntax.DblQuoted:
				literal = literal && !n.Dollar
			default:
				literal = false
			}
			return literal
		})
	}
	return literal
}

// bashWords runs src in bash -c, with spear-capability defined as a
// function that prints its arguments, and returns them. ok is false when
// bash rejects src.
func bashWords(t *testing.T, bash, dir, src string) (words []string, ok bool) {
	ctx, cancel := context.WithTimeout(context.Background(), 10*time.Second)
	defer cancel()
	script := Name + "() { builtin printf '%s\\0' \"$#\" \"$@\"; }\n" + src
	cmd := exec.CommandContext(ctx, bash, "--norc", "--noprofile", "-c", script)
	cmd.Dir = dir
	cmd.Env = []string{"PATH=" + os.Getenv("PATH"), "HOME=" + dir, "LC_ALL=C.UTF-8"}
	var stdout bytes.Buffer
	cmd.Stdout = &stdout
	if err := cmd.Run(); err != nil {
		if ctx.Err() != nil {
			t.Fatalf("%q: bash did not finish: %v", src, err)
		}
		return nil, false
	}
	fields := strings.Split(stdout.String(), "\x00")
	n, err := strconv.Atoi(fields[0])
	if err != nil || len(fields) != n+2 || fields[n+1] != "" {
		t.Fatalf("%q: bash printed %q, not a count and that many words", src, stdout.String())
	}
	return fields[1 : n+1], true
}

// spellingSeeds are words whose brace expansion or ANSI-C quoting is easy
// to get wrong.
var spellingSeeds = []string{
	`$'spear\x2dcapability'`, `spear-capabilit{y,}`, `spear-capa$'bility'`, `$'\163pear'`, `$'\0101'`,
	`$'\777'`, `$'\x41\x4'`, `$'\xg'`, `$'\x{41}'`, `$'\x{}'`, `$'\u0041'`, `$'\u00e9'`, `$'\U0001F600'`,
	`$'\U'`, `$'\q'`, `$'\c?'`, `$'\cA'`, `$'\ca'`, `$'\c\\x'`, `$'\c'`, `$'\e\E\a\b\f\n\r\t\v'`,
	`$'\'\"\?\\'`, `$'a\0b'c`, `$'a\x00b'c`, `$''`, `$'\'`, `{a,b}{c,d}`, `{a,{b,c}}`, `{a,b`, `a{,}`,
	`{,}`, `{"a,b",c}`, `{a\,b,c}`, `'{a,b}'`, `{a,'b,c'}`, `{a,b}$'\x41'`, `{$'a,b',c}`, `{a}`, `{}`,
	`x{a..c}`, `{a,b..c}`, `{a,"b"}`, `{a,$'b'}x`, `\{a,b}`, `{a,b\}`, `{a,b}}`, `{{a,b}`, `"{a,b}"`,
}

// FuzzSpellings checks the words the classifier settles against bash:
// for arguments whose every expansion it settles (brace lists, ANSI-C
// quoting, quote removal), the words it has are the argv bash passes,
// empty words aside. Arguments with anything it cannot settle are
// skipped, so bash never expands a parameter or runs a command here.
func FuzzSpellings(f *testing.F) {
	bash, err := exec.LookPath("bash")
	if err != nil {
		f.Skip("bash is needed to compare with")
	}
	dir := f.TempDir()
	for _, s := range spellingSeeds {
		f.Add(s)
	}
	for _, s := range quoteSeeds {
		f.Add(s)
	}
	f.Fuzz(func(t *testing.T, args string) {
		src := Name + " " + args
		if strings.ContainsAny(src, "\x00\r") {
			t.Skip()
		}
		file, err := syntax.NewParser(syntax.Variant(syntax.LangBash)).Parse(strings.NewReader(src), "")
		if err != nil || len(file.Stmts) != 1 {
			t.Skip()
		}
		stmt := file.Stmts[0]
		call, ok := stmt.Cmd.(*syntax.CallExpr)
		if !ok || len(stmt.Redirs) > 0 || stmt.Negated || stmt.Background || stmt.Coprocess || stmt.Disown || len(call.Assigns) > 0 {
			t.Skip()
		}
		var want []string
		for _, w := range call.Args[1:] {
			vals, ok := settledWords(w)
			if !ok {
				t.Skip()
			}
			want = append(want, vals...)
		}
		got, ok := bashWords(t, bash, dir, src)
		if !ok {
			t.Skip()
		}
		empty := func(s string) bool { return s == "" }
		want, got = slices.DeleteFunc(want, empty), slices.DeleteFunc(got, empty)
		if !slices.Equal(want, got) {
			t.Fatalf("%q: the classifier settles the words %q, bash passes %q", src, want, got)
		}
	})
}

// TestHeredocsAsBash runs the table's texts that hold << in bash, with
// spear-capability a function that says it ran: a text bash runs it in is
// never ordinary, and an ordinary one never runs it. mvdan.cc/sh and bash
// disagree about some of these here-documents (let x<<EOF).
func TestHeredocsAsBash(t *testing.T) {
	bash, err := exec.LookPath("bash")
	if err != nil {
		t.Skip("bash is needed to compare with")
	}
	dir := t.TempDir()
	for _, r := range rows {
		if !strings.Contains(r.src, "<<") {
			continue
		}
		ctx, cancel := context.WithTimeout(context.Background(), 10*time.Second)
		script := Name + "() { builtin echo __ran__; }\n" + r.src
		cmd := exec.CommandContext(ctx, bash, "--norc", "--noprofile", "-c", script)
		cmd.Dir = dir
		cmd.Env = []string{"PATH=" + os.Getenv("PATH"), "HOME=" + dir, "LC_ALL=C"}
		out, _ := cmd.Output()
		cancel()
		ran := strings.Contains(string(out), "__ran__")
		if v := Classify(r.src); ran && v.Kind == Ordinary {
			t.Errorf("%q: bash runs %s, but the classifier finds it ordinary", r.src, Name)
		} else if !ran && r.kind == Ordinary && v.Kind != Ordinary {
			t.Errorf("%q: bash does not run %s, but the classifier finds it %s", r.src, Name, v.Kind)
		}
	}
}
