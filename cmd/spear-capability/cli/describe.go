package cli

import (
	"fmt"
	"strings"

	"github.com/spf13/cobra"

	"spear/deploy"
	"spear/gateway"
	"spear/outcome"
	"spear/present"
)

type describeOptions struct{ json bool }

func newDescribe(e *env) *cobra.Command {
	var o describeOptions
	cmd := &cobra.Command{
		Use:               "describe <provider>/<tool>",
		Short:             "Show one capability's class, description and schemas",
		Args:              usageArgs(cobra.ExactArgs(1)),
		ValidArgsFunction: completeCapabilities(e),
		RunE:              func(cmd *cobra.Command, args []string) error { return runDescribe(cmd, e, o, args[0]) },
	}
	cmd.Flags().BoolVar(&o.json, "json", false, "print JSON")
	return cmd
}

func runDescribe(cmd *cobra.Command, e *env, o describeOptions, name string) error {
	id, tool, ok := strings.Cut(name, "/")
	if !ok || id == "" || tool == "" {
		return &exitError{code: outcome.ExitRefused, msg: fmt.Sprintf("%q is not a capability name; write <provider>/<tool>, as in notes/read_note", name)}
	}
	reg, err := deploy.LoadRegistry(e.gw.Settings.CapabilitiesFile)
	if err != nil {
		return &exitError{code: 1, msg: err.Error()}
	}
	p := reg.Provider(id)
	if p == nil {
		return &exitError{code: outcome.ExitRefused, msg: fmt.Sprintf("no provider %q is registered in %s (spear-capability list shows them)", id, reg.Path)}
	}
	stop := progress(e, "starting "+id)
	tools, phase, err := gateway.Probe(cmd.Context(), e.gw.Connector(), p)
	stop()
	if err != nil {
		return &exitError{code: outcome.ExitUnavailable, msg: fmt.Sprintf("unavailable: %s: failed during %s: %s", id, phase, present.Clean(err.Error()))}
	}
	for _, t := range tools {
		if t.Name == tool {
			c := present.NewCapability(p, t)
			if o.json {
				return printJSON(e.stdout, c)
			}
			fmt.Fprint(e.stdout, present.DescribeText(&c))
			return nil
		}
	}
	return &exitError{code: outcome.ExitRefused, msg: fmt.Sprintf("provider %s offers no tool %q (spear-capability list shows its tools)", id, tool)}
}
