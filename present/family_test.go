package present

import (
	"encoding/json"
	"strings"
	"testing"

	"spear/deploy"
	"spear/mcp"
	"spear/outcome"
)

// TestNewCapabilityClass: the registry's read key alone makes a READ;
// the server's annotations, whatever they claim, change nothing.
func TestNewCapabilityClass(t *testing.T) {
	yes, no := true, false
	p := &deploy.Provider{ID: "notes", Read: []string{"search"}}
	for _, tc := range []struct {
		tool string
		ann  *mcp.ToolAnnotations
		want deploy.Access
	}{
		{"search", nil, deploy.Read},
		{"search", &mcp.ToolAnnotations{ReadOnlyHint: &no, DestructiveHint: &yes}, deploy.Read},
		{"delete", nil, deploy.Write},
		{"delete", &mcp.ToolAnnotations{ReadOnlyHint: &yes, DestructiveHint: &no, IdempotentHint: &yes}, deploy.Write},
		{"Search", nil, deploy.Write}, // names are compared exactly
	} {
		c := NewCapability(p, mcp.Tool{Name: tc.tool, InputSchema: json.RawMessage(`{}`), Annotations: tc.ann})
		if c.Class != tc.want {
			t.Errorf("%s with %+v: class %s, want %s", tc.tool, tc.ann, c.Class, tc.want)
		}
	}
}

func TestNewCapabilityText(t *testing.T) {
	p := &deploy.Provider{ID: "notes"}
	c := NewCapability(p, mcp.Tool{
		Name:         "search",
		Title:        "Search\n  the\x1b[1m notes",
		Description:  "Finds notes.\x1b]0;owned\x07\nSecond line\u202e. " + strings.Repeat("x", 5000),
		InputSchema:  json.RawMessage("{\n  \"type\": \"object\",\n  \"properties\": {\"q\": {\"type\": \"string\", \"description\": \"\\u009b\"}}\n}"),
		OutputSchema: json.RawMessage(`{ "type": "object" }`),
	})
	if c.Name != "notes/search" || c.Provider != "notes" || c.Tool != "search" {
		t.Errorf("names: %+v", c)
	}
	if c.Title != "Search the notes" {
		t.Errorf("title %q", c.Title)
	}
	if !strings.HasPrefix(c.Description, "Finds notes.\nSecond line. xxx") || strings.ContainsAny(c.Description, "\x1b\x07\u202e") {
		t.Errorf("description not cleaned: %q", c.Description[:40])
	}
	if n := len([]rune(c.Description)); n != 4000 || !strings.HasSuffix(c.Description, "…") {
		t.Errorf("description of %d runes, ending %q; want 4000, cut", n, c.Description[len(c.Description)-5:])
	}
	if string(c.InputSchema) != `{"properties":{"q":{"description":"\u009b","type":"string"}},"type":"object"}` {
		t.Errorf("input schema %s", c.InputSchema)
	}
	if string(c.OutputSchema) != `{"type":"object"}` {
		t.Errorf("output schema %s", c.OutputSchema)
	}
	// The title falls back to the annotations' title, then the name.
	for _, tc := range []struct {
		tool mcp.Tool
		want string
	}{
		{mcp.Tool{Name: "a", Annotations: &mcp.ToolAnnotations{Title: "From annotations"}}, "From annotations"},
		{mcp.Tool{Name: "a", Title: "Own", Annotations: &mcp.ToolAnnotations{Title: "From annotations"}}, "Own"},
		{mcp.Tool{Name: "a"}, "a"},
		{mcp.Tool{Name: "a", Title: strings.Repeat("t", 300)}, strings.Repeat("t", 199) + "…"},
	} {
		tc.tool.InputSchema = json.RawMessage(`{}`)
		if got := NewCapability(p, tc.tool).Title; got != tc.want {
			t.Errorf("%+v: title %q, want %q", tc.tool, got, tc.want)
		}
	}
	// An absent or null output schema is none.
	for _, raw := range []json.RawMessage{nil, json.RawMessage(`null`)} {
		if c := NewCapability(p, mcp.Tool{Name: "a", InputSchema: json.RawMessage(`{}`), OutputSchema: raw}); c.OutputSchema != nil {
			t.Errorf("output schema %q became %q", raw, c.OutputSchema)
		}
	}
}

func TestCapabilityTokens(t *testing.T) {
	for _, tc := range []struct {
		c    Capability
		want int
	}{
		{Capability{}, 0},
		{Capability{Name: "a"}, 1},
		{Capability{Name: "abcd"}, 1},
		{Capability{Name: "abcde"}, 2},
		// name 3 + title 2 + description 4 + schema 2 = 11 bytes: 3 tokens
		{Capability{Name: "p/t", Title: "ab", Description: "abcd", InputSchema: json.RawMessage(`{}`), OutputSchema: json.RawMessage(`{"not":"counted"}`)}, 3},
	} {
		if got := tc.c.Tokens(); got != tc.want {
			t.Errorf("%+v: %d tokens, want %d", tc.c, got, tc.want)
		}
	}
}

// sized returns n capabilities whose token estimates add up to total.
func sized(n, total int) []Capability {
	cs := make([]Capability, n)
	for i := range cs {
		share := total / n
		if i < total%n {
			share++
		}
		name := "p/t" + string(rune('a'+i%26))
		cs[i] = Capability{Name: name, Description: strings.Repeat("d", share*4-len(name))}
	}
	return cs
}

// TestExpose: up to 8 capabilities of at most 1500 tokens are shown whole;
// one more capability or one more token makes an index.
func TestExpose(t *testing.T) {
	for _, tc := range []struct {
		n, tokens int
		want      Exposure
	}{
		{0, 0, Whole},
		{1, 10, Whole},
		{WholeMaxCapabilities, WholeMaxTokens, Whole},
		{WholeMaxCapabilities + 1, 100, Index},
		{WholeMaxCapabilities, WholeMaxTokens + 1, Index},
		{1, WholeMaxTokens + 1, Index},
	} {
		f := &Family{Capabilities: sized(tc.n, tc.tokens), Tokens: 99999}
		f.Expose()
		if f.Exposure != tc.want || f.Tokens != tc.tokens {
			t.Errorf("%d capabilities of %d tokens: %s with %d tokens, want %s", tc.n, tc.tokens, f.Exposure, f.Tokens, tc.want)
		}
	}
	if Whole.String() != "whole" || Index.String() != "index" {
		t.Errorf("exposures %q %q", Whole, Index)
	}
}

func TestFamilyLookups(t *testing.T) {
	f := &Family{
		Capabilities: []Capability{{Name: "a/x"}, {Name: "b/y"}},
		Unavailable:  []outcome.Unavailable{{Provider: "c", Reason: "could not be started"}},
	}
	if c := f.Capability("b/y"); c == nil || c != &f.Capabilities[1] {
		t.Errorf("Capability(b/y) = %v", c)
	}
	for _, name := range []string{"b", "y", "b/", "B/y", "c/z", ""} {
		if c := f.Capability(name); c != nil {
			t.Errorf("Capability(%q) = %+v", name, c)
		}
	}
	if u := f.UnavailableProvider("c"); u == nil || u.Reason != "could not be started" {
		t.Errorf("UnavailableProvider(c) = %v", u)
	}
	if u := f.UnavailableProvider("a"); u != nil {
		t.Errorf("UnavailableProvider(a) = %+v", u)
	}
}
