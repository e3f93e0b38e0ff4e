package gateway

import (
	"context"
	"errors"
	"fmt"
	"math"
	"strings"
	"sync"
	"time"

	"spear/deploy"
	"spear/internal/version"
	"spear/mcp"
	"spear/outcome"
	"spear/present"
)

// Connector starts and initializes a provider's server.
type Connector func(ctx context.Context, opts mcp.Options) (*mcp.Client, error)

// clientOptions are the mcp options that start provider p: in the
// registry's directory, with PATH, HOME (from getenv, as serverGetenv
// makes it) and its env only.
func clientOptions(p *deploy.Provider, getenv func(string) string) mcp.Options {
	return mcp.Options{Command: p.Command, Env: p.Env, Dir: p.Dir, Timeout: p.Timeout, Getenv: getenv, ClientInfo: mcp.Implementation{Name: "spear", Version: version.String()}}
}

// Bounds on building a family: what one provider's listing may take in time
// and in the turn's state (docs/design.md, "The turn's state").
const (
	// MaxSchemaBytes bounds one tool's input or output schema, as the
	// server sent it; a tool with a larger one is left out.
	MaxSchemaBytes = 64 << 10
	// MaxProviderBytes bounds one provider's tools as the turn keeps them
	// (names, titles, descriptions and schemas); a provider whose tools
	// take more is left out.
	MaxProviderBytes = 4 << 20
	// maxListMessage bounds one message while listing: a page larger than
	// this could not fit the provider's bound anyway.
	maxListMessage = MaxProviderBytes + 1<<20
	// MaxListTime bounds starting a provider and listing its tools: three
	// times its timeout, and never more than this.
	MaxListTime = 60 * time.Second
)

// ListTime is how long starting p and listing its tools may take in all.
func ListTime(p *deploy.Provider) time.Duration {
	return min(3*p.Timeout, MaxListTime)
}

// ListTimeError is a provider that did not start and list all its tools
// within ListTime, however promptly it answered each request.
type ListTimeError struct {
	After time.Duration
	Err   error
}

func (e *ListTimeError) Error() string {
	return fmt.Sprintf("did not start and list its tools within %s: %v", seconds(e.After), e.Err)
}

func (e *ListTimeError) Unwrap() error { return e.Err }

// Probe starts p, lists its tools and stops it, all within ListTime(p). On
// failure it says in which phase (start, initialize or list) and returns
// the full error.
func Probe(ctx context.Context, connect Connector, p *deploy.Provider) ([]mcp.Tool, string, error) {
	return probe(ctx, connect, p, "")
}

// probe is Probe with p's server given the PATH it gets in a turn in
// workspace ("" for none).
func probe(ctx context.Context, connect Connector, p *deploy.Provider, workspace string) ([]mcp.Tool, string, error) {
	limit := ListTime(p)
	ctx, cancel := context.WithTimeoutCause(ctx, limit, &ListTimeError{After: limit})
	defer cancel()
	late := func(err error) error {
		var lt *ListTimeError
		if errors.As(context.Cause(ctx), &lt) {
			return &ListTimeError{After: limit, Err: err}
		}
		return err
	}
	getenv, dropped := serverGetenv(p, nil, workspace) // an operator's command: this process's environment
	opts := clientOptions(p, getenv)
	opts.MaxMessage = maxListMessage
	c, err := connect(ctx, opts)
	if err != nil {
		return nil, phaseOf(err, "initialize"), late(explainStart(opts, dropped, err))
	}
	defer c.Close()
	tools, err := c.ListTools(ctx)
	if err != nil {
		return nil, "list", late(err)
	}
	return tools, "", nil
}

// listProvider is Probe with the failure described for the turn.
func listProvider(ctx context.Context, connect Connector, p *deploy.Provider) ([]mcp.Tool, *outcome.Unavailable) {
	tools, phase, err := Probe(ctx, connect, p)
	if err != nil {
		return nil, failure(p, phase, err)
	}
	return tools, nil
}

// kept is what a turn keeps of one provider's tools.
type kept struct {
	caps     []present.Capability
	excluded []string             // tools left out, and why
	over     *outcome.Unavailable // the provider left out, and why
}

// keepTools makes p's tools capabilities (READ ones only when readOnly).
// A tool with an invalid name or a schema over MaxSchemaBytes is left out;
// when the rest take over MaxProviderBytes, the provider is.
func keepTools(p *deploy.Provider, tools []mcp.Tool, readOnly bool) kept {
	var k kept
	size := 0
	for _, t := range tools {
		if !deploy.ValidToolName(t.Name) {
			k.excluded = append(k.excluded, fmt.Sprintf("%s: a tool named %q (names must be 1 to 128 of A-Z a-z 0-9 _ . -)", p.ID, present.OneLine(t.Name, 60)))
			continue
		}
		if n := max(len(t.InputSchema), len(t.OutputSchema)); n > MaxSchemaBytes {
			k.excluded = append(k.excluded, fmt.Sprintf("%s/%s: its schema takes %s, over the %s a schema may take", p.ID, t.Name, byteSize(n), byteSize(MaxSchemaBytes)))
			continue
		}
		c := present.NewCapability(p, t)
		if readOnly && c.Class != deploy.Read {
			continue
		}
		size += c.Bytes()
		k.caps = append(k.caps, c)
	}
	if size > MaxProviderBytes {
		why := fmt.Sprintf("offers tools that take %s in all, over the %s a provider may take", byteSize(size), byteSize(MaxProviderBytes))
		k.caps = nil
		k.excluded = append(k.excluded, fmt.Sprintf("%s: the whole provider, which %s", p.ID, why))
		k.over = &outcome.Unavailable{Provider: p.ID, Phase: "list", Reason: why, Detail: why}
	}
	return k
}

// byteSize says n bytes briefly, rounded up, so that a size over a bound
// never reads as the bound: 900 bytes, 64 KiB, 4.1 MiB.
func byteSize(n int) string {
	up := func(x float64) string {
		return strings.TrimSuffix(fmt.Sprintf("%.1f", math.Ceil(x*10)/10), ".0")
	}
	switch {
	case n < 1<<10:
		return fmt.Sprintf("%d bytes", n)
	case n < 1<<20:
		return up(float64(n)/(1<<10)) + " KiB"
	default:
		return up(float64(n)/(1<<20)) + " MiB"
	}
}

// buildFamily lists the tools of every admitted provider in parallel
// (list starts it, or reaches its warm server) and builds the family; readOnly keeps READ capabilities only. Each
// provider has ListTime to start and list, so the whole build takes at
// most MaxListTime.
func buildFamily(ctx context.Context, list func(context.Context, *deploy.Provider) ([]mcp.Tool, *outcome.Unavailable), admitted []*deploy.Provider, readOnly bool) *present.Family {
	type listing struct {
		tools []mcp.Tool
		fail  *outcome.Unavailable
	}
	results := make([]listing, len(admitted))
	var wg sync.WaitGroup
	for i, p := range admitted {
		wg.Add(1)
		go func(i int, p *deploy.Provider) {
			defer wg.Done()
			tools, fail := list(ctx, p)
			results[i] = listing{tools, fail}
		}(i, p)
	}
	wg.Wait()

	f := &present.Family{Capabilities: []present.Capability{}, Unavailable: []outcome.Unavailable{}}
	for i, p := range admitted {
		if results[i].fail != nil {
			f.Unavailable = append(f.Unavailable, *results[i].fail)
			continue
		}
		k := keepTools(p, results[i].tools, readOnly)
		results[i].tools = nil // what is not kept can go
		f.Excluded = append(f.Excluded, k.excluded...)
		if k.over != nil {
			f.Unavailable = append(f.Unavailable, *k.over)
			continue
		}
		f.Capabilities = append(f.Capabilities, k.caps...)
	}
	f.Expose()
	return f
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
func failure(p *deploy.Provider, phase string, err error) *outcome.Unavailable {
	u := &outcome.Unavailable{Provider: p.ID, Phase: phase, Detail: err.Error()}
	method := map[string]string{"initialize": "initialize", "list": "tools/list", "call": "tools/call"}[phase]
	var (
		lt *ListTimeError
		se *mcp.StartError
		te *mcp.TimeoutError
		ve *mcp.VersionError
		ee *mcp.ExitError
		pe *mcp.ProtocolError
		re *mcp.RPCError
	)
	switch {
	case errors.As(err, &lt):
		u.Reason = fmt.Sprintf("did not start and list its tools within %s", seconds(lt.After))
	case errors.As(err, &se):
		u.Reason = "could not be started"
	case errors.As(err, &te):
		u.Reason = fmt.Sprintf("did not answer %s within %s", te.Method, seconds(te.After))
	case errors.As(err, &ve):
		u.Reason = fmt.Sprintf("answered protocol version %q, and only %s is supported", present.OneLine(ve.Got, 40), mcp.ProtocolVersion)
	case errors.As(err, &ee):
		u.Reason = "exited during " + method
		u.Detail = (&mcp.ExitError{State: ee.State}).Error() // its stderr is the deployment's own
	case errors.Is(err, mcp.ErrClosed):
		u.Reason = "was closed during " + method
	case errors.As(err, &pe):
		u.Reason = "broke the protocol during " + method
	case errors.As(err, &re):
		u.Reason = fmt.Sprintf("answered %s with an error", method)
	case errors.Is(err, context.Canceled):
		u.Reason = "was cancelled during " + method
	case errors.Is(err, context.DeadlineExceeded):
		u.Reason = "ran out of time during " + method
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
