package cli

import (
	"context"
	"fmt"
	"io"
	"strings"

	"github.com/spf13/cobra"

	"spear/deploy"
	"spear/gateway"
	"spear/mcp"
)

// What the commands that edit the registry (add, import, remove, enable,
// disable) share.

// registryFile is the provider registry's path, or why it cannot be known.
func registryFile(e *env) (string, error) {
	if e.gw.SettingsErr != nil {
		return "", &exitError{code: 1, msg: e.gw.SettingsErr.Error()}
	}
	return e.gw.Settings.CapabilitiesFile, nil
}

// failed makes an error exit status 1 with its text.
func failed(err error) error {
	return &exitError{code: 1, msg: err.Error()}
}

// probe starts a provider once, lists its tools, and writes what check
// writes for it and each tool with its class. It returns the tools, or the
// error that stopped it.
func probe(ctx context.Context, e *env, p *deploy.Provider) ([]mcp.Tool, error) {
	stop := progress(e, "starting "+p.ID)
	tools, phase, err := gateway.Probe(ctx, e.gw.Connector(), p)
	stop()
	r := gateway.ReportProvider(p, tools, phase, err)
	writeStatus(e.stdout, r)
	if err == nil {
		writeCapabilities(e.stdout, r)
	}
	return tools, err
}

// writeSuggestions writes the tools whose annotations claim readOnlyHint
// and that read does not name yet. It is the server's claim, printed for
// the operator to judge; nothing of it is written anywhere.
func writeSuggestions(w io.Writer, registry string, p *deploy.Provider, tools []mcp.Tool) {
	var names []string
	for _, t := range tools {
		a := t.Annotations
		if a != nil && a.ReadOnlyHint != nil && *a.ReadOnlyHint && deploy.ValidToolName(t.Name) && !p.Reads(t.Name) {
			names = append(names, t.Name)
		}
	}
	if len(names) == 0 {
		fmt.Fprintf(w, "suggest   %s: no tool outside \"read\" has annotations that claim readOnlyHint\n", p.ID)
		return
	}
	fmt.Fprintf(w, "suggest   %s: the server's annotations claim readOnlyHint for %s\n", p.ID, strings.Join(names, ", "))
	fmt.Fprintf(w, "suggest   %s: that is the server's own word, and nothing was written: to make them READ, put them in \"read\" yourself (add --replace … --read %s, or edit %s)\n", p.ID, strings.Join(append(p.Read, names...), ","), registry)
}

// completeIDs completes the ids the registry has.
func completeIDs(e *env) func(*cobra.Command, []string, string) ([]string, cobra.ShellCompDirective) {
	return func(cmd *cobra.Command, args []string, toComplete string) ([]string, cobra.ShellCompDirective) {
		if len(args) > 0 || e.gw.SettingsErr != nil {
			return nil, cobra.ShellCompDirectiveNoFileComp
		}
		data, err := deploy.ReadRegistryFile(e.gw.Settings.CapabilitiesFile)
		if err != nil {
			return nil, cobra.ShellCompDirectiveNoFileComp
		}
		ids, _ := deploy.RegistryIDs(e.gw.Settings.CapabilitiesFile, data)
		var out []string
		for _, id := range ids {
			if strings.HasPrefix(id, toComplete) {
				out = append(out, id)
			}
		}
		return out, cobra.ShellCompDirectiveNoFileComp
	}
}
