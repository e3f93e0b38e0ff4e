package gateway

import (
	"context"
	"path/filepath"
	"strings"
	"sync"

	"spear/audit"
	"spear/deploy"
	"spear/mcp"
	"spear/present"
	"spear/realshell"
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
	// Interpreter is what the #! line of the provider's program runs, when
	// the turn's shell may write it; nil otherwise.
	Interpreter *Interpreter `json:"writable_interpreter,omitempty"`
}

// Interpreter is an interpreter a provider's program names in its #! line
// (an absolute path, or a name /usr/bin/env looks up on PATH) that was
// found in a directory the turn's shell may write in.
type Interpreter struct {
	// Script is the provider's program, whose #! line names it.
	Script string `json:"script"`
	// Name is the interpreter as the line names it.
	Name string `json:"name"`
	// Path is the file found (or the file a link to it leads to).
	Path string `json:"path"`
	// LeftOut is set when only the harness's PATH finds it there: the
	// server's PATH leaves that directory out, and runs Instead, or
	// finds none when Instead is "".
	LeftOut bool   `json:"left_out,omitempty"`
	Instead string `json:"instead,omitempty"`
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
	// WritableShell is the real shell the turn's commands go to
	// (SPEAR_REAL_SHELL, or the file a link to it leads to) when the
	// turn's shell may write it (see deploy.TurnWritable): a turn could
	// put a program of its own in its place, which its later commands,
	// and every later turn's, would run in; "" otherwise.
	WritableShell string `json:"writable_real_shell,omitempty"`
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
	r.WritableShell = writableShell(g.getenv(), preview)
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
			pr.Interpreter = writableInterpreter(p, g.getenv(), workspace)
			go func(i int, p *deploy.Provider, pr ProviderReport) {
				defer wg.Done()
				r.Providers[i] = inspectProvider(ctx, g.connect(), p, pr, workspace, preview != nil && sel.Offer.ReadOnly)
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
	prog := program(p, getenv, workspace)
	if prog == "" {
		return ""
	}
	return writableFile(p, prog, getenv("HOME"), workspace, true)
}

// program is the program p's server runs, found on the PATH it gets; ""
// when there is none.
func program(p *deploy.Provider, getenv func(string) string, workspace string) string {
	server, _ := serverGetenv(p, getenv, workspace)
	prog, err := clientOptions(p, server).Program()
	if err != nil {
		return ""
	}
	if !filepath.IsAbs(prog) {
		prog = filepath.Join(p.Dir, prog)
	}
	return prog
}

// writableFile returns file (or the file a link to it leads to) when it is
// in a directory the turn's shell may write in, and, with private, none of
// p's private paths covers it; "" otherwise. p may be nil without private.
func writableFile(p *deploy.Provider, file, home, workspace string, private bool) string {
	names := []string{file}
	if real, err := filepath.EvalSymlinks(file); err == nil && real != file {
		names = append(names, real)
	}
	for _, name := range names {
		if (!private || !deploy.Inside(p.Private, name)) && deploy.TurnWritable(filepath.Dir(name), home, workspace) {
			return name
		}
	}
	return ""
}

// writableShell returns the real shell (realshell.Path), or the file a
// link to it leads to, when it is in a directory the turn's shell may write
// in, for the turn preview names, if any; "" otherwise.
func writableShell(getenv func(string) string, preview *deploy.Turn) string {
	workspace := ""
	if preview != nil {
		workspace = preview.Workspace
	}
	return writableFile(nil, realshell.Path(getenv), getenv("HOME"), workspace, false)
}

// writableInterpreter returns the interpreter the #! line of p's program
// names when the turn's shell may write it, as writableProgram does for
// the program: an absolute path, or a name /usr/bin/env looks up on the
// PATH the server gets. A name the harness's PATH finds in such a
// directory, which the server's PATH leaves out, is returned too (LeftOut,
// private or not: the server runs another interpreter, or none); nil
// otherwise.
func writableInterpreter(p *deploy.Provider, getenv func(string) string, workspace string) *Interpreter {
	prog := program(p, getenv, workspace)
	if prog == "" {
		return nil
	}
	interp, arg, ok := shebang(prog)
	if !ok {
		return nil
	}
	home := getenv("HOME")
	if !filepath.IsAbs(interp) {
		interp = filepath.Join(p.Dir, interp) // the kernel takes it from the server's directory
	}
	if w := writableFile(p, interp, home, workspace, true); w != "" {
		return &Interpreter{Script: prog, Name: interp, Path: w}
	}
	if filepath.Base(interp) != "env" {
		return nil
	}
	name := envProgram(arg)
	switch {
	case name == "":
		return nil
	case strings.Contains(name, "/"):
		file := name
		if !filepath.IsAbs(file) {
			file = filepath.Join(p.Dir, file)
		}
		if w := writableFile(p, file, home, workspace, true); w != "" {
			return &Interpreter{Script: prog, Name: name, Path: w}
		}
		return nil
	}
	server, _ := serverGetenv(p, getenv, workspace)
	found := findOnPath(name, clientOptions(p, server).Path(), p.Dir)
	if found != "" {
		if w := writableFile(p, found, home, workspace, true); w != "" {
			return &Interpreter{Script: prog, Name: name, Path: w}
		}
	}
	if _, ok := p.Env["PATH"]; ok {
		return nil // the harness's PATH is not the server's
	}
	if first := findOnPath(name, getenv("PATH"), p.Dir); first != "" && first != found {
		if w := writableFile(p, first, home, workspace, false); w != "" {
			return &Interpreter{Script: prog, Name: name, Path: w, LeftOut: true, Instead: found}
		}
	}
	return nil
}

func inspectProvider(ctx context.Context, connect Connector, p *deploy.Provider, pr ProviderReport, workspace string, readOnly bool) ProviderReport {
	tools, phase, err := probe(ctx, connect, p, workspace)
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
