package gateway

import (
	"os"
	"testing"

	"spear/internal/fakemcp"
)

// fakeServerEnv, set in a provider's env, makes the test binary the fake
// MCP server, so that tests start real providers without building one.
const fakeServerEnv = "GATEWAYTEST_FAKE_MCP"

func TestMain(m *testing.M) {
	if os.Getenv(fakeServerEnv) == "1" {
		os.Exit(fakemcp.Main(os.Args[1:]))
	}
	os.Exit(m.Run())
}
