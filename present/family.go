package present

import (
	"encoding/json"

	"spear/deploy"
	"spear/mcp"
	"spear/outcome"
)

// Exposure is how a family is shown to a turn.
type Exposure string

// Exposures of a family.
const (
	Whole Exposure = "whole"
	Index Exposure = "index"
)

func (e Exposure) String() string { return string(e) }

// Limits of a family shown whole.
const (
	WholeMaxCapabilities = 8
	WholeMaxTokens       = 1500
)

// Capability is one tool of an admitted provider, as the turn keeps it and
// is shown it.
type Capability struct {
	Name         string          `json:"name"` // provider/tool
	Provider     string          `json:"provider"`
	Tool         string          `json:"tool"`
	Class        deploy.Access   `json:"class"`
	Title        string          `json:"title,omitempty"`
	Description  string          `json:"description,omitempty"` // cleaned
	InputSchema  json.RawMessage `json:"input_schema"`
	OutputSchema json.RawMessage `json:"output_schema,omitempty"`
}

// Tokens estimates the capability's size in a model's context: one token
// per four bytes of its name, title, description and input schema, rounded
// up. It is an estimate; real tokenizers differ by a few tens of percent.
func (c *Capability) Tokens() int {
	n := len(c.Name) + len(c.Title) + len(c.Description) + len(c.InputSchema)
	return (n + 3) / 4
}

// Bytes is what the capability takes in the turn's state: its name, title,
// description and schemas.
func (c *Capability) Bytes() int {
	return len(c.Name) + len(c.Provider) + len(c.Tool) + len(c.Title) + len(c.Description) + len(c.InputSchema) + len(c.OutputSchema)
}

// NewCapability makes a tool of p a capability: classed by the registry
// alone, whatever the server's annotations say, with its text cleaned and
// bounded and its schemas re-encoded.
func NewCapability(p *deploy.Provider, t mcp.Tool) Capability {
	return Capability{
		Name: p.ID + "/" + t.Name, Provider: p.ID, Tool: t.Name, Class: p.ClassOf(t.Name),
		Title:        OneLine(t.DisplayName(), 200),
		Description:  Bound(Clean(t.Description), 4000),
		InputSchema:  json.RawMessage(compactJSON(t.InputSchema)),
		OutputSchema: optionalJSON(t.OutputSchema),
	}
}

func optionalJSON(raw json.RawMessage) json.RawMessage {
	if len(raw) == 0 || string(raw) == "null" {
		return nil
	}
	return json.RawMessage(compactJSON(raw))
}

// Family is every capability a turn is offered, fixed when first built.
type Family struct {
	Capabilities []Capability          `json:"capabilities"`
	Unavailable  []outcome.Unavailable `json:"unavailable"`
	Exposure     Exposure              `json:"exposure"`
	Tokens       int                   `json:"tokens"`
	Excluded     []string              `json:"excluded,omitempty"` // tools left out, and why
}

// Capability returns the capability of that name, or nil.
func (f *Family) Capability(name string) *Capability {
	for i := range f.Capabilities {
		if f.Capabilities[i].Name == name {
			return &f.Capabilities[i]
		}
	}
	return nil
}

// HasProvider reports whether the family offers a capability of provider.
func (f *Family) HasProvider(provider string) bool {
	for _, c := range f.Capabilities {
		if c.Provider == provider {
			return true
		}
	}
	return false
}

// UnavailableProvider returns why provider is unavailable, or nil.
func (f *Family) UnavailableProvider(provider string) *outcome.Unavailable {
	for i := range f.Unavailable {
		if f.Unavailable[i].Provider == provider {
			return &f.Unavailable[i]
		}
	}
	return nil
}

// Expose totals the token estimate and decides whole or index: up to
// WholeMaxCapabilities capabilities of at most WholeMaxTokens in all are
// shown whole.
func (f *Family) Expose() {
	f.Tokens = 0
	for i := range f.Capabilities {
		f.Tokens += f.Capabilities[i].Tokens()
	}
	f.Exposure = Index
	if len(f.Capabilities) <= WholeMaxCapabilities && f.Tokens <= WholeMaxTokens {
		f.Exposure = Whole
	}
}
