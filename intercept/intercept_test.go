package intercept

import (
	"bytes"
	"context"
	"errors"
	"io"
	"strings"
	"testing"

	"spear/shellparse"
)

// fakeGateway answers every invocation with status and records what it
// was asked; RecordRefusal fails with recordErr.
type fakeGateway struct {
	status    int
	recordErr error
	answered  [][]string
	refused   []string
}

func (g *fakeGateway) Answer(ctx context.Context, args []string, stdout, stderr io.Writer) int {
	g.answered = append(g.answered, args)
	io.WriteString(stdout, "answered "+strings.Join(args, "|")+"\n")
	return g.status
}

func (g *fakeGateway) RecordRefusal(ctx context.Context, args []string, text, reason string) error {
	g.refused = append(g.refused, reason)
	return g.recordErr
}

func TestRespond(t *testing.T) {
	cases := []struct {
		name     string
		src      string
		gw       *fakeGateway // nil: no gateway
		nested   bool
		status   int
		stdout   string
		stderr   []string // lines that must be on stderr, in this order
		answered string   // the words the gateway was asked to answer
		refused  int      // refusals it recorded
	}{
		{
			name: "answered", src: `spear-capability invoke t/x '{"a": 1}'`, gw: &fakeGateway{},
			stdout: "answered invoke|t/x|{\"a\": 1}\n", answered: `invoke|t/x|{"a": 1}`,
		},
		{
			name: "the gateway's status", src: "spear-capability describe t/x", gw: &fakeGateway{status: 3},
			status: 3, stdout: "answered describe|t/x\n", answered: "describe|t/x",
		},
		{
			name: "refused and recorded", src: "spear-capability list | cat", gw: &fakeGateway{},
			status: 2, refused: 1,
			stderr: []string{
				"spear-capability: refused: spear-capability is part of a pipeline (|); it must stand alone (line 1, column 1)",
				"spear-capability: hint: write it alone on one line: spear-capability list",
			},
		},
		{
			name: "refused, the record fails", src: "X=1 spear-capability list", gw: &fakeGateway{recordErr: errors.New("the audit trail cannot be written")},
			status: 2, refused: 1,
			stderr: []string{
				"spear-capability: warning: the audit trail cannot be written",
				"spear-capability: refused: spear-capability is preceded by the assignment X=1",
			},
		},
		{
			// Inside a turn's shell a refusal is not recorded (the trail
			// is out of reach there) and the turn learns why nothing runs.
			name: "refused and nested", src: "env spear-capability list", gw: &fakeGateway{}, nested: true,
			status: 2, refused: 0, stderr: []string{shellparse.Name + " was run by the turn's shell"},
		},
		{
			name: "refused without a gateway", src: "spear-capability list &",
			status: 2, stderr: []string{"spear-capability: refused: spear-capability is sent to the background"},
		},
		{
			name: "nested", src: "spear-capability list", gw: &fakeGateway{}, nested: true,
			status: 2, stderr: []string{shellparse.Name + " was run by the turn's shell", "  " + shellparse.GenericHint},
		},
		{
			name: "no gateway", src: "spear-capability list",
			status: 2, stderr: []string{"spear-capability: refused: no capability gateway is configured for this terminal"},
		},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			ic := &Interceptor{}
			if tc.gw != nil {
				ic.Gateway = tc.gw
			}
			asked := 0
			ic.Nested = func() bool { asked++; return tc.nested }
			var stdout, stderr bytes.Buffer
			status := ic.Respond(context.Background(), shellparse.Classify(tc.src), &stdout, &stderr)
			if status != tc.status || stdout.String() != tc.stdout {
				t.Errorf("status %d, stdout %q; want %d, %q", status, stdout.String(), tc.status, tc.stdout)
			}
			rest := stderr.String()
			for _, line := range tc.stderr {
				i := strings.Index(rest, line)
				if i < 0 {
					t.Fatalf("stderr %q does not go on with %q", stderr.String(), line)
				}
				rest = rest[i+len(line):]
			}
			if len(tc.stderr) == 0 && stderr.Len() > 0 {
				t.Errorf("stderr %q, want nothing", stderr.String())
			}
			if tc.gw != nil {
				var answered []string
				for _, a := range tc.gw.answered {
					answered = append(answered, strings.Join(a, "|"))
				}
				if strings.Join(answered, " ") != tc.answered || len(tc.gw.refused) != tc.refused {
					t.Errorf("answered %q, recorded %d refusals; want %q, %d", answered, len(tc.gw.refused), tc.answered, tc.refused)
				}
			}
			if asked != 1 {
				t.Errorf("asked %d times whether spear-term is nested, want once", asked)
			}
		})
	}
}

func TestRespondNilNested(t *testing.T) {
	g := &fakeGateway{}
	var stdout, stderr bytes.Buffer
	if st := (&Interceptor{Gateway: g}).Respond(context.Background(), shellparse.Classify("spear-capability list"), &stdout, &stderr); st != 0 || len(g.answered) != 1 {
		t.Errorf("status %d, answered %v; a nil Nested means never nested", st, g.answered)
	}
}
