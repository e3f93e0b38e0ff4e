package gateway

import (
	"context"
	"errors"
	"sort"
	"time"

	"spear/audit"
	"spear/deploy"
	"spear/mcp"
	"spear/outcome"
	"spear/warm"
)

// use is one use of a provider's server by a command of a turn: a
// connection to it through the session's host (warm), or a server the
// gateway started for this use alone (cold).
type use struct {
	ts     *TurnSession
	p      *deploy.Provider
	client *mcp.Client
	pid    int
	warm   bool
	why    string // why a cold server is stopped
	// skipped is how many lines that are not JSON a cold server had
	// written when provider_started was recorded.
	skipped int
}

// session is the session's host as this turn reaches it, or nil when the
// gateway keeps no server warm.
func (ts *TurnSession) session() *warm.Session {
	if ts.g.Warm == nil {
		return nil
	}
	return &warm.Session{
		Name: ts.Turn.Session, Dir: ts.store.session,
		AuditFile: ts.g.Settings.AuditFile, Idle: ts.g.Settings.IdleTimeout,
		Launcher: ts.g.Warm,
	}
}

// open reaches p's server for this command (docs/design.md, "Providers"):
// through the session's host, which starts a session server once per
// session and entry and a call server for each use; or, when no host can
// be reached in time, by starting the server here, recorded with why and
// with the lines that are not JSON it wrote while starting.
// maxMessage bounds one message from the server (0: the client's default).
func (ts *TurnSession) open(ctx context.Context, p *deploy.Provider, maxMessage int) (*use, *outcome.Unavailable) {
	getenv, dropped := serverGetenv(p, ts.g.getenv(), ts.Turn.Workspace)
	opts := clientOptions(p, getenv)
	opts.MaxMessage = maxMessage
	fallback := ""
	if s := ts.session(); s != nil {
		conn, rep, err := s.Open(ctx, p.ID, warm.EntryOf(p, getenv), ts.Turn.Turn)
		var (
			ue *warm.UnreachableError
			fe *warm.FailedError
		)
		switch {
		case err == nil:
			u := &use{ts: ts, p: p, pid: rep.Pid, warm: true}
			c, err := mcp.ConnectConn(ctx, conn, opts)
			if err != nil {
				f := failure(p, "initialize", err)
				if !interrupted(ctx) {
					u.fail(f.Detail)
				}
				conn.Close()
				return nil, f
			}
			u.client = c
			return u, nil
		case errors.As(err, &ue):
			fallback = err.Error()
		case errors.As(err, &fe):
			return nil, &outcome.Unavailable{Provider: p.ID, Phase: "start", Reason: "failed earlier in this turn; the next turn starts it anew", Detail: err.Error()}
		default:
			return nil, failure(p, phaseOf(err, "initialize"), explainStart(opts, dropped, err))
		}
	}
	c, err := ts.g.connect()(ctx, opts)
	if err != nil {
		return nil, failure(p, phaseOf(err, "initialize"), explainStart(opts, dropped, err))
	}
	f := audit.Fields{"provider": p.ID, "pid": c.Pid(), "lifetime": p.Lifetime}
	if fallback != "" {
		f["fallback"] = fallback
	}
	skipped := c.SkippedLines()
	warm.SkippedFields(f, skipped)
	ts.log.Record(audit.ProviderStarted, f)
	return &use{ts: ts, p: p, client: c, pid: c.Pid(), why: warm.WhyCallDone, skipped: skipped.Lines}, nil
}

// fail says the server failed this use (it timed out, exited, broke the
// protocol): a warm session server is stopped and its provider kept out of
// the rest of the turn; a warm call server stops as its connection closes
// with a request unanswered; a cold one is recorded as failed when it is
// stopped.
func (u *use) fail(detail string) {
	if !u.warm {
		u.why = warm.WhyFailed
		return
	}
	if u.p.Lifetime == deploy.LifetimeSession {
		ctx, cancel := context.WithTimeout(context.Background(), time.Second)
		defer cancel()
		u.ts.session().Stop(ctx, u.p.ID, u.pid, u.ts.Turn.Turn, warm.WhyFailed, detail)
	}
}

// release ends the use: it closes the connection to a warm server (the
// host stops a call server after it), or stops a cold server and records
// it stopped, with the lines that are not JSON it wrote in all when it
// wrote some after it started.
func (u *use) release() {
	if u.client != nil {
		u.client.Close()
	}
	if !u.warm {
		f := audit.Fields{"provider": u.p.ID, "pid": u.pid, "lifetime": u.p.Lifetime, "why": u.why}
		if u.client != nil {
			if skipped := u.client.SkippedLines(); skipped.Lines > u.skipped {
				warm.SkippedFields(f, skipped)
			}
		}
		u.ts.log.Record(audit.ProviderStopped, f)
	}
}

// list lists p's tools for the family (docs/design.md, "The family"); a
// warm server is left running for the turn's calls.
func (ts *TurnSession) list(ctx context.Context, p *deploy.Provider) ([]mcp.Tool, *outcome.Unavailable) {
	// Starting and listing take ListTime(p) in all, however promptly the
	// server answers each page.
	limit := ListTime(p)
	ctx, cancel := context.WithTimeoutCause(ctx, limit, &ListTimeError{After: limit})
	defer cancel()
	u, uerr := ts.open(ctx, p, maxListMessage)
	if uerr != nil {
		return nil, uerr
	}
	defer u.release()
	tools, err := u.client.ListTools(ctx)
	if err != nil {
		var lt *ListTimeError
		if errors.As(context.Cause(ctx), &lt) {
			err = &ListTimeError{After: limit, Err: err}
		}
		f := failure(p, "list", err)
		if !interrupted(ctx) {
			u.fail(f.Detail)
		}
		return nil, f
	}
	return tools, nil
}

// interrupted says ctx ended because the command was interrupted (its
// process went, or was stopped), not because a provider ran out of its
// time: that says nothing about the provider's server.
func interrupted(ctx context.Context) bool {
	var lt *ListTimeError
	return ctx.Err() != nil && !errors.As(context.Cause(ctx), &lt)
}

// catchUpFailures marks unavailable, for the rest of the turn, every
// provider of the family whose warm server failed in this turn since the
// family was last read (killed between two commands, say), as invoke
// would find it. It asks the session's host, when one runs, and starts
// none.
func (ts *TurnSession) catchUpFailures(ctx context.Context) {
	s := ts.session()
	if s == nil || ts.State.Family == nil {
		return
	}
	failed, err := s.FailedIn(ctx, ts.Turn.Turn)
	if err != nil || len(failed) == 0 {
		return
	}
	ids := make([]string, 0, len(failed))
	for id := range failed {
		ids = append(ids, id)
	}
	sort.Strings(ids)
	for _, id := range ids {
		if ts.State.Family.UnavailableProvider(id) != nil || !ts.State.Family.HasProvider(id) {
			continue
		}
		ts.markUnavailable(&outcome.Unavailable{Provider: id, Phase: "call", Reason: "failed earlier in this turn; the next turn starts it anew", Detail: failed[id]})
	}
}
