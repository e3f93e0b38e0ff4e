package gateway

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"sync"

	"spear/mcp"
)

// Capability classes.
const (
	ClassRead  = "READ"
	ClassWrite = "WRITE"
)

// Exposures of a family.
const (
	ExposureWhole = "whole"
	ExposureIndex = "index"
)

// Limits of a family shown whole.
const (
	WholeMaxCapabilities = 8
	WholeMaxTokens       = 1500
)

// Capability is one tool of an admitted provider, as the turn keeps it.
type Capability struct {
	Name         string          `json:"name"` // provider/tool
	Provider     string          `json:"provider"`
	Tool         string          `json:"tool"`
	Class        string          `json:"class"`
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

// Unavailable is a provider left out of the turn, and why.
type Unavailable struct {
	Provider string `json:"provider"`
	Phase    string `json:"phase"`  // start, initialize, list or call
	Reason   string `json:"reason"` // shown to the turn: no command, path or stderr
	Detail   string `json:"detail"` // for the audit trail and the operator
}

// Family is every capability a turn is offered, fixed when first built.
type Family struct {
	Capabilities []Capability  `json:"capabilities"`
	Unavailable  []Unavailable `json:"unavailable"`
	Exposure     string        `json:"exposure"`
	Tokens       int           `json:"tokens"`
	Excluded     []string      `json:"excluded,omitempty"` // tools left out, and why
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

// UnavailableProvider returns why provider is unavailable, or nil.
func (f *Family) UnavailableProvider(provider string) *Unavailable {
	for i := range f.Unavailable {
		if f.Unavailable[i].Provider == provider {
			return &f.Unavailable[i]
		}
	}
	return nil
}

// expose decides whole or index and totals the token estimate.
func (f *Family) expose() {
	f.Tokens = 0
	for i := range f.Capabilities {
		f.Tokens += f.Capabilities[i].Tokens()
	}
	f.Exposure = ExposureIndex
	if len(f.Capabilities) <= WholeMaxCapabilities && f.Tokens <= WholeMaxTokens {
		f.Exposure = ExposureWhole
	}
}

// Connector starts and initializes a provider's server.
type Connector func(ctx context.Context, opts mcp.Options) (*mcp.Client, error)

// ClientOptions are the mcp options that start provider p.
func ClientOptions(p *Provider) mcp.Options {
	return mcp.Options{Command: p.Command, Env: p.Env, Timeout: p.Timeout, ClientInfo: mcp.Implementation{Name: "spear", Version: Version}}
}

// Version is the gateway's version, sent as clientInfo.
const Version = "0.1.0"

// Probe starts p, lists its tools and stops it. On failure it says in
// which phase (start, initialize or list) and returns the full error.
func Probe(ctx context.Context, connect Connector, p *Provider) ([]mcp.Tool, string, error) {
	c, err := connect(ctx, ClientOptions(p))
	if err != nil {
		return nil, phaseOf(err, "initialize"), err
	}
	defer c.Close()
	tools, err := c.ListTools(ctx)
	if err != nil {
		return nil, "list", err
	}
	return tools, "", nil
}

// ListProvider is Probe with the failure described for the turn.
func ListProvider(ctx context.Context, connect Connector, p *Provider) ([]mcp.Tool, *Unavailable) {
	tools, phase, err := Probe(ctx, connect, p)
	if err != nil {
		return nil, failure(p, phase, err)
	}
	return tools, nil
}

// ClassOf returns the class the registry gives a tool of p.
func ClassOf(p *Provider, tool string) string {
	if p.Reads(tool) {
		return ClassRead
	}
	return ClassWrite
}

// BuildFamily starts every admitted provider in parallel, lists its tools
// and builds the family; readOnly keeps READ capabilities only.
func BuildFamily(ctx context.Context, connect Connector, admitted []*Provider, readOnly bool) *Family {
	type listing struct {
		tools []mcp.Tool
		fail  *Unavailable
	}
	results := make([]listing, len(admitted))
	var wg sync.WaitGroup
	for i, p := range admitted {
		wg.Add(1)
		go func(i int, p *Provider) {
			defer wg.Done()
			tools, fail := ListProvider(ctx, connect, p)
			results[i] = listing{tools, fail}
		}(i, p)
	}
	wg.Wait()

	f := &Family{Capabilities: []Capability{}, Unavailable: []Unavailable{}}
	for i, p := range admitted {
		if results[i].fail != nil {
			f.Unavailable = append(f.Unavailable, *results[i].fail)
			continue
		}
		for _, t := range results[i].tools {
			if !validToolName(t.Name) {
				f.Excluded = append(f.Excluded, fmt.Sprintf("%s: a tool named %q (names must be 1 to 128 of A-Z a-z 0-9 _ . -)", p.ID, OneLine(t.Name, 60)))
				continue
			}
			c := NewCapability(p, t)
			if readOnly && c.Class != ClassRead {
				continue
			}
			f.Capabilities = append(f.Capabilities, c)
		}
	}
	f.expose()
	return f
}

// NewCapability makes a tool of p a capability: classed by the registry
// alone, whatever the server's annotations say, with its text cleaned and
// bounded and its schemas re-encoded.
func NewCapability(p *Provider, t mcp.Tool) Capability {
	return Capability{
		Name: p.ID + "/" + t.Name, Provider: p.ID, Tool: t.Name, Class: ClassOf(p, t.Name),
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

// phaseOf says which phase an error from mcp.Connect belongs to.
func phaseOf(err error, otherwise string) string {
	var se *mcp.StartError
	if errors.As(err, &se) {
		return "start"
	}
	return otherwise
}

// failure describes a provider's failure twice: briefly for the turn, which
// never sees the deployment's commands, paths or the server's stderr, and
// in full for the audit trail and the operator.
func failure(p *Provider, phase string, err error) *Unavailable {
	u := &Unavailable{Provider: p.ID, Phase: phase, Detail: err.Error()}
	method := map[string]string{"initialize": "initialize", "list": "tools/list", "call": "tools/call"}[phase]
	var (
		se *mcp.StartError
		te *mcp.TimeoutError
		ve *mcp.VersionError
		ee *mcp.ExitError
		pe *mcp.ProtocolError
		re *mcp.RPCError
	)
	switch {
	case errors.As(err, &se):
		u.Reason = "could not be started"
	case errors.As(err, &te):
		u.Reason = fmt.Sprintf("did not answer %s within %s", te.Method, seconds(te.After))
	case errors.As(err, &ve):
		u.Reason = fmt.Sprintf("answered protocol version %q, and only %s is supported", OneLine(ve.Got, 40), mcp.ProtocolVersion)
	case errors.As(err, &ee):
		u.Reason = "exited during " + method
		u.Detail = (&mcp.ExitError{State: ee.State}).Error() // its stderr is the deployment's own
	case errors.As(err, &pe):
		u.Reason = "broke the protocol during " + method
	case errors.As(err, &re):
		u.Reason = fmt.Sprintf("answered %s with an error", method)
	case errors.Is(err, context.Canceled), errors.Is(err, context.DeadlineExceeded):
		u.Reason = "was cancelled during " + method
	default:
		u.Reason = "failed during " + method
	}
	return u
}

func seconds(d interface{ Seconds() float64 }) string {
	s := d.Seconds()
	if s == float64(int64(s)) {
		return fmt.Sprintf("%d s", int64(s))
	}
	return fmt.Sprintf("%g s", s)
}
