package cli

import (
	"errors"
	"fmt"

	"spear/deploy"
	"spear/outcome"
	"spear/present"

	"github.com/spf13/cobra"
)

func newContext(e *env) *cobra.Command {
	return &cobra.Command{
		Use:   "context",
		Short: "Print the block the harness puts into the turn's context",
		Long: `context reads the turn file (SPEAR_TURN_FILE), builds the turn's family if the
turn has none yet (starting the admitted providers), and prints what the turn
is offered: whole, as an index, the unavailable providers by name, or why
nothing is offered. It exits 2 when the turn file is invalid, after printing
why for the turn.`,
		Args: usageArgs(cobra.NoArgs),
		RunE: func(cmd *cobra.Command, args []string) error {
			ts, err := e.gw.Open(cmd.Context())
			if err != nil {
				var te *deploy.TurnError
				var re *outcome.Refusal
				switch {
				case errors.As(err, &te):
					fmt.Fprint(e.stdout, present.NothingOffered("the turn file is invalid: "+te.Problem()))
				case errors.As(err, &re):
					fmt.Fprint(e.stdout, present.NothingOffered(re.Why))
					if re.Detail != "" {
						return &exitError{code: outcome.ExitRefused, msg: re.Detail}
					}
				}
				return &exitError{code: outcome.ExitRefused, msg: err.Error()}
			}
			defer ts.Close()
			fmt.Fprint(e.stdout, ts.State.ContextText())
			return nil
		},
	}
}
