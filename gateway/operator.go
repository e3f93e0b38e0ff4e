package gateway

import (
	"context"
	"path/filepath"
	"sync"

	"spear/audit"
	"spear/deploy"
	"spear/mcp"
	"spear/present"
)

// ProblemReport is a Problem as --json shows it.
type ProblemReport struct {
	File    string `json:"file"`
	Entry   string `json:"entry,omitempty"`
	Key     string `json:"key,omitempty"`
	Message string `json:"message"`
}

// ProviderStatus is what check found of one provider.
type ProviderStatus string

// Provider statuses in a Report.
const (
	StatusOK          ProviderStatus = "ok"           // started and listed its tools
	StatusFailed      ProviderStatus = "failed"       // could not start, initialize or list
	StatusDisabled    ProviderStatus = "disabled"     // enabled: false
	StatusNotAdmitted ProviderStatus = "not_admitted" // the previewed turn does not admit it
)

func (s ProviderStatus) String() string { return string(s) }

// ProviderReport is one provider as check and list show it to an operator,
// with full details: the operator owns the registry.
type ProviderReport struct {
	ID           string               `json:"id"`
	Status       ProviderStatus       `json:"status"`
	Scope        string               `json:"scope"`
	Tasks        []deploy.Task        `json:"tasks"`
	Write        deploy.WritePolicy   `json:"write"`
	Tools        int                  `json:"tools"`
	Read         int                  `json:"read"`
	Writes       int                  `json:"writes"`
	Phase        string               `json:"phase,omitempty"`
	Error        string               `json:"error,omitempty"`
	Reason       string               `json:"reason,omitempty"` // why not admitted
	Capabilities []present.Capability `json:"capabilities,omitempty"`
	// MissingRead names tools that read lists but the server does not offer.
	MissingRead []string `json:"missing_read,omitempty"`
	// Excluded are the tools a turn would leave out, and why.
	Excluded []string `json:"excluded,omitempty"`
	// Writable is the program the provider's server runs when the turn's
	// shell may write it (see deploy.TurnWritable), which would let a turn
	// change what runs with the provider's secrets; "" otherwise.
	Writable string `json:"writable_program,omitempty"`
}

// Report is what check and list print.
type Report struct {
	Registry  string           `json:"registry"`
	Projects  string           `json:"projects"`
	Providers []ProviderReport `json:"providers"`
	Problems  []ProblemReport  `json:"problems"`
	// Terminal says whether and how the turn's terminal is confined on
	// this system (mechanism, Landlock ABI), or why not.
	Terminal string `json:"terminal"`
	// AuditFailures is how many events the audit trail did not get, all
	// sessions together (audit.Failures); AuditLastFailure is the latest.
	AuditFailures    int            `json:"audit_failures"`
	AuditLastFailure *audit.Failure `json:"audit_last_failure,omitempty"`
	AuditFailedFile  string         `json:"audit_failed_file,omitempty"`
	OK               bool           `json:"ok"`
}

func problemReports(ps []deploy.Problem) []ProblemReport {
	out := []ProblemReport{}
	for _, p := range ps {
		out = append(out, ProblemReport{File: p.File, Entry: p.Entry, Key: p.Key, Message: p.Msg})
	}
	return out
}

// Inspect validates both registries and starts every enabled provider in
// parallel (only the admitted ones when preview names a turn), listing its
// tools. It never calls a tool.
func (g *Gateway) Inspect(ctx context.Context, preview *deploy.Turn) (*Report, *Selection, error) {
	if g.SettingsErr != nil {
		return nil, nil, g.SettingsErr
	}
	r := &Report{Registry: g.Settings.CapabilitiesFile, Projects: g.Settings.ProjectsFile, Providers: []ProviderReport{}, Problems: []ProblemReport{}}
	var refuse string
	r.AuditFailures, r.AuditLastFailure, _ = audit.Failures(g.Settings.AuditFile, "")
	if r.AuditFailures > 0 {
		r.AuditFailedFile = audit.FailuresFile(g.Settings.AuditFile)
	}
	r.Terminal, refuse = g.Confinement()
	if refuse != "" {
		r.Problems = append(r.Problems, ProblemReport{Message: refuse})
	}
	reg, err := deploy.LoadRegistry(g.Settings.CapabilitiesFile)
	if err != nil {
		return nil, nil, err
	}
	projects, err := deploy.LoadProjects(g.Settings.ProjectsFile)
	if err != nil {
		return nil, nil, err
	}
	r.Problems = append(r.Problems, problemReports(reg.Problems)...)
	r.Problems = append(r.Problems, problemReports(projects.Problems)...)
	if reg.Missing {
		r.Problems = append(r.Problems, ProblemReport{File: reg.Path, Message: "there is no provider registry here; write one, or set SPEAR_CAPABILITIES_FILE"})
	}
	if projects.Missing {
		r.Problems = append(r.Problems, ProblemReport{File: projects.Path, Message: "there is no project registry here, so no provider reaches any turn; write one, or set SPEAR_PROJECTS_FILE"})
	}
	for _, p := range reg.Providers {
		if p.Scope.Kind == "" {
			r.Problems = append(r.Problems, ProblemReport{File: reg.Path, Entry: p.ID, Key: "scope",
				Message: "applies nowhere: add a scope (global, corpus <project>[, ...], family <name>[, ...] or path <dir>)"})
		}
	}
	var sel *Selection
	admitted := map[string]string{} // provider → reason it is not admitted
	if preview != nil {
		sel = selectProviders(reg, projects, preview)
		for _, d := range sel.Decisions {
			if !d.Admitted {
				admitted[d.Provider.ID] = d.Reason
			}
		}
	}
	r.Providers = make([]ProviderReport, len(reg.Providers))
	var wg sync.WaitGroup
	for i, p := range reg.Providers {
		pr := ProviderReport{ID: p.ID, Scope: p.Scope.String(), Tasks: p.Tasks, Write: p.Write}
		switch reason, no := admitted[p.ID]; {
		case no:
			pr.Status, pr.Reason = StatusNotAdmitted, reason
		case !p.Enabled:
			pr.Status = StatusDisabled
		default:
			// Each goroutine owns its own slot, written once.
			wg.Add(1)
			workspace := ""
			if preview != nil {
				workspace = preview.Workspace
			}
			pr.Writable = writableProgram(p, g.getenv(), workspace)
			go func(i int, p *deploy.Provider, pr ProviderReport) {
				defer wg.Done()
				r.Providers[i] = inspectProvider(ctx, g.connect(), p, pr, preview != nil && sel.Offer.ReadOnly)
			}(i, p, pr)
			continue
		}
		r.Providers[i] = pr
	}
	wg.Wait()
	r.OK = len(r.Problems) == 0
	for _, pr := range r.Providers {
		if pr.Status == StatusFailed {
			r.OK = false
		}
	}
	return r, sel, nil
}

// writableProgram returns the program p's server runs (or the file a link
// to it leads to) when it is in a directory the turn's shell may write in
// and none of p's private paths covers it; "" otherwise.
func writableProgram(p *deploy.Provider, getenv func(string) string, workspace string) string {
	prog, err := clientOptions(p, getenv).Program()
	if err != nil {
		return ""
	}
	if !filepath.IsAbs(prog) {
		prog = filepath.Join(p.Dir, prog)
	}
	names := []string{prog}
	if real, err := filepath.EvalSymlinks(prog); err == nil && real != prog {
		names = append(names, real)
	}
	for _, name := range names {
		if !deploy.Inside(p.Private, name) && deploy.TurnWritable(filepath.Dir(name), getenv("HOME"), workspace) {
			return name
		}
	}
	return ""
}

func inspectProvider(ctx context.Context, connect Connector, p *deploy.Provider, pr ProviderReport, readOnly bool) ProviderReport {
	tools, phase, err := Probe(ctx, connect, p)
	return reportTools(p, pr, tools, phase, err, readOnly)
}

// ReportProvider is what check says of one provider, from what Probe
// returned for it: its status, and each tool with the class the registry
// gives it.
func ReportProvider(p *deploy.Provider, tools []mcp.Tool, phase string, err error) ProviderReport {
	pr := ProviderReport{ID: p.ID, Scope: p.Scope.String(), Tasks: p.Tasks, Write: p.Write}
	return reportTools(p, pr, tools, phase, err, false)
}

func reportTools(p *deploy.Provider, pr ProviderReport, tools []mcp.Tool, phase string, err error, readOnly bool) ProviderReport {
	if err != nil {
		pr.Status, pr.Phase, pr.Error = StatusFailed, phase, err.Error()
		return pr
	}
	pr.Status = StatusOK
	offered := map[string]bool{}
	for _, t := range tools {
		offered[t.Name] = true
	}
	for _, name := range p.Read {
		if !offered[name] {
			pr.MissingRead = append(pr.MissingRead, name)
		}
	}
	// The operator sees what a turn would keep, and what it would leave out.
	k := keepTools(p, tools, readOnly)
	pr.Excluded = k.excluded
	if k.over != nil {
		pr.Status, pr.Phase, pr.Error = StatusFailed, k.over.Phase, k.over.Detail
		return pr
	}
	for _, c := range k.caps {
		pr.Tools++
		if c.Class == deploy.Read {
			pr.Read++
		} else {
			pr.Writes++
		}
	}
	pr.Capabilities = k.caps
	return pr
}
