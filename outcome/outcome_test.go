package outcome

import (
	"errors"
	"fmt"
	"io/fs"
	"testing"
)

// TestExitStatuses pins the statuses docs/design.md ("Outcomes") promises a
// turn: harnesses branch on these numbers.
func TestExitStatuses(t *testing.T) {
	for got, want := range map[int]int{ExitOK: 0, ExitToolError: 1, ExitRefused: 2, ExitUnavailable: 3} {
		if got != want {
			t.Errorf("exit status %d, want %d", got, want)
		}
	}
	if InvokeForm != "spear-capability invoke <provider>/<tool> '<arguments as one JSON object>'" || ListForm != "spear-capability list" {
		t.Errorf("forms: %q, %q", InvokeForm, ListForm)
	}
}

func TestRefusalError(t *testing.T) {
	for _, tc := range []struct {
		r    Refusal
		want string
	}{
		{Refusal{Why: "list takes no arguments"}, "list takes no arguments"},
		{Refusal{Why: "a pipe is not allowed", Line: 2, Col: 7}, "a pipe is not allowed (line 2, column 7)"},
		// A column without a line places nothing.
		{Refusal{Why: "whole text", Col: 4}, "whole text"},
		// Neither the hint nor the operator's detail is part of the message.
		{Refusal{Why: "why", Hint: "spear-capability list", Detail: "/etc/spear/capabilities.json"}, "why"},
	} {
		if got := tc.r.Error(); got != tc.want {
			t.Errorf("%+v: %q, want %q", tc.r, got, tc.want)
		}
	}
}

func TestRefused(t *testing.T) {
	r := Refused("spear-capability describe a/b", "%s is not offered (%d)", "a/b", 3)
	if r.Why != "a/b is not offered (3)" || r.Hint != "spear-capability describe a/b" || r.Line != 0 || r.Detail != "" {
		t.Errorf("Refused: %+v", r)
	}
	// A format with no verbs is used as it is.
	if r := Refused("", "plain"); r.Why != "plain" || r.Hint != "" {
		t.Errorf("Refused: %+v", r)
	}
}

func TestUnavailableError(t *testing.T) {
	u := &Unavailable{Provider: "notes", Phase: "start", Reason: "could not be started", Detail: "starting /opt/notes: no such file"}
	if got := u.Error(); got != "notes: could not be started" {
		t.Errorf("Error() = %q: the detail or phase must not reach it", got)
	}
}

func TestStatus(t *testing.T) {
	refusal := &Refusal{Why: "no"}
	unavailable := &Unavailable{Provider: "p", Reason: "exited during tools/call"}
	for _, tc := range []struct {
		name string
		err  error
		want int
	}{
		{"nil", nil, ExitOK},
		{"refusal", refusal, ExitRefused},
		{"wrapped refusal", fmt.Errorf("answering: %w", refusal), ExitRefused},
		{"unavailable", unavailable, ExitUnavailable},
		{"wrapped unavailable", fmt.Errorf("calling: %w", fmt.Errorf("again: %w", unavailable)), ExitUnavailable},
		{"joined unavailable", errors.Join(errors.New("other"), unavailable), ExitUnavailable},
		{"other trouble", fs.ErrPermission, ExitRefused},
	} {
		if got := Status(tc.err); got != tc.want {
			t.Errorf("%s: Status = %d, want %d", tc.name, got, tc.want)
		}
	}
}

// TestWrapped: callers find the types through any wrapping.
func TestWrapped(t *testing.T) {
	err := fmt.Errorf("opening: %w", &Refusal{Why: "the audit trail cannot be written", Detail: "permission denied"})
	var r *Refusal
	if !errors.As(err, &r) || r.Detail != "permission denied" {
		t.Errorf("errors.As(%v) = %v, %+v", err, r != nil, r)
	}
	var u *Unavailable
	if errors.As(err, &u) {
		t.Errorf("a refusal is not an *Unavailable")
	}
	if err.Error() != "opening: the audit trail cannot be written" {
		t.Errorf("wrapped message %q", err.Error())
	}
}
