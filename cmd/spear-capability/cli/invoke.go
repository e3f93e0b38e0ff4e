package cli

import (
	"github.com/spf13/cobra"

	"spear/outcome"
	"spear/present"
)

func newInvoke(e *env) *cobra.Command {
	return &cobra.Command{
		Use:                "invoke <provider>/<tool> '<arguments as one JSON object>'",
		Short:              "Refuses: invocations are answered inside a turn, by spear-term",
		DisableFlagParsing: true,
		RunE: func(cmd *cobra.Command, args []string) error {
			present.WriteRefusal(e.stderr, "this binary never invokes a tool; inside a turn, spear-term answers \"spear-capability invoke\" itself, with the turn's checks and audit", "")
			return &exitError{code: outcome.ExitRefused}
		},
	}
}
