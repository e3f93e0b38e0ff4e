package shellparse

import (
	"strings"
	"testing"
)

type row struct {
	src  string
	kind Kind
	want string // invocation: args joined by "|"; refused: a part of the reason
}

const (
	O = Ordinary
	I = Invocation
	R = Refused
)

var rows = []row{
	// Plain invocations.
	{"spear-capability list", I, "list"},
	{"spear-capability", I, ""},
	{"  spear-capability   list  ", I, "list"},
	{"spear-capability describe tracker/search_issues", I, "describe|tracker/search_issues"},
	{`spear-capability invoke tracker/search '{"q": "boot loop"}'`, I, `invoke|tracker/search|{"q": "boot loop"}`},
	{`spear-capability invoke tracker/search "{\"q\": \"x\"}"`, I, `invoke|tracker/search|{"q": "x"}`},
	{`spear-capability invoke t/x '{"q": "it'\''s"}'`, I, `invoke|t/x|{"q": "it's"}`},
	{`spear-capability invoke t/x {}`, I, `invoke|t/x|{}`},
	{`spear-capability invoke t/x '{"a":[1,2]}'`, I, `invoke|t/x|{"a":[1,2]}`},
	{`spear-capability invoke t/x "{\"cost\": \"\$5\"}"`, I, `invoke|t/x|{"cost": "$5"}`},
	{`spear-capability invoke t/x "a\b"`, I, `invoke|t/x|a\b`},
	{`spear-capability invoke t/x a\ b`, I, `invoke|t/x|a b`},
	{`spear-capability invoke t/x ''`, I, `invoke|t/x|`},
	{`spear-capability list;`, I, "list"},
	{"spear-capability list # show the index", I, "list"},
	{"# a comment\nspear-capability list\n", I, "list"},
	{"\n\n  spear-capability list\n\n", I, "list"},
	{"spear-capability list\n# trailing comment", I, "list"},
	{`'spear-capability' list`, I, "list"},
	{`"spear-capability" list`, I, "list"},
	{`\spear-capability list`, I, "list"},
	{`spear-capa"bility" list`, I, "list"},
	{`spear-'capa'bility list`, I, "list"},
	{`spear\-capability list`, I, "list"},
	{`/usr/local/bin/spear-capability list`, I, "list"},
	{`./spear-capability list`, I, "list"},
	{`../bin/spear-capability list`, I, "list"},
	{`"/opt/x y/spear-capability" list`, I, "list"},
	{`spear-capability invoke t/x '{"k":"a=b:c"}'`, I, `invoke|t/x|{"k":"a=b:c"}`},
	{`spear-capability invoke t/x 'a*b?[c]'`, I, `invoke|t/x|a*b?[c]`},
	{`spear-capability invoke t/x '~'`, I, `invoke|t/x|~`},
	{`spear-capability invoke t/x a~b`, I, `invoke|t/x|a~b`},
	{`spear-capability invoke t/x '{a,b}'`, I, `invoke|t/x|{a,b}`},
	{`spear-capability invoke t/x '$(rm -rf /)'`, I, `invoke|t/x|$(rm -rf /)`},
	{"spear-capability invoke t/x '" + strings.Repeat("x", 5000) + "'", I, "invoke|t/x|" + strings.Repeat("x", 5000)},
	{`spear-capability --help`, I, "--help"},
	{"\tspear-capability\tlist", I, "list"},
	{`spear-capability invoke t/x a\`, I, `invoke|t/x|a\`}, // bash -c keeps a backslash that escapes nothing

	// Ordinary text: the name where no shell runs it.
	{"", O, ""},
	{"ls -la", O, ""},
	{"echo hello; exit 3", O, ""},
	{"grep spear-capability notes.txt", O, ""},
	{"grep -r 'spear-capability' .", O, ""},
	{`echo "spear-capability list"`, O, ""},
	{"echo 'spear-capability list'", O, ""},
	{"# spear-capability list", O, ""},
	{"echo hi # spear-capability list", O, ""},
	{"spear-capability-foo list", O, ""},
	{"spear-capabilityx", O, ""},
	{"xspear-capability list", O, ""},
	{"/bin/spear-capability-old list", O, ""},
	{"spear-capability.sh list", O, ""},
	{"man spear-capability", O, ""},
	{"which spear-capability", O, ""},
	{"type spear-capability", O, ""},
	{"x=spear-capability", O, ""},
	{"export TOOL=spear-capability", O, ""},
	{"local x=spear-capability", O, ""},
	{"declare -a a=(spear-capability list)", O, ""},
	{"a=(spear-capability list)", O, ""},
	{"case $x in spear-capability) echo yes;; esac", O, ""},
	{"case spear-capability in *) echo yes;; esac", O, ""},
	{"cat <<'EOF'\nspear-capability list\nEOF", O, ""},
	{"cat <<\"EOF\"\n$(spear-capability list)\nEOF", O, ""},
	{"cat <<EOF\nspear-capability list\nEOF", O, ""},
	{"cat <<-EOF\n\tspear-capability list\n\tEOF", O, ""},
	// The words of let and of a declaration are a simple command's words to
	// bash: << there starts a here-document (TestHeredocsAsBash).
	{"let x<<EOF\nspear-capability list\nEOF", O, ""},
	{"let x<<EOF y\nspear-capability list\nEOF", O, ""},
	{"let x<<'EOF'\n$(spear-capability list)\nEOF", O, ""},
	{"let x<<-EOF\n\tspear-capability list\n\tEOF\necho after", O, ""},
	{"declare a[x<<EOF]=1\nspear-capability list\nEOF]=1", O, ""},
	{"local -i a[x<<EOF]\nspear-capability list\nEOF]", O, ""},
	{"f() { let x<<EOF\nspear-capability list\nEOF\n}", O, ""},
	{"echo $(let x<<EOF\nspear-capability list\nEOF\n)", O, ""},
	{"[[ $x == spear-capability ]]", O, ""},
	{"test spear-capability = x", O, ""},
	{"echo ${x:-spear-capability}", O, ""},
	{"echo $((1+2)) spear-capability", O, ""},
	{"ls /usr/bin/spear-capability", O, ""},
	{"printf '%s\\n' spear-capability", O, ""},
	{"git commit -m 'run spear-capability list'", O, ""},
	{"git log --grep=spear-capability", O, ""},
	{"sed -i s/spear-capability/x/ f", O, ""},
	{"awk '/spear-capability/' f", O, ""},
	{"echo spear-capability | wc -c", O, ""},
	{"for w in spear-capability list; do echo $w; done", O, ""},
	{"alias x=spear-capability", O, ""},
	{"bash -c 'grep spear-capability f'", O, ""},
	{"eval echo spear-capability", O, ""},
	{"echo \"$(echo spear-capability)\"", O, ""},
	{"xargs grep -l foo", O, ""},
	{"env FOO=1 make", O, ""},
	{"cd /tmp && ls", O, ""},
	{"if true; then echo ok; fi", O, ""},
	{"echo 'unterminated", O, ""},
	{"echo $((", O, ""},
	{"cat <<EOF\nno end", O, ""},
	{"echo \x00", O, ""},
	{"echo hi\r\n", O, ""},
	{"echo \"spear-\"capability", O, ""},
	{`spear-capability\`, O, ""}, // bash -c looks for a command named spear-capability\

	// Command positions.
	{"echo a; spear-capability list", R, "other commands"},
	{"spear-capability list; echo a", R, "other commands"},
	{"echo a\nspear-capability list", R, "other commands"},
	{"spear-capability list\necho a", R, "other commands"},
	{"spear-capability list\nspear-capability list", R, "2 spear-capability commands"},
	{"spear-capability list & ", R, "background"},
	{"sleep 1 & spear-capability list", R, "other commands"},
	{"echo x | spear-capability list", R, "pipeline (|)"},
	{"spear-capability list | cat", R, "pipeline (|)"},
	{"spear-capability list |& cat", R, "pipeline (|&)"},
	{"true && spear-capability list", R, "list (&&)"},
	{"false || spear-capability list", R, "list (||)"},
	{"(spear-capability list)", R, "subshell"},
	{"{ spear-capability list; }", R, "group { }"},
	{"echo `spear-capability list`", R, "command substitution"},
	{"echo $(spear-capability list)", R, "command substitution"},
	{"x=$(spear-capability list)", R, "command substitution"},
	{"cat <(spear-capability list)", R, "command substitution"},
	{"diff <(spear-capability list) >(spear-capability list)", R, "2 spear-capability"},
	{"tee >(spear-capability list)", R, "command substitution"},
	{"if spear-capability list; then :; fi", R, "if statement"},
	{"if true; then spear-capability list; fi", R, "if statement"},
	{"if true; then :; else spear-capability list; fi", R, "if statement"},
	{"while spear-capability list; do :; done", R, "loop"},
	{"until spear-capability list; do :; done", R, "loop"},
	{"for i in 1; do spear-capability list; done", R, "for loop"},
	{"for i in $(spear-capability list); do :; done", R, "for loop"},
	{"for ((i=0;i<1;i++)); do spear-capability list; done", R, "for loop"},
	{"case x in x) spear-capability list;; esac", R, "case statement"},
	{"case $(spear-capability list) in x) ;; esac", R, "case statement"},
	{"! spear-capability list", R, "negated"},
	{"time spear-capability list", R, "time command"},
	{"time -p spear-capability list", R, "time command"},
	{"f() { spear-capability list; }", R, "function definition"},
	{"function f { spear-capability list; }", R, "function definition"},
	{"spear-capability() { echo hijack; }", R, "defines a function"},
	{"function spear-capability { echo hijack; }", R, "defines a function"},
	{"X=1 spear-capability list", R, "assignment X=1"},
	{"spear-capability list > out.txt", R, "redirection (> out.txt)"},
	{"spear-capability list 2>&1", R, "redirection"},
	{"spear-capability list < in.txt", R, "redirection"},
	{"spear-capability invoke t/x <<< '{}'", R, "redirection"},
	{"spear-capability invoke t/x <<EOF\n{}\nEOF", R, "redirection"},
	{">out spear-capability list", R, "redirection"},
	{"[[ $(spear-capability list) ]]", R, "[[ ]] test"},
	{"(( $(spear-capability list) ))", R, "arithmetic command"},
	{"echo $(( $(spear-capability list) + 1 ))", R, "command substitution"},
	{"echo ${x:-$(spear-capability list)}", R, "command substitution"},
	{"echo ${x:=`spear-capability list`}", R, "command substitution"},
	{"a=([0]=$(spear-capability list))", R, "command substitution"},
	{"a=($(spear-capability list))", R, "command substitution"},
	{"cat <<< $(spear-capability list)", R, "command substitution"},
	{"cat <<EOF\n$(spear-capability list)\nEOF", R, "command substitution"},
	{"cat <<EOF\n`spear-capability list`\nEOF", R, "command substitution"},
	{"let x<<EOF\n$(spear-capability list)\nEOF", R, "command substitution"},
	{"let x<<EOF\nEOF\nspear-capability list", R, "runs other commands"},
	{"let x<<EOF\nspear-capability list", R, "does not parse"},
	{"declare -a b=(1) a[x<<EOF]=1\nspear-capability list\nEOF]=1", R, "does not parse"},
	{"let 'x<<EOF'\nspear-capability list\nEOF", R, "runs other commands"},
	{"let y=$((1<<2))\nspear-capability list", R, "runs other commands"},
	{"(( x<<EOF ))\nspear-capability list\nEOF", R, "runs other commands"},
	{"a[x<<EOF]=1\nspear-capability list\nEOF", R, "runs other commands"},
	{"echo $((x<<EOF))\nspear-capability list\nEOF", R, "runs other commands"},
	{"echo \"$(spear-capability list)\"", R, "command substitution"},
	{"declare x=$(spear-capability list)", R, "declaration"},
	{"export x=$(spear-capability list)", R, "declaration"},
	{"let x=$(spear-capability list)", R, "let command"},
	{"case x in $(spear-capability list)) ;; esac", R, "case statement"},
	{"coproc spear-capability list", R, "coproc"},
	{"echo a; (echo b; spear-capability list)", R, "other commands"},
	{"echo $(echo $(spear-capability list))", R, "command substitution"},

	// Wrappers and other shells.
	{"env spear-capability list", R, `behind "env"`},
	{"env -i FOO=1 spear-capability list", R, `behind "env"`},
	{"/usr/bin/env spear-capability list", R, `behind "/usr/bin/env"`},
	{"command spear-capability list", R, `behind "command"`},
	{"exec spear-capability list", R, `behind "exec"`},
	{"nohup spear-capability list", R, `behind "nohup"`},
	{"sudo spear-capability list", R, `behind "sudo"`},
	{"timeout 5 spear-capability list", R, `behind "timeout"`},
	{"nice -n 5 spear-capability list", R, `behind "nice"`},
	{"echo t/x | xargs spear-capability describe", R, `behind "xargs"`},
	{"find . -exec spear-capability list \\;", R, `behind "find"`},
	{"env $X spear-capability list", R, `behind "env"`},
	{"bash -c 'spear-capability list'", R, `behind "bash"`},
	// a wrapper in front of a shell whose text runs it
	{"exec bash -c 'spear-capability list'", R, `behind "exec bash"`},
	{"env X=1 bash -c 'spear-capability list'", R, `behind "env bash"`},
	{"command bash -c 'spear-capability list'", R, `behind "command bash"`},
	{"timeout 5 bash -c 'spear-capability list'", R, `behind "timeout bash"`},
	{"nohup /bin/sh -c 'spear-capability list'", R, `behind "nohup /bin/sh"`},
	{"nice -n 5 bash -lc 'spear-capability invoke a/b {}'", R, `behind "nice bash"`},
	{"exec bash -c 'echo hi'", O, ""},
	{"timeout 5 bash -c 'grep spear-capability notes'", O, ""},
	{"sh -c \"spear-capability list\"", R, `behind "sh"`},
	{"/bin/bash -lc 'echo; spear-capability list'", R, `behind "/bin/bash"`},
	{"eval 'spear-capability list'", R, `behind "eval"`},
	{"eval spear-capability list", R, `behind "eval"`},
	{"eval \"$(echo spear-capability)\"", R, `behind "eval"`},
	{"bash -c \"bash -c 'spear-capability list'\"", R, `behind "bash"`},
	{"bash -c '$((spear-capability) )'", R, `behind "bash"`},
	{"bash <<EOF\nspear-capability list\nEOF", R, `behind "bash"`},
	{"sh <<'EOF'\nspear-capability list\nEOF", R, `behind "sh"`},
	{"bash <<< 'spear-capability list'", R, `behind "bash"`},
	{"bash <<EOF\ngrep spear-capability f\nEOF", O, ""},
	{"cat <<< 'spear-capability list'", O, ""},

	// Words that would need expansion.
	{"spear-capability invoke t/x $ARGS", R, "$ARGS needs parameter expansion"},
	{"spear-capability invoke t/x \"$ARGS\"", R, "parameter expansion"},
	{"spear-capability invoke t/x ${ARGS}", R, "parameter expansion"},
	{"spear-capability invoke $(echo t/x) '{}'", R, "command substitution"},
	{"spear-capability invoke `echo t/x` '{}'", R, "command substitution"},
	{"spear-capability invoke t/x $((1+1))", R, "arithmetic expansion"},
	{"spear-capability invoke t/x *.json", R, "glob character *"},
	{"spear-capability invoke t/x file?", R, "glob character ?"},
	{"spear-capability invoke t/x [ab]", R, "glob character ["},
	{"spear-capability describe ~/x", R, "tilde expansion"},
	{"spear-capability describe ~", R, "tilde expansion"},
	{"spear-capability invoke t/x a=~/b", R, "tilde expansion"},
	{"spear-capability invoke t/x {a,b}", R, "brace expansion"},
	{"spear-capability invoke t/x {1..3}", R, "brace expansion"},
	{"spear-capability invoke t/x $'{\\n}'", R, "ANSI-C quoting"},
	{"spear-capability invoke t/x $\"x\"", R, "locale quoting"},
	{"spear-capability invoke t/x <(echo {})", R, "process substitution"},
	{"spear-capability invoke t/x @(a|b)", R, "extended glob"},
	{"spear-capability$X list", R, "command word spear-capability$X needs expansion"},
	{"{spear-capability,x} list", R, "command word {spear-capability,x} needs expansion"},
	{"spear-capability* list", R, "needs expansion"},
	{"$(echo spear-capability) list", R, "needs expansion"},

	// Command words bash expands to the name: ANSI-C quoting, braces and
	// quotes are settled; an expansion that cannot be, and could spell
	// the name, is refused.
	{`$'spear\x2dcapability' list`, R, `command word $'spear\x2dcapability' needs expansion`},
	{`spear-capabilit{y,} list`, R, "command word spear-capabilit{y,} needs expansion"},
	{`spear-capa$'bility' list`, R, "needs expansion"},
	{`$'\x73pear-capability' list`, R, "needs expansion"},
	{`$'\163pear-capability' list`, R, "needs expansion"},
	{`$'spear\055capability' list`, R, "needs expansion"},
	{`$'spear\u002dcapability' list`, R, "needs expansion"},
	{`$'spear\U0000002dcapability' list`, R, "needs expansion"},
	{`$'spear\x{2d}capability' list`, R, "needs expansion"},
	{`$'spear-capability\x00tail' list`, R, "needs expansion"},
	{`spear-$'capa'"bility" list`, R, "needs expansion"},
	{`/opt/bin/$'spear\x2dcapability' list`, R, "needs expansion"},
	{`sp{e,}ar-capability list`, R, "needs expansion"},
	{`{s,}pear-capability list`, R, "needs expansion"},
	{`{,spear-capability} list`, R, "needs expansion"},
	{`spear-capabilit{x..z} list`, R, "needs expansion"},
	{`spear-capa$X list`, R, "command word spear-capa$X needs expansion"},
	{`${P}-capability list`, R, "needs expansion"},
	{`"spear-capa"$(echo bility) list`, R, "needs expansion"},
	{`spear-capabilit? list`, R, "needs expansion"},
	{`spear-capabilit[y] list`, R, "needs expansion"},
	{`$DIR/spear-capa$'bility' list`, R, "needs expansion"},
	{`echo a; $'spear\x2dcapability' list`, R, "needs expansion"},
	{`echo $($'spear\x2dcapability' list)`, R, "needs expansion"},
	{`env $'spear\x2dcapability' list`, R, `behind "env"`},
	{`bash -c $'spear\x2dcapability list'`, R, `behind "bash"`},
	{`eval $'spear\x2dcapability list'`, R, `behind "eval"`},
	{`bash <<< $'spear\x2dcapability list'`, R, `behind "bash"`},
	{`echo $'x'`, O, ""},
	{`echo $'spear\x2dcapability list'`, O, ""},
	{`printf '%s\n' spear-capabilit{y,}`, O, ""},
	{`ls {a,b}`, O, ""},
	{`{a,b} c`, O, ""},
	{`$'\x6c\x73' -la`, O, ""},
	{`spear-capabilit{x,z} list`, O, ""},
	{`spear-capabilities list`, O, ""},
	{`$EDITOR notes.txt`, O, ""},
	{`"$@"`, O, ""},
	{`./$SCRIPT --flag`, O, ""},
	{`$HOME/bin/tool x`, O, ""},
	{`python$V script.py`, O, ""},
	{`${CC:-cc} -o x x.c`, O, ""},
	{`[ -f x ] && echo y`, O, ""},
	{`~/bin/tool`, O, ""},
	{`./*.sh`, O, ""},
	{`echo ${x,,}`, O, ""},
	{`awk '{print $1}' f`, O, ""},
	{`find . -name 's*' -exec grep -l x {} +`, O, ""},
	{`bash -c $'echo spear\x2dcapability'`, O, ""},
	{"echo $((  ))", O, ""},

	// One line only.
	{"spear-capability invoke t/x \\\n '{}'", R, "backslash"},
	{"spear-capability invoke t/x '{\n}'", R, "spans lines"},
	{"spear-capability invoke t/x \"{\n}\"", R, "spans lines"},

	// Fail closed: mentions the name and does not parse, or holds CR or NUL.
	{"$((spear-capability) )", R, "does not parse"},
	{"! ! spear-capability list", R, "does not parse"},
	{"time ! spear-capability list", R, "does not parse"},
	{"spear-capability list '", R, "does not parse"},
	{"spear-capability list )", R, "does not parse"},
	{"echo 'x\nspear-capability list", R, "does not parse"},
	{"if spear-capability list", R, "does not parse"},
	{"spear-capability list\r", R, "carriage return"},
	{"spear-capability list\r\n", R, "carriage return"},
	{"echo \\\r\nspear-capability list", R, "carriage return"},
	{"spear-capability list\x00", R, "NUL byte"},
	{"echo spear-capa\x00bility", R, "NUL byte"},
	{`spear-capability invoke t/x {a}`, I, `invoke|t/x|{a}`},
	{"spear-capa'bility", R, "does not parse"},
	{" ()0spear-capability", O, ""},
	{"() spear-capability list", R, "function definition"},
}

func TestClassify(t *testing.T) {
	if len(rows) < 150 {
		t.Fatalf("the table has %d rows; keep at least 150", len(rows))
	}
	for _, r := range rows {
		v := Classify(r.src)
		if v.Kind != r.kind {
			t.Errorf("%q: got %s, want %s (%v)", r.src, v.Kind, r.kind, v.Refusal)
			continue
		}
		switch r.kind {
		case Invocation:
			if got := strings.Join(v.Args, "|"); got != r.want {
				t.Errorf("%q: args %q, want %q", r.src, got, r.want)
			}
		case Refused:
			if v.Refusal == nil || !strings.Contains(v.Refusal.Error(), r.want) {
				t.Errorf("%q: refusal %v, want it to say %q", r.src, v.Refusal, r.want)
			}
			if v.Refusal != nil && !strings.HasPrefix(v.Refusal.Hint, Name) {
				t.Errorf("%q: hint %q does not show the command", r.src, v.Refusal.Hint)
			}
		}
	}
}

func TestHints(t *testing.T) {
	for src, want := range map[string]string{
		"echo x | spear-capability invoke t/x '{\"a\": 1}'": `spear-capability invoke t/x '{"a": 1}'`,
		"spear-capability invoke t/x $ARGS":                 `spear-capability invoke t/x '<the value of $ARGS>'`,
		"env spear-capability describe t/x":                 `spear-capability describe t/x`,
		"spear-capability list > out":                       `spear-capability list`,
		"bash -c 'spear-capability list'":                   GenericHint,
	} {
		v := Classify(src)
		if v.Refusal == nil || v.Refusal.Hint != want {
			t.Errorf("%q: hint %+v, want %q", src, v.Refusal, want)
		}
	}
}

func TestMentions(t *testing.T) {
	for src, want := range map[string]bool{
		"spear-capability": true, `spear-capa"bility"`: true, `s\pear-capability`: true,
		`'spear'-'capability'`: true, "spear capability": false, "spear-capabilit": false, "": false,
		`$'spear\x2dcapability'`: true, `spear-capabilit{y,}`: true, `spear-capa$'bility'`: true,
		`{x,spear-capability}`: true, `$'\163pear-capability`: true, `echo $'x' spear-capa`: false,
		`spear-capabilit{x..z}`: false,
	} {
		if Mentions(src) != want {
			t.Errorf("Mentions(%q) = %v", src, !want)
		}
	}
}

func TestQuote(t *testing.T) {
	for in, want := range map[string]string{"list": "list", "t/x": "t/x", "": "''", `{"a":1}`: `'{"a":1}'`, "it's": `'it'\''s'`} {
		if got := Quote(in); got != want {
			t.Errorf("Quote(%q) = %q, want %q", in, got, want)
		}
	}
}

func FuzzClassify(f *testing.F) {
	for _, r := range rows {
		f.Add(r.src)
	}
	f.Fuzz(func(t *testing.T, src string) {
		v := Classify(src)
		if !mayRun(src) && v.Kind != Ordinary {
			t.Fatalf("%q holds neither the name nor an expansion but is %s", src, v.Kind)
		}
		if v.Kind == Invocation && !Mentions(src) {
			t.Fatalf("%q is answered but does not mention the name", src)
		}
		if v.Kind == Refused && (v.Refusal == nil || v.Refusal.Why == "" || v.Refusal.Hint == "") {
			t.Fatalf("%q refused without a reason and a hint", src)
		}
		if v.Kind == Invocation {
			// The words of an invocation contain no newline: it stood on one line.
			for _, a := range v.Args {
				if strings.ContainsAny(a, "\n\x00") {
					t.Fatalf("%q: invocation word %q spans lines", src, a)
				}
			}
		}
	})
}

func BenchmarkClassifyTypical(b *testing.B) {
	src := `spear-capability invoke tracker/search_issues '{"query": "boot loop on rev B", "limit": 10}'`
	for i := 0; i < b.N; i++ {
		if Classify(src).Kind != Invocation {
			b.Fatal("not an invocation")
		}
	}
}

func BenchmarkClassifyOrdinary(b *testing.B) {
	src := `go test -race ./... 2>&1 | tee /tmp/test.log | grep -v '^ok'`
	for i := 0; i < b.N; i++ {
		if Classify(src).Kind != Ordinary {
			b.Fatal("not ordinary")
		}
	}
}

func benchLong(b *testing.B, n int) {
	src := "spear-capability invoke t/x '" + strings.Repeat(`{"k":"v"},`, n/10) + "'"
	b.SetBytes(int64(len(src)))
	b.ResetTimer()
	for i := 0; i < b.N; i++ {
		if Classify(src).Kind != Invocation {
			b.Fatal("not an invocation")
		}
	}
}

func BenchmarkClassify10KB(b *testing.B)  { benchLong(b, 10_000) }
func BenchmarkClassify100KB(b *testing.B) { benchLong(b, 100_000) }

func BenchmarkClassifyOrdinaryExpansion(b *testing.B) {
	src := `for f in $(git ls-files '*.go'); do gofmt -l "$f"; done 2>&1 | head -${N:-20}`
	for i := 0; i < b.N; i++ {
		if Classify(src).Kind != Ordinary {
			b.Fatal("not ordinary")
		}
	}
}
