package gateway

import (
	"context"
	"errors"
	"fmt"
	"sync"

	"spear/deploy"
	"spear/internal/version"
	"spear/mcp"
	"spear/outcome"
	"spear/present"
)

// Connector starts and initializes a provider's server.
type Connector func(ctx context.Context, opts mcp.Options) (*mcp.Client, error)

// clientOptions are the mcp options that start provider p: in the
// registry's directory, with PATH, HOME and its env only.
func clientOptions(p *deploy.Provider) mcp.Options {
	return mcp.Options{Command: p.Command, Env: p.Env, Dir: p.Dir, Timeout: p.Timeout, ClientInfo: mcp.Implementation{Name: "spear", Version: version.String()}}
}

// Probe starts p, lists its tools and stops it. On failure it says in
// which phase (start, initialize or list) and returns the full error.
func Probe(ctx context.Context, connect Connector, p *deploy.Provider) ([]mcp.Tool, string, error) {
	c, err := connect(ctx, clientOptions(p))
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

// buildFamily lists the tools of every admitted provider in parallel and
// builds the family; readOnly keeps READ capabilities only.
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
		for _, t := range results[i].tools {
			if !deploy.ValidToolName(t.Name) {
				f.Excluded = append(f.Excluded, fmt.Sprintf("%s: a tool named %q (names must be 1 to 128 of A-Z a-z 0-9 _ . -)", p.ID, present.OneLine(t.Name, 60)))
				continue
			}
			c := present.NewCapability(p, t)
			if readOnly && c.Class != deploy.Read {
				continue
			}
			f.Capabilities = append(f.Capabilities, c)
		}
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
