package cli

import (
	"fmt"
	"io"
	"strings"

	"github.com/spf13/cobra"

	"spear/deploy"
	"spear/gateway"
	"spear/outcome"
	"spear/present"
)

type listOptions struct {
	workspace, class, pass string
	json                   bool
}

func newList(e *env) *cobra.Command {
	var o listOptions
	cmd := &cobra.Command{
		Use:   "list",
		Short: "List every registered provider and its capabilities, or what one turn would be offered",
		Long: `list starts every enabled provider (in parallel), lists its tools and prints
each capability with its class: READ when the registry's "read" names it,
WRITE otherwise, whatever the server says.

With --workspace and --class it shows what such a turn would be offered, and
why each other provider is not admitted.`,
		Args: usageArgs(cobra.NoArgs),
		RunE: func(cmd *cobra.Command, args []string) error { return runList(cmd, e, o) },
	}
	cmd.Flags().StringVar(&o.workspace, "workspace", "", "preview a turn in this workspace directory")
	cmd.Flags().StringVar(&o.class, "class", "", "the previewed turn's class: implementation, mixed, general, standard-question")
	cmd.Flags().StringVar(&o.pass, "pass", "", "the previewed mixed turn's pass: normative, implementation, compliance")
	cmd.Flags().BoolVar(&o.json, "json", false, "print JSON")
	return cmd
}

func runList(cmd *cobra.Command, e *env, o listOptions) error {
	var preview *deploy.Turn
	if o.workspace != "" || o.class != "" || o.pass != "" {
		if o.workspace == "" || o.class == "" {
			return &exitError{code: outcome.ExitRefused, msg: "a preview needs both --workspace DIR and --class CLASS"}
		}
		t, err := deploy.PreviewTurn(o.workspace, deploy.TurnClass(o.class), deploy.Pass(o.pass))
		if err != nil {
			return &exitError{code: outcome.ExitRefused, msg: err.Error()}
		}
		preview = t
	}
	stop := progress(e, "starting providers")
	r, sel, err := e.gw.Inspect(cmd.Context(), preview)
	stop()
	if err != nil {
		return &exitError{code: 1, msg: err.Error()}
	}
	if o.json {
		out := map[string]any{"providers": r.Providers, "problems": r.Problems}
		if sel != nil {
			out["offered"] = sel.Offer.Task != ""
			out["why"] = sel.Offer.Why
			if sel.Project != nil {
				out["project"] = sel.Project.Name
			}
		}
		return printJSON(e.stdout, out)
	}
	w := e.stdout
	if sel != nil {
		project := "(none: an unregistered tree)"
		if sel.Project != nil {
			project = sel.Project.Name
		}
		fmt.Fprintf(w, "turn preview: workspace %s, project %s, class %s\n", sel.Workspace, project, o.class)
		if sel.Offer.Task == "" {
			fmt.Fprintf(w, "offered nothing: %s\n", sel.Offer.Why)
		}
		fmt.Fprintln(w)
	}
	writeProviders(w, r)
	if len(r.Providers) == 0 {
		fmt.Fprintln(w, "no providers are registered")
	}
	for _, p := range r.Problems {
		fmt.Fprintf(w, "problem: %s\n", problemText(p))
	}
	return nil
}

func writeProviders(w io.Writer, r *gateway.Report) {
	for _, p := range r.Providers {
		fmt.Fprintf(w, "%s  (scope %s; tasks %s; write %s)\n", p.ID, p.Scope, joinTasks(p.Tasks), p.Write)
		switch p.Status {
		case "disabled":
			fmt.Fprintln(w, "  disabled (enabled: false); not started")
		case "not_admitted":
			fmt.Fprintf(w, "  not admitted: %s\n", p.Reason)
		case "failed":
			fmt.Fprintf(w, "  failed during %s: %s\n", p.Phase, present.Clean(p.Error))
		default:
			writeCapabilities(w, p)
		}
		for _, x := range p.Excluded {
			fmt.Fprintf(w, "  left out: %s\n", x)
		}
	}
}

// writeCapabilities writes one line per capability of a started
// provider: its name, its class and its description.
func writeCapabilities(w io.Writer, p gateway.ProviderReport) {
	width := 0
	for _, c := range p.Capabilities {
		width = max(width, len(c.Name))
	}
	for _, c := range p.Capabilities {
		fmt.Fprintf(w, "  %-*s  %-5s  %s\n", width, c.Name, c.Class, present.OneLine(c.Description, present.IndexDescriptionMax))
	}
	if len(p.Capabilities) == 0 {
		fmt.Fprintln(w, "  (no tools)")
	}
}

func problemText(p gateway.ProblemReport) string {
	if p.File == "" {
		return p.Message
	}
	return deploy.Problem{File: p.File, Entry: p.Entry, Key: p.Key, Msg: p.Message}.Error()
}

func joinTasks(ts []deploy.Task) string {
	names := make([]string, len(ts))
	for i, t := range ts {
		names[i] = t.String()
	}
	return strings.Join(names, ", ")
}
