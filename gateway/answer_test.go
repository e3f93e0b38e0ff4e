package gateway

import (
	"context"
	"fmt"
	"io"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"spear/audit"
	"spear/outcome"
	"spear/present"
)

// TestAnswerWords: the words of a command are checked before the turn is
// opened; each refusal shows the command written the right way, and is
// recorded with the words.
func TestAnswerWords(t *testing.T) {
	d := newDeployment(t)
	d.register(with(fake("notes"), "read", []string{"echo"}))
	for _, tc := range []struct {
		args []string
		want string
	}{
		{nil, "spear-capability: refused: spear-capability needs a command: list, describe or invoke\nspear-capability: hint: spear-capability list\n"},
		{[]string{"list", "all"}, "spear-capability: refused: list takes no arguments\nspear-capability: hint: spear-capability list\n"},
		{[]string{"describe"}, "spear-capability: refused: describe takes one capability name\nspear-capability: hint: spear-capability describe <provider>/<tool>\n"},
		{[]string{"describe", "a/b", "c/d"}, "spear-capability: refused: describe takes one capability name\nspear-capability: hint: spear-capability describe <provider>/<tool>\n"},
		{[]string{"invoke"}, "spear-capability: refused: invoke takes a capability name and one JSON object, found 0 words; put the whole JSON object in single quotes\nspear-capability: hint: spear-capability invoke <provider>/<tool> '<arguments as one JSON object>'\n"},
		{[]string{"invoke", "notes/echo", `{"text":`, `"hi"}`}, "spear-capability: refused: invoke takes a capability name and one JSON object, found 3 words; put the whole JSON object in single quotes\nspear-capability: hint: spear-capability invoke <provider>/<tool> '<arguments as one JSON object>'\n"},
		{[]string{"check"}, "spear-capability: refused: check is an operator's command and is not answered inside a turn\nspear-capability: hint: spear-capability list\n"},
		{[]string{"audit", "--follow"}, "spear-capability: refused: audit is an operator's command and is not answered inside a turn\nspear-capability: hint: spear-capability list\n"},
		{[]string{"lsit"}, "spear-capability: refused: \"lsit\" is not a command inside a turn; use list, describe or invoke\nspear-capability: hint: spear-capability list\n"},
		{[]string{"\x1b[2J" + strings.Repeat("x", 100)}, "spear-capability: refused: \"" + strings.Repeat("x", 39) + "…\" is not a command inside a turn; use list, describe or invoke\nspear-capability: hint: spear-capability list\n"},
	} {
		before := len(d.events(audit.CapabilityRefused))
		st, out, errs := d.answer(tc.args...)
		if st != outcome.ExitRefused || out != "" || errs != tc.want {
			t.Errorf("%q: %d %q\n%q\nwant\n%q", tc.args, st, out, errs, tc.want)
		}
		refs := d.events(audit.CapabilityRefused)
		if len(refs) != before+1 {
			t.Errorf("%q: the refusal was not recorded", tc.args)
			continue
		}
		ref := refs[len(refs)-1]
		words := tc.args
		if words == nil {
			words = []string{}
		}
		wantField(t, ref, "words", jsonOf(words))
		wantField(t, ref, "why", jsonOf(strings.TrimPrefix(strings.SplitN(tc.want, "\n", 2)[0], "spear-capability: refused: ")))
		if ref.Session != "s1" || ref.Turn != "t1" {
			t.Errorf("%q: recorded for session %q turn %q", tc.args, ref.Session, ref.Turn)
		}
	}
	if n := d.connects.Load(); n != 0 {
		t.Errorf("refused words started %d providers", n)
	}
}

// TestAnswerHelp: help needs no turn at all.
func TestAnswerHelp(t *testing.T) {
	d := newDeployment(t)
	os.Remove(d.g.Settings.TurnFile)
	for _, word := range []string{"help", "-h", "--help"} {
		st, out, errs := d.answer(word)
		if st != outcome.ExitOK || out != present.TurnUsage || errs != "" {
			t.Errorf("%s: %d %q %q", word, st, out, errs)
		}
	}
}

// TestAnswerOpenRefusalRecorded: a command refused because the turn cannot
// be opened is recorded with its words and the full cause, which the turn
// is not told.
func TestAnswerOpenRefusalRecorded(t *testing.T) {
	d := newDeployment(t)
	d.register(fake("notes"))
	d.writeFile(d.g.Settings.ProjectsFile, "{")
	st, _, errs := d.answer("invoke", "notes/echo", `{"text": "x"}`)
	if st != outcome.ExitRefused || strings.Contains(errs, d.g.Settings.ProjectsFile) {
		t.Errorf("%d %q", st, errs)
	}
	ref := d.lastEvent(audit.CapabilityRefused)
	wantField(t, ref, "words", `["invoke","notes/echo","{\"text\": \"x\"}"]`)
	if why, _ := ref.Fields["why"].(string); !strings.HasPrefix(why, d.g.Settings.ProjectsFile+":1:1: not valid JSON") {
		t.Errorf("recorded why %q", why)
	}
	if ref.Session != "s1" || ref.Turn != "t1" {
		t.Errorf("recorded for session %q turn %q", ref.Session, ref.Turn)
	}
}

// TestRecordRefusal: a submission the terminal refused is recorded for
// the turn, or with no session and turn when there is no readable turn
// file; a trail that cannot be opened is an error.
func TestRecordRefusal(t *testing.T) {
	d := newDeployment(t)
	ctx := context.Background()
	if err := d.g.RecordRefusal(ctx, []string{"list", "|", "sh"}, "", "a pipeline is not allowed"); err != nil {
		t.Fatal(err)
	}
	e := d.lastEvent(audit.CapabilityRefused)
	if e.Session != "s1" || e.Turn != "t1" {
		t.Errorf("session %q turn %q", e.Session, e.Turn)
	}
	wantField(t, e, "words", `["list","|","sh"]`)
	wantField(t, e, "why", `"a pipeline is not allowed"`)

	os.Remove(d.g.Settings.TurnFile)
	if err := d.g.RecordRefusal(ctx, nil, "spear-capability list <<EOF\nx", "not parsed"); err != nil {
		t.Fatal(err)
	}
	e = d.lastEvent(audit.CapabilityRefused)
	if e.Session != "" || e.Turn != "" {
		t.Errorf("without a turn file: session %q turn %q", e.Session, e.Turn)
	}
	wantField(t, e, "words", `[]`)
	wantField(t, e, "text", `"spear-capability list \u003c\u003cEOF\nx"`)
	if err := d.g.RecordRefusal(ctx, nil, strings.Repeat("é", 3000), "long"); err != nil {
		t.Fatal(err)
	}
	if text := d.lastEvent(audit.CapabilityRefused).Fields["text"].(string); len(text) > maxRefusedText+len("…") || !strings.HasSuffix(text, "é…") {
		t.Errorf("a long text is kept as %d bytes ending %q", len(text), text[len(text)-8:])
	}

	blocker := filepath.Join(d.dir, "blocker")
	d.writeFile(blocker, "")
	d.g.Settings.AuditFile = filepath.Join(blocker, "audit.jsonl")
	if err := d.g.RecordRefusal(ctx, nil, "", "x"); err == nil {
		t.Errorf("no error from a trail that cannot be opened")
	}
	if n := d.connects.Load(); n != 0 {
		t.Errorf("%d starts", n)
	}
}

// TestEveryRefusalIsAudited: each refused command, whatever refuses it, is
// exactly one capability_refused event.
func TestEveryRefusalIsAudited(t *testing.T) {
	dir := t.TempDir()
	ws := filepath.Join(dir, "ws")
	os.MkdirAll(ws, 0o755)
	write := func(name, content string) { os.WriteFile(filepath.Join(dir, name), []byte(content), 0o644) }
	write("projects.json", fmt.Sprintf(`{"projects": [{"name": "p", "root": %q}]}`, ws))
	write("capabilities.json", `{"providers": []}`)
	write("turn.json", fmt.Sprintf(`{"session": "s", "turn": "t", "workspace": %q, "class": "implementation"}`, ws))
	env := map[string]string{"HOME": dir, "SPEAR_CONFIG_DIR": dir, "SPEAR_STATE_DIR": filepath.Join(dir, "state"), "SPEAR_TURN_FILE": filepath.Join(dir, "turn.json")}
	g := New(func(k string) string { return env[k] })
	commands := [][]string{
		{}, {"frobnicate"}, {"list", "extra"}, {"context"}, {"check"}, {"invoke", "a", "b", "c", "d"}, {"invoke"},
		{"describe"}, {"describe", "a/b"}, {"invoke", "a/b", "{}"}, {"invoke", "nameless", "{}"},
	}
	for _, args := range commands {
		var stderr strings.Builder
		if st := g.Answer(context.Background(), args, io.Discard, &stderr); st != 2 {
			t.Errorf("%q: status %d", args, st)
		}
	}
	f, err := os.Open(filepath.Join(dir, "state", "audit.jsonl"))
	if err != nil {
		t.Fatal(err)
	}
	defer f.Close()
	refused := 0
	audit.Read(f, func(e audit.Entry) error {
		if e.Event == audit.CapabilityRefused {
			refused++
		}
		return nil
	}, nil)
	if refused != len(commands) {
		t.Errorf("%d capability_refused events for %d refusals", refused, len(commands))
	}
}
