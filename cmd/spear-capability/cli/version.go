package cli

import (
	"fmt"

	"github.com/spf13/cobra"

	"spear/internal/version"
	"spear/mcp"
)

func newVersion(e *env) *cobra.Command {
	return &cobra.Command{
		Use:   "version",
		Short: "Print the version and the MCP protocol version spoken",
		Args:  cobra.NoArgs,
		Run: func(cmd *cobra.Command, args []string) {
			fmt.Fprintf(e.stdout, "spear-capability %s (MCP %s, stdio)\n", version.String(), mcp.ProtocolVersion)
		},
	}
}
