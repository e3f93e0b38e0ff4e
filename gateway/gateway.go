package gateway

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"os"
	"strings"
	"time"

	"spear/audit"
	"spear/confine"
	"spear/deploy"
	"spear/internal/handoff"
	"spear/mcp"
	"spear/netwall"
	"spear/outcome"
	"spear/present"
	"spear/warm"
)

// Gateway answers a turn's spear-capability commands. Its zero value is not
// usable: set Settings, and optionally the rest.
type Gateway struct {
	Settings deploy.Settings
	// SettingsErr, when set, is why Settings cannot be used: every
	// command is refused with it.
	SettingsErr error
	// Connect starts providers; nil means mcp.Connect.
	Connect Connector
	// Warm starts a session's host, which keeps the servers of session
	// providers running for the session and starts call providers' ones
	// for each use; nil means none: every provider's server is started
	// by the gateway for one use and stopped after it.
	Warm *warm.Launcher
	// Now is the clock; nil means time.Now.
	Now func() time.Time
	// Probe says whether and how this system confines the turn's
	// terminal; nil means confine.Probe.
	Probe func() confine.Support
	// Getenv is the environment the gateway was configured from, which
	// also gives providers' servers their PATH and HOME; nil means
	// os.Getenv.
	Getenv func(string) string
	// Elsewhere says the gateway answers for a process other than its
	// own (the session process answering a spear-term invocation): a
	// command that would run the confirmation program, which belongs
	// beside the turn's terminal, stops with ErrHandBack instead, having
	// recorded nothing for the call.
	Elsewhere bool
}

// ErrHandBack is a command a gateway that answers elsewhere leaves to the
// process the invocation came from (Gateway.Elsewhere).
var ErrHandBack = errors.New("this command asks for a person's confirmation, which only the invoking process can ask for")

func (g *Gateway) getenv() func(string) string {
	if g.Getenv != nil {
		return g.Getenv
	}
	return os.Getenv
}

// Confinement says how the turn's terminal is confined, in words for the
// audit trail and the operator, and, when this system cannot confine it
// and the operator did not turn the confinement off, why a turn is
// offered nothing (docs/security.md).
func (g *Gateway) Confinement() (how, refuse string) {
	if !g.Settings.Confine {
		return "off (SPEAR_CONFINE=off: the operator accepts that the turn's shell can reach the deployment)", ""
	}
	probe := g.Probe
	if probe == nil {
		probe = confine.Probe
	}
	sup := probe()
	if sup.OK {
		return "confined: " + sup.String() + "; " + netwall.Describe(netwall.Mode(g.Settings.Network)), ""
	}
	return "not confined: " + sup.Why, "this system cannot confine the turn's terminal (" + sup.Why + "), so no external capability is offered; the operator may set SPEAR_CONFINE=off to accept the risk"
}

// New returns a gateway configured from the environment.
func New(getenv func(string) string) *Gateway {
	s, err := deploy.SettingsFrom(getenv)
	return &Gateway{Settings: s, SettingsErr: err, Getenv: getenv}
}

// Connector returns how the gateway starts providers.
func (g *Gateway) Connector() Connector { return g.connect() }

func (g *Gateway) connect() Connector {
	if g.Connect != nil {
		return g.Connect
	}
	return mcp.Connect
}

func (g *Gateway) now() time.Time {
	if g.Now != nil {
		return g.Now()
	}
	return time.Now()
}

// auditRefusal refuses because the audit trail cannot be written; the
// turn is not told where the trail is.
func auditRefusal(err error) error {
	return &outcome.Refusal{Why: "the audit trail cannot be written, and no call runs until it can be recorded", Detail: err.Error()}
}

// TurnSession is the gateway as one command of one turn sees it.
type TurnSession struct {
	g     *Gateway
	Turn  *deploy.Turn
	log   *audit.Logger
	store *store
	State *TurnState
	// Notes are lines for the turn to read once: providers newly
	// unavailable in this session.
	Notes []string
}

// Close releases the audit file.
func (ts *TurnSession) Close() { ts.log.Close() }

// Open loads the turn, the registries and the turn's state, building the
// family the first time the turn needs it. The error is a *RefusalError
// that the turn may read, or a *deploy.TurnError/*deploy.FileError for the harness.
func (g *Gateway) Open(ctx context.Context) (*TurnSession, error) {
	if g.SettingsErr != nil {
		return nil, g.SettingsErr
	}
	t, err := deploy.LoadTurn(g.Settings.TurnFile)
	if err != nil {
		return nil, err
	}
	log, err := audit.Open(g.Settings.AuditFile, t.Session, t.Turn, g.Now)
	if err != nil {
		return nil, auditRefusal(err)
	}
	ts := &TurnSession{g: g, Turn: t, log: log, store: newStore(g.Settings.StateDir, t)}
	err = ts.store.locked(func() error {
		st, err := ts.store.load()
		if err != nil {
			return err
		}
		if st == nil {
			if st, err = ts.build(ctx); err != nil {
				return err
			}
			// A family built while the command was interrupted would
			// keep providers out for the rest of the turn: the next
			// command builds it anew.
			if interrupted(ctx) {
				return fmt.Errorf("the command was interrupted while the turn's family was built: %w", context.Cause(ctx))
			}
			if err := ts.store.save(st); err != nil {
				return err
			}
		}
		ts.State = st
		return nil
	})
	if err != nil {
		log.Close()
		return nil, err
	}
	return ts, nil
}

// record appends an event; a failure to record is returned, so that what
// cannot be recorded does not run.
func (ts *TurnSession) record(event string, f audit.Fields) error {
	if err := ts.log.Record(event, f); err != nil {
		return auditRefusal(err)
	}
	return nil
}

// build selects the providers, starts the admitted ones and records every
// decision. It runs once per turn, under the turn's lock.
func (ts *TurnSession) build(ctx context.Context) (*TurnState, error) {
	g := ts.g
	reg, err := deploy.LoadRegistry(g.Settings.CapabilitiesFile)
	if err != nil {
		// Nothing is saved: the next command tries again, once the
		// operator has mended the file.
		ts.record(audit.ProviderRejected, audit.Fields{"file": g.Settings.CapabilitiesFile, "why": err.Error()})
		return nil, err
	}
	projects, err := deploy.LoadProjects(g.Settings.ProjectsFile)
	if err != nil {
		return nil, err
	}
	for _, p := range reg.Problems {
		if err := ts.record(audit.ProviderRejected, audit.Fields{"provider": p.Entry, "key": p.Key, "why": p.Msg}); err != nil {
			return nil, err
		}
	}
	for _, p := range reg.Providers {
		if err := ts.record(audit.ProviderRegistered, providerFields(p)); err != nil {
			return nil, err
		}
	}
	sel := selectProviders(reg, projects, ts.Turn)
	project := ""
	if sel.Project != nil {
		project = sel.Project.Name
	}
	for _, d := range sel.Decisions {
		f := audit.Fields{"provider": d.Provider.ID, "project": project, "class": ts.Turn.Class}
		event := audit.ProviderAdmitted
		if !d.Admitted {
			event = audit.ProviderNotAdmitted
			f["reason"] = d.Reason
		}
		if err := ts.record(event, f); err != nil {
			return nil, err
		}
	}
	st := &TurnState{Built: g.now().UTC(), Described: []string{}}
	if sel.Offer.EarlierRuntime {
		if err := ts.record(audit.RuntimeWithoutGateway, audit.Fields{"why": sel.Offer.Why}); err != nil {
			return nil, err
		}
	}
	admitted := sel.Admitted()
	terminal, refuse := g.Confinement()
	if refuse != "" && sel.Offer.Task != "" {
		sel.Offer.Task, sel.Offer.Why = "", refuse
	}
	if sel.Offer.Task == "" || len(admitted) == 0 {
		st.Why = sel.Offer.Why
		if st.Why == "" {
			st.Why = "no registered provider applies to it"
		}
		// Nothing is offered: the trail says why, whatever the registry holds.
		if err := ts.record(audit.CapabilityFamilySelected, audit.Fields{"capabilities": []string{}, "exposure": present.Whole, "tokens": 0, "unavailable": []string{}, "why": st.Why, "terminal": terminal}); err != nil {
			return nil, err
		}
		return st, nil
	}
	fam := buildFamily(ctx, ts.list, admitted, sel.Offer.ReadOnly)
	for _, u := range fam.Unavailable {
		if err := ts.record(audit.ProviderFailed, audit.Fields{"provider": u.Provider, "phase": u.Phase, "why": u.Detail}); err != nil {
			return nil, err
		}
	}
	names := make([]string, len(fam.Capabilities))
	for i, c := range fam.Capabilities {
		names[i] = c.Name
	}
	unavailable := make([]string, len(fam.Unavailable))
	for i, u := range fam.Unavailable {
		unavailable[i] = u.Provider
	}
	f := audit.Fields{"capabilities": names, "exposure": fam.Exposure, "tokens": fam.Tokens, "unavailable": unavailable, "terminal": terminal}
	if len(fam.Excluded) > 0 {
		f["excluded"] = fam.Excluded
	}
	if err := ts.record(audit.CapabilityFamilySelected, f); err != nil {
		return nil, err
	}
	if fam.Exposure == present.Index {
		if err := ts.record(audit.CapabilityIndexExposed, audit.Fields{"capabilities": len(names)}); err != nil {
			return nil, err
		}
	}
	st.Offered = true
	st.Family = fam
	return st, nil
}

func providerFields(p *deploy.Provider) audit.Fields {
	return audit.Fields{
		"provider": p.ID, "scope": p.Scope.String(), "tasks": p.Tasks, "read": nonNil(p.Read),
		"write": p.Write, "enabled": p.Enabled, "timeout_s": p.Timeout.Seconds(), "env_names": p.EnvNames(),
	}
}

func nonNil(s []string) []string {
	if s == nil {
		return []string{}
	}
	return s
}

// takeNotes collects, once per session, the providers newly unavailable.
func (ts *TurnSession) takeNotes() {
	if ts.State.Family == nil {
		return
	}
	fresh, err := ts.store.sayOnce(ts.State.Family.Unavailable)
	if err != nil {
		return
	}
	for _, u := range fresh {
		ts.Notes = append(ts.Notes, fmt.Sprintf("%s is unavailable in this session: it %s; its capabilities cannot be used", u.Provider, u.Reason))
	}
}

// offered is check 1: the turn is offered capabilities at all.
func (ts *TurnSession) offered() error {
	if !ts.State.Offered {
		return outcome.Refused("", "this turn is offered no external capabilities: %s", ts.State.Why)
	}
	return nil
}

// find is checks 2 and 3: the capability is in the family, and its
// provider is available.
func (ts *TurnSession) find(name string) (*present.Capability, error) {
	fam := ts.State.Family
	provider, tool, ok := strings.Cut(name, "/")
	if !ok || provider == "" || tool == "" {
		return nil, outcome.Refused(outcome.ListForm, "%q is not a capability name; capabilities are named <provider>/<tool>", present.OneLine(name, 80))
	}
	if u := fam.UnavailableProvider(provider); u != nil {
		return nil, u
	}
	c := fam.Capability(name)
	if c == nil {
		return nil, outcome.Refused(outcome.ListForm, "%s is not offered in this turn", present.OneLine(name, 80))
	}
	return c, nil
}

// Describe marks a capability described for this turn and returns it. A
// refusal is recorded.
func (ts *TurnSession) Describe(name string) (c *present.Capability, err error) {
	defer func() {
		var ue *outcome.Unavailable
		if err != nil && !errors.As(err, &ue) {
			ts.log.Record(audit.CapabilityRefused, audit.Fields{"capability": present.OneLine(name, 200), "why": refusalWhy(err)})
		}
	}()
	if err := ts.offered(); err != nil {
		return nil, err
	}
	c, err = ts.find(name)
	if err != nil {
		return nil, err
	}
	// A capability whose schema cannot be checked can never be invoked:
	// the turn learns why now, not after reading it.
	if _, err := compileSchema(c.InputSchema); err != nil {
		return nil, outcome.Refused("", "%s cannot be invoked: %v", c.Name, err)
	}
	if err := ts.record(audit.CapabilityDescribed, audit.Fields{"capability": c.Name}); err != nil {
		return nil, err
	}
	if !ts.State.IsDescribed(c.Name) {
		err = ts.store.locked(func() error {
			st, err := ts.store.load()
			if err != nil || st == nil {
				return fmt.Errorf("the turn's state disappeared: %v", err)
			}
			if !st.IsDescribed(c.Name) {
				st.Described = append(st.Described, c.Name)
				if err := ts.store.save(st); err != nil {
					return err
				}
			}
			ts.State = st
			return nil
		})
	}
	return c, err
}

// markUnavailable keeps a provider that failed a call out of the rest of
// the turn.
func (ts *TurnSession) markUnavailable(u *outcome.Unavailable) error {
	return ts.store.locked(func() error {
		st, err := ts.store.load()
		if err != nil || st == nil {
			return fmt.Errorf("the turn's state disappeared: %v", err)
		}
		if st.Family.UnavailableProvider(u.Provider) == nil {
			st.Family.Unavailable = append(st.Family.Unavailable, *u)
			if err := ts.store.save(st); err != nil {
				return err
			}
		}
		ts.State = st
		return nil
	})
}

// refusalWhy is why err refused a command, for the audit trail: a
// refusal's reason, or any other error in full.
func refusalWhy(err error) string {
	var re *outcome.Refusal
	if errors.As(err, &re) {
		return re.Why
	}
	return err.Error()
}

// Outcome is what an invocation came to.
type Outcome struct {
	Capability *present.Capability
	Result     *mcp.CallToolResult
	Framed     string
	Status     int
	// Unrecorded is why the call's end could not be recorded, or "": the
	// call ran (its start is recorded), and its result is delivered all
	// the same, with that said (but not where the trail is).
	Unrecorded string
	release    func()
}

// Release ends the call's use of its provider's server: a server started
// for this call alone is stopped. The caller delivers the result first, so
// that stopping a server never delays it. Release is safe to call more
// than once.
func (o *Outcome) Release() {
	if o.release != nil {
		o.release()
		o.release = nil
	}
}

// Invoke runs the checks on every call in order (docs/design.md, "Checks on
// every call") and then calls the tool.
func (ts *TurnSession) Invoke(ctx context.Context, name, argText string) (out *Outcome, err error) {
	start := time.Now()
	fields := audit.Fields{"capability": present.OneLine(name, 200)}
	// An invocation found inside a harness's wrapper: every record of it
	// names the wrapper; its start holds the whole submission too.
	wrapper := ts.g.getenv()(handoff.WrapperVar)
	if wrapper != "" {
		fields["wrapper"] = wrapper
	}
	stopped := false
	defer func() {
		if err == nil || stopped || errors.Is(err, ErrHandBack) {
			return
		}
		var ue *outcome.Unavailable
		if errors.As(err, &ue) {
			fields["outcome"] = "unavailable"
			fields["why"] = ue.Reason
			fields["duration_ms"] = time.Since(start).Milliseconds()
			ts.log.Record(audit.CapabilityInvoked, fields)
			return
		}
		// Anything else reaches the turn as a refusal, and is recorded as one.
		fields["why"] = refusalWhy(err)
		ts.log.Record(audit.CapabilityRefused, fields)
	}()
	if err := ts.offered(); err != nil {
		return nil, err
	}
	c, err := ts.find(name)
	if err != nil {
		return nil, err
	}
	if ts.State.Family.Exposure == present.Index && !ts.State.IsDescribed(c.Name) {
		return nil, outcome.Refused("spear-capability describe "+c.Name, "%s has not been described in this turn; a capability shown in the index is invoked only after spear-capability describe", c.Name)
	}
	args, err := parseArguments(argText)
	if err != nil {
		return nil, outcome.Refused(present.InvokeHint(c), "%v", err)
	}
	argJSON := json.RawMessage(mustJSON(args))
	fields["arguments"] = argJSON
	v, err := compileSchema(c.InputSchema)
	if err != nil {
		return nil, outcome.Refused("", "%s cannot be checked: %v; the call is refused rather than run unchecked", c.Name, err)
	}
	if err := v.Check(args); err != nil {
		var le *limitError
		if errors.As(err, &le) {
			return nil, outcome.Refused("", "%s cannot be checked against these arguments: %v; the call is refused rather than run unchecked", c.Name, err)
		}
		return nil, outcome.Refused(present.InvokeHint(c), "the arguments do not fit the schema of %s: %v", c.Name, err)
	}
	// The provider's entry is read afresh once per call, so its write
	// policy and command come from one reading of the registry.
	p, regErr := ts.provider(c)
	approval, err := ts.allowWrite(ctx, c, p, regErr, args)
	if err != nil {
		return nil, err
	}
	if approval != "" {
		fields["approved_by"] = approval
	}
	// The call itself, recorded before it runs: what cannot be recorded
	// does not run.
	started := audit.Fields{"capability": c.Name, "arguments": argJSON, "outcome": "started"}
	// An invocation found inside a harness's wrapper: which wrapper, and
	// the whole submission the harness sent.
	if wrapper != "" {
		started["wrapper"] = wrapper
		started["submission"] = present.Bound(ts.g.getenv()(handoff.SubmissionVar), maxSubmission)
	}
	if err := ts.record(audit.CapabilityInvoked, started); err != nil {
		return nil, err
	}
	res, release, uerr := ts.call(ctx, c, p, regErr, argJSON)
	fields["duration_ms"] = time.Since(start).Milliseconds()
	if uerr != nil && interrupted(ctx) {
		// The invocation was interrupted (its process went, or was
		// stopped), not the provider: it stays available.
		fields["outcome"] = "interrupted"
		ts.record(audit.CapabilityInvoked, fields)
		stopped = true
		return nil, uerr
	}
	if uerr != nil {
		ts.record(audit.ProviderFailed, audit.Fields{"provider": c.Provider, "phase": uerr.Phase, "why": uerr.Detail})
		ts.markUnavailable(uerr)
		return nil, uerr
	}
	out = &Outcome{Capability: c, Result: res, Framed: present.Frame(present.Nonce(), c.Name, res, ts.g.Settings.MaxOutput), release: release}
	fields["outcome"] = "result"
	if res.IsError {
		out.Status = outcome.ExitToolError
		fields["outcome"] = "tool_error"
	}
	fields["result_bytes"] = len(out.Framed)
	if err := ts.log.Record(audit.CapabilityInvoked, fields); err != nil {
		// Too late to refuse: the call ran. Saying it was refused would
		// hide a WRITE that took effect.
		out.Unrecorded = err.Error()
	}
	return out, nil
}

// maxSubmission bounds the submission recorded with an invocation found in
// a harness's wrapper (a wrapper that restores a shell's environment holds
// tens of KiB).
const maxSubmission = 256 << 10

func mustJSON(v any) []byte {
	data, _ := json.Marshal(v)
	return data
}

// allowWrite is check 6: a WRITE runs only where the provider's write
// policy and the permission mode both allow it. It returns who approved.
func (ts *TurnSession) allowWrite(ctx context.Context, c *present.Capability, p *deploy.Provider, regErr error, args map[string]json.RawMessage) (string, error) {
	if c.Class == deploy.Read {
		return "", nil
	}
	if regErr != nil {
		return "", outcome.Refused("", "%s is a WRITE, and the provider registry cannot be read to check its write policy", c.Name)
	}
	if p == nil {
		return "", outcome.Refused("", "%s is a WRITE, and its provider is no longer registered", c.Name)
	}
	verdict, why := decideWrite(p.Write, ts.Turn.PermissionMode)
	switch verdict {
	case writeRefused:
		return "", outcome.Refused("", "%s is a WRITE, and %s", c.Name, why)
	case writeApproved:
		return why, nil
	}
	// confirm × ask: a person decides.
	if ts.g.Settings.ConfirmCommand == "" {
		return "", outcome.Refused("", "%s is a WRITE that needs a person's confirmation, and no way to ask is configured; the operator sets SPEAR_CONFIRM_COMMAND to a program that asks and exits 0 to approve", c.Name)
	}
	if ts.g.Elsewhere {
		return "", ErrHandBack
	}
	req := newConfirmRequest(ts.Turn, c, args).JSON()
	home, err := confirmHome(ts.g.Settings.ConfigDir)
	if err != nil {
		return "", outcome.Refused("", "%s was not confirmed: %v", c.Name, err)
	}
	env, dropped := confirmEnv(os.Environ(), ts.g.getenv()("HOME"), ts.Turn.Workspace, home)
	ok, why := confirm(ctx, ts.g.Settings.ConfirmCommand, env, req, ts.g.Settings.ConfirmTimeout)
	if !ok {
		if len(dropped) > 0 && strings.Contains(why, "exit status 127") {
			why += fmt.Sprintf("; it runs with PATH without the directories the turn's shell can write (%s): name it by an absolute path outside them", strings.Join(dropped, ", "))
		}
		return "", outcome.Refused("", "%s was not confirmed: %s", c.Name, why)
	}
	return "confirmation", nil
}

// provider reads the registry entry of c's provider: nil when the entry
// is gone, and the error when the registry cannot be read.
func (ts *TurnSession) provider(c *present.Capability) (*deploy.Provider, error) {
	reg, err := deploy.LoadRegistry(ts.g.Settings.CapabilitiesFile)
	if err != nil {
		return nil, err
	}
	return reg.Provider(c.Provider), nil
}

// call calls the tool on provider p's server; regErr is why the registry
// could not be read for p. The result comes with a release function that
// ends the use of the server (Outcome.Release); on failure the use has
// already ended.
func (ts *TurnSession) call(ctx context.Context, c *present.Capability, p *deploy.Provider, regErr error, args json.RawMessage) (*mcp.CallToolResult, func(), *outcome.Unavailable) {
	if regErr != nil {
		return nil, nil, &outcome.Unavailable{Provider: c.Provider, Phase: "start", Reason: "could not be started: the provider registry cannot be read", Detail: regErr.Error()}
	}
	if p == nil {
		return nil, nil, &outcome.Unavailable{Provider: c.Provider, Phase: "start", Reason: "is no longer registered", Detail: "the provider's entry is gone from the registry"}
	}
	u, uerr := ts.open(ctx, p, 0) // 0: the client's default bound
	if uerr != nil {
		return nil, nil, uerr
	}
	res, err := u.client.CallTool(ctx, c.Tool, args)
	if err != nil {
		var re *mcp.RPCError
		if errors.As(err, &re) {
			// The server answered, with a JSON-RPC error: a failed call,
			// not an unavailable provider.
			return &mcp.CallToolResult{IsError: true, Content: []mcp.Content{{Type: "text", Text: fmt.Sprintf("the provider answered with error %d: %s", re.Code, re.Message)}}}, u.release, nil
		}
		f := failure(p, "call", err)
		if !interrupted(ctx) {
			u.fail(f.Detail)
		}
		u.release()
		return nil, nil, f
	}
	return res, u.release, nil
}

// RecordRefusal records a submission the terminal refused before the
// gateway's own checks: its words, and its text as written (at most
// maxRefusedText bytes) when it has none that could be taken apart.
// Without a readable turn file it is recorded with empty session and turn.
func (g *Gateway) RecordRefusal(ctx context.Context, args []string, text, reason string) error {
	session, turn := "", ""
	if t, err := deploy.LoadTurn(g.Settings.TurnFile); err == nil {
		session, turn = t.Session, t.Turn
	}
	log, err := audit.Open(g.Settings.AuditFile, session, turn, g.Now)
	if err != nil {
		return err
	}
	defer log.Close()
	f := audit.Fields{"why": reason, "words": nonNil(args)}
	if len(args) == 0 && text != "" {
		if len(text) > maxRefusedText {
			text = strings.ToValidUTF8(text[:maxRefusedText], "") + "…"
		}
		f["text"] = text
	}
	return log.Record(audit.CapabilityRefused, f)
}

// maxRefusedText bounds the text of a refused submission in the trail.
const maxRefusedText = 4 << 10

// Answer runs one invocation's words inside a turn and returns its exit
// status; it implements intercept.Answerer.
func (g *Gateway) Answer(ctx context.Context, args []string, stdout, stderr io.Writer) int {
	status, release, _ := answer(ctx, g, args, stdout, stderr)
	release() // after the result: stopping a server never delays it
	return status
}

// AnswerElsewhere answers a command as Answer does, for a process other
// than this one (Elsewhere must be set): handBack says the command is
// left to that process, which then answers it itself (ErrHandBack); what
// was written before is its to show. release ends the call's use of its
// provider's server: call it once the output has been delivered.
func (g *Gateway) AnswerElsewhere(ctx context.Context, args []string, stdout, stderr io.Writer) (status int, handBack bool, release func()) {
	status, release, err := answer(ctx, g, args, stdout, stderr)
	return status, errors.Is(err, ErrHandBack), release
}
