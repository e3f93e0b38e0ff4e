package cli

import "github.com/spf13/cobra"

func newDisable(e *env) *cobra.Command {
	return &cobra.Command{
		Use:   "disable <id>",
		Short: `Keep a provider's entry without using it ("enabled": false)`,
		Long: `disable writes "enabled": false into the entry with this id: the entry stays,
and no turn uses it until enable. That entry is written anew in the registry's
key order; every other entry's text is kept byte for byte. The entry must pass
the registry loader afterwards.`,
		Example:           `  spear-capability disable notes`,
		Args:              usageArgs(cobra.ExactArgs(1)),
		ValidArgsFunction: completeIDs(e),
		RunE:              func(cmd *cobra.Command, args []string) error { return runSetEnabled(e, args[0], false) },
	}
}
