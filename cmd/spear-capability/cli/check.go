package cli

import (
	"fmt"
	"io"
	"time"

	"spear/present"

	"github.com/spf13/cobra"

	"spear/gateway"
)

type checkOptions struct{ json bool }

func newCheck(e *env) *cobra.Command {
	var o checkOptions
	cmd := &cobra.Command{
		Use:   "check",
		Short: "Validate both registries and start every enabled provider",
		Long: `check validates capabilities.json and projects.json, then starts every enabled
provider in parallel and lists its tools. It prints one line per provider (ok
with its tool count, or what failed, in full) and one per problem, and exits 1
when there is any problem.`,
		Args: usageArgs(cobra.NoArgs),
		RunE: func(cmd *cobra.Command, args []string) error { return runCheck(cmd, e, o) },
	}
	cmd.Flags().BoolVar(&o.json, "json", false, "print JSON")
	return cmd
}

func runCheck(cmd *cobra.Command, e *env, o checkOptions) error {
	stop := progress(e, "starting providers")
	r, _, err := e.gw.Inspect(cmd.Context(), nil)
	stop()
	if err != nil {
		if o.json {
			printJSON(e.stdout, map[string]any{"ok": false, "error": err.Error()})
		}
		return &exitError{code: 1, msg: err.Error()}
	}
	if o.json {
		printJSON(e.stdout, r)
	} else {
		w := e.stdout
		fmt.Fprintf(w, "registry %s\nprojects %s\nterminal %s\n", r.Registry, r.Projects, r.Terminal)
		for _, p := range r.Providers {
			writeStatus(w, p)
		}
		for _, p := range r.Problems {
			fmt.Fprintf(w, "problem   %s\n", problemText(p))
		}
		if r.WritableShell != "" {
			fmt.Fprintf(w, "warning   SPEAR_REAL_SHELL: %s is in a directory the turn's shell may write in (HOME, the workspace or a temporary one): a turn could put a program of its own in its place, which its later commands, and every later turn's, would run in; install bash where the turn cannot write, or unset SPEAR_REAL_SHELL for /bin/bash\n", r.WritableShell)
		}
		if f := r.AuditLastFailure; r.AuditFailures > 0 && f != nil {
			fmt.Fprintf(w, "warning   audit: %d events could not be written to the trail, the latest at %s (%s: %s); each is listed in %s (remove it once read)\n",
				r.AuditFailures, f.Time.Format(time.RFC3339), f.Event, f.Error, r.AuditFailedFile)
		}
	}
	if !r.OK {
		return &exitError{code: 1}
	}
	return nil
}

// writeStatus writes check's lines for one provider.
func writeStatus(w io.Writer, p gateway.ProviderReport) {
	switch p.Status {
	case gateway.StatusOK:
		fmt.Fprintf(w, "ok        %s: %d tools (%d READ, %d WRITE)\n", p.ID, p.Tools, p.Read, p.Writes)
		for _, name := range p.MissingRead {
			fmt.Fprintf(w, "warning   %s: read names %q, which the server does not offer\n", p.ID, name)
		}
	case gateway.StatusDisabled:
		fmt.Fprintf(w, "disabled  %s: enabled is false; not started\n", p.ID)
	default:
		fmt.Fprintf(w, "failed    %s: during %s: %s\n", p.ID, p.Phase, present.Clean(p.Error))
	}
	for _, x := range p.Excluded {
		fmt.Fprintf(w, "warning   left out of every turn: %s\n", x)
	}
	if p.Writable != "" {
		fmt.Fprintf(w, "warning   %s: runs %s, in a directory the turn's shell may write in (HOME, the workspace or a temporary one): a turn could change it and have it run with the provider's env; install it elsewhere, or list its directory in private\n", p.ID, p.Writable)
	}
	if i := p.Interpreter; i != nil {
		writeInterpreter(w, p.ID, i)
	}
}

// writeInterpreter writes check's warning about the interpreter a
// provider's program runs.
func writeInterpreter(w io.Writer, id string, i *gateway.Interpreter) {
	runs := i.Path
	if i.Name != i.Path {
		runs = i.Name + " (" + i.Path + ")"
	}
	if !i.LeftOut {
		fmt.Fprintf(w, "warning   %s: runs %s, whose #! line runs %s, in a directory the turn's shell may write in (HOME, the workspace or a temporary one): a turn could change it and have it run with the provider's env; install it elsewhere, or list its directory in private\n", id, i.Script, runs)
		return
	}
	instead := "finds no " + i.Name
	if i.Instead != "" {
		instead = "runs " + i.Instead + " instead"
	}
	fmt.Fprintf(w, "warning   %s: runs %s, whose #! line runs %s, found on PATH as %s, in a directory the turn's shell may write in (HOME, the workspace or a temporary one); the server's PATH leaves that directory out, so it %s: install it elsewhere, or name PATH in the entry's env and list its directory in private\n", id, i.Script, i.Name, i.Path, instead)
}
