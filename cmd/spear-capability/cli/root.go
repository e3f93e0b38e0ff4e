// Package cli is spear-capability's command line: cobra wiring, flags and
// output formats over the gateway and audit packages.
package cli

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"os"
	"strings"

	"github.com/spf13/cobra"

	"spear/confine"
	"spear/deploy"
	"spear/gateway"
	"spear/internal/handoff"
	"spear/netwall"
	"spear/outcome"
	"spear/present"
	"spear/turnshell"
	"spear/warm"
)

// exitError carries an exit status out of a command.
type exitError struct {
	code int
	msg  string
}

func (e *exitError) Error() string { return e.msg }

// env is what every subcommand reads from its process.
type env struct {
	getenv func(string) string
	stdout io.Writer
	stderr io.Writer
	gw     *gateway.Gateway
}

// Main runs spear-capability and returns its exit status; it is the only
// place where errors become exit statuses. Given warm.HostArg first, it is
// a session's host instead (context and invocations start one for a
// turn's family); given handoff.Arg, the entry point spear-term hands
// invocations and stream mode to; given confine.LauncherArg, the launcher
// that confines stream mode's shell.
func Main() int {
	if len(os.Args) > 1 {
		switch os.Args[1] {
		case warm.HostArg:
			return warm.HostMain(os.Args[2:], hostAnswer)
		case handoff.Arg:
			return termMain(os.Args[2:])
		case confine.LauncherArg:
			return confine.LauncherMain(os.Args[2:])
		case netwall.HolderArg:
			return netwall.HolderMain(os.Args[2:])
		case netwall.KeeperArg:
			return netwall.KeeperMain(os.Args[2:])
		}
	}
	return run(context.Background(), os.Args[1:], os.Getenv, os.Stdout, os.Stderr, warm.Self())
}

// run runs the command line args; host starts sessions' hosts (nil: none,
// every provider's server is started for one use).
func run(ctx context.Context, args []string, getenv func(string) string, stdout, stderr io.Writer, host *warm.Launcher) int {
	// Reached through the turn's shell (a pipe, eval, xargs, bash -c, a
	// variable…), the binary does nothing but say how to write it.
	if turnshell.Inside(getenv) {
		fmt.Fprint(stderr, turnshell.NestedMessage)
		return outcome.ExitRefused
	}
	gw := gateway.New(getenv)
	gw.Warm = host
	e := &env{getenv: getenv, stdout: stdout, stderr: stderr, gw: gw}
	root := newRoot(e)
	root.SetArgs(args)
	root.SetOut(stdout)
	root.SetErr(stderr)
	cmd, err := root.ExecuteContextC(ctx)
	if err == nil {
		return 0
	}
	if cmd == nil {
		cmd = root
	}
	var ee *exitError
	if errors.As(err, &ee) {
		if ee.msg != "" {
			fmt.Fprintf(stderr, "spear-capability: %s\n", ee.msg)
		}
		return ee.code
	}
	fmt.Fprintf(stderr, "spear-capability: error: %v\n", err)
	var ue *usageError
	if errors.As(err, &ue) {
		fmt.Fprintf(stderr, "spear-capability: hint: run %s --help\n", cmd.CommandPath())
		return outcome.ExitRefused
	}
	return 1
}

// usageError is a command line that names an unknown command, a bad flag
// or the wrong number of arguments: exit status 2.
type usageError struct{ err error }

func (e *usageError) Error() string { return e.err.Error() }
func (e *usageError) Unwrap() error { return e.err }

// usageArgs makes an argument check's failure a usage error.
func usageArgs(check cobra.PositionalArgs) cobra.PositionalArgs {
	return func(cmd *cobra.Command, args []string) error {
		if err := check(cmd, args); err != nil {
			return &usageError{err}
		}
		return nil
	}
}

func newRoot(e *env) *cobra.Command {
	root := &cobra.Command{
		Use:   "spear-capability",
		Short: "Register, see and check the external capabilities a SPEAR deployment offers its turns",
		Long: `spear-capability is the operators' command for SPEAR's external capabilities.

It registers providers in the provider registry (capabilities.json): add one
by hand, or import the servers another MCP host's file lists (Claude Code,
Codex CLI, Gemini CLI, VS Code, Cursor); remove, enable and disable them. It
reads that registry and the project registry (projects.json), starts
providers to list their tools, prints the context block a turn is shown, and
reads the audit trail. It never calls a tool: inside a turn,
"spear-capability list|describe|invoke" is answered by spear-term, the turn's
terminal.

Files: SPEAR_CONFIG_DIR (default ~/.config/spear) holds projects.json and
capabilities.json; SPEAR_PROJECTS_FILE, SPEAR_CAPABILITIES_FILE,
SPEAR_TURN_FILE, SPEAR_STATE_DIR and SPEAR_AUDIT_FILE override them.`,
		SilenceErrors: true,
		SilenceUsage:  true,
		// Without a subcommand: help; with an unknown one, a usage error.
		Args: func(cmd *cobra.Command, args []string) error {
			if len(args) > 0 {
				return &usageError{fmt.Errorf("unknown command %q for %q", args[0], cmd.CommandPath())}
			}
			return nil
		},
		RunE: func(cmd *cobra.Command, args []string) error { return cmd.Help() },
	}
	root.SetFlagErrorFunc(func(cmd *cobra.Command, err error) error { return &usageError{err} })
	root.AddCommand(newAdd(e), newImport(e), newRemove(e), newEnable(e), newDisable(e),
		newList(e), newDescribe(e), newCheck(e), newContext(e), newAudit(e), newInvoke(e), newSessions(e), newVersion(e))
	return root
}

// printJSON writes v as indented JSON, with control and invisible
// characters inside strings escaped (present.SafeJSON).
func printJSON(w io.Writer, v any) error {
	data, err := json.MarshalIndent(v, "", "  ")
	if err != nil {
		return err
	}
	_, err = io.WriteString(w, present.SafeJSON(string(data))+"\n")
	return err
}

// completeCapabilities completes provider ids from the registry and, once
// a provider is named, its capabilities.
func completeCapabilities(e *env) func(*cobra.Command, []string, string) ([]string, cobra.ShellCompDirective) {
	return func(cmd *cobra.Command, args []string, toComplete string) ([]string, cobra.ShellCompDirective) {
		if len(args) > 0 {
			return nil, cobra.ShellCompDirectiveNoFileComp
		}
		reg, err := deploy.LoadRegistry(e.gw.Settings.CapabilitiesFile)
		if err != nil {
			return nil, cobra.ShellCompDirectiveNoFileComp
		}
		// After "<provider>/", start that provider (bounded by its
		// timeout) and complete its tools; before it, complete ids.
		if id, _, ok := strings.Cut(toComplete, "/"); ok {
			p := reg.Provider(id)
			if p == nil || !p.Enabled {
				return nil, cobra.ShellCompDirectiveNoFileComp
			}
			tools, _, err := gateway.Probe(cmd.Context(), e.gw.Connector(), p)
			if err != nil {
				return nil, cobra.ShellCompDirectiveNoFileComp
			}
			var out []string
			for _, t := range tools {
				if name := p.ID + "/" + t.Name; strings.HasPrefix(name, toComplete) {
					out = append(out, name+"\t"+p.ClassOf(t.Name).String()+" "+present.OneLine(t.Description, 60))
				}
			}
			return out, cobra.ShellCompDirectiveNoFileComp
		}
		var out []string
		for _, p := range reg.Providers {
			if strings.HasPrefix(p.ID, toComplete) {
				out = append(out, p.ID+"/")
			}
		}
		return out, cobra.ShellCompDirectiveNoFileComp | cobra.ShellCompDirectiveNoSpace
	}
}
