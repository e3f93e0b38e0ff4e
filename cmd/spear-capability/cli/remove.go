package cli

import (
	"fmt"

	"github.com/spf13/cobra"

	"spear/deploy"
)

func newRemove(e *env) *cobra.Command {
	return &cobra.Command{
		Use:   "remove <id>",
		Short: "Take one provider's entry out of the registry",
		Long: `remove takes the entry with this id out of capabilities.json, valid or not.
The file is rewritten atomically and every other entry's text is kept byte for
byte. To keep an entry without using it, use disable instead.`,
		Example:           `  spear-capability remove notes`,
		Args:              usageArgs(cobra.ExactArgs(1)),
		ValidArgsFunction: completeIDs(e),
		RunE:              func(cmd *cobra.Command, args []string) error { return runRemove(e, args[0]) },
	}
}

func runRemove(e *env, id string) error {
	registry, err := registryFile(e)
	if err != nil {
		return err
	}
	_, err = deploy.EditRegistryFile(registry, func(data []byte) ([]byte, error) {
		return deploy.RemoveEntry(registry, data, id)
	})
	if err != nil {
		return failed(err)
	}
	fmt.Fprintf(e.stdout, "removed   %s from %s\n", id, registry)
	return nil
}
