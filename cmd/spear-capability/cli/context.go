package cli

import (
	"errors"
	"fmt"

	"github.com/spf13/cobra"

	"spear/gateway"
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
		Args: cobra.NoArgs,
		RunE: func(cmd *cobra.Command, args []string) error {
			ts, err := e.gw.Open(cmd.Context())
			if err != nil {
				var te *gateway.TurnError
				var re *gateway.RefusalError
				switch {
				case errors.As(err, &te):
					msg := te.Msg
					if te.Field != "" {
						msg = fmt.Sprintf("field %q %s", te.Field, te.Msg)
					}
					fmt.Fprintf(e.stdout, "No external capabilities are offered to this turn: the turn file is invalid: %s.\n", msg)
				case errors.As(err, &re):
					fmt.Fprintf(e.stdout, "No external capabilities are offered to this turn: %s.\n", re.Why)
					if re.Detail != "" {
						return &exitError{code: gateway.ExitRefused, msg: re.Detail}
					}
				}
				return &exitError{code: gateway.ExitRefused, msg: err.Error()}
			}
			defer ts.Close()
			fmt.Fprint(e.stdout, gateway.ContextText(ts.State))
			return nil
		},
	}
}
