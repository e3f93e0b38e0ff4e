package cli

import (
	"fmt"

	"github.com/spf13/cobra"

	"spear/deploy"
)

func newEnable(e *env) *cobra.Command {
	return &cobra.Command{
		Use:   "enable <id>",
		Short: `Use a provider's entry again (takes "enabled": false out)`,
		Long: `enable takes "enabled": false out of the entry with this id, so that turns
use it again (true is the default). That entry is written anew in the
registry's key order; every other entry's text is kept byte for byte. The
entry must pass the registry loader afterwards.`,
		Example:           `  spear-capability enable notes`,
		Args:              usageArgs(cobra.ExactArgs(1)),
		ValidArgsFunction: completeIDs(e),
		RunE:              func(cmd *cobra.Command, args []string) error { return runSetEnabled(e, args[0], true) },
	}
}

// runSetEnabled enables or disables one entry.
func runSetEnabled(e *env, id string, on bool) error {
	registry, err := registryFile(e)
	if err != nil {
		return err
	}
	changed, err := deploy.EditRegistryFile(registry, func(data []byte) ([]byte, error) {
		return deploy.SetEnabled(registry, data, id, on)
	})
	if err != nil {
		return failed(err)
	}
	state := "disabled"
	if on {
		state = "enabled"
	}
	if !changed {
		fmt.Fprintf(e.stdout, "unchanged %s is already %s\n", id, state)
		return nil
	}
	fmt.Fprintf(e.stdout, "%-9s %s in %s\n", state, id, registry)
	return nil
}
