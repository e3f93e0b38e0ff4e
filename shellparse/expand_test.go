package shellparse

import (
	"strings"
	"testing"

	"mvdan.cc/sh/v3/syntax"
)

func parseWord(t testing.TB, src string) *syntax.Word {
	t.Helper()
	f, err := syntax.NewParser(syntax.Variant(syntax.LangBash)).Parse(strings.NewReader(src), "")
	if err != nil {
		t.Fatalf("%q: %v", src, err)
	}
	return f.Stmts[0].Cmd.(*syntax.CallExpr).Args[0]
}

func TestCouldBeName(t *testing.T) {
	for src, want := range map[string]bool{
		"spear-capability": true, "/bin/spear-capability": true, "$X/spear-capability": true,
		"spear-capa$X": true, "${X}bility": true, "sp${E}ar-capability": true, "spear-capabilit?": true,
		"spear-capabilit[xyz]": true, "$'spear\\x2dcapability'": true, "spear-capabilit{y,}": true,
		"spear-capabilit{x..z}": true, "~/spear-capa$X": true, "${X}y": true,
		"$X": false, `"$@"`: false, "./$X": false, "$HOME/bin/tool": false, "python$V": false,
		"spear-capabilit{x,z}": false, "${X}capabilities": false, "/bin/$X": false, "ls": false,
		"spear-capa$X/tool": false, "*.sh": false,
	} {
		w := parseWord(t, src)
		got := false
		for _, s := range spellings(w) {
			got = got || couldBeName(s)
		}
		if got != want {
			t.Errorf("%s could be the name: %v, want %v (spellings %v)", src, got, want, spellings(w))
		}
	}
}

func TestANSIC(t *testing.T) {
	for in, want := range map[string]string{
		`spear\x2dcapability`: "spear-capability", `\163`: "s", `\0101`: "\x081", `\x4`: "\x04",
		`\xg`: `\xg`, `\x{2d}`: "-", `\u002d`: "-", `\u00e9`: "é", `\U`: `\U`, `\q`: `\q`, `\cA`: "\x01",
		`\c?`: "\x7f", `\c`: `\c`, `a\0b`: "a", `\'\"\?\\`: `'"?\`, `x\`: `x\`,
	} {
		if got := ansiC(in); got != want {
			t.Errorf("$'%s' is %q, want %q", in, got, want)
		}
	}
}
