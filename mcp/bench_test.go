package mcp

import (
	"context"
	"encoding/json"
	"testing"

	"spear/internal/fakemcp"
)

// BenchmarkCallRoundTrip is one tools/call on a started, initialized server.
func BenchmarkCallRoundTrip(b *testing.B) {
	c, err := Connect(context.Background(), fake())
	if err != nil {
		b.Fatal(err)
	}
	defer c.Close()
	args := json.RawMessage(`{"text":"hi"}`)
	b.ResetTimer()
	for i := 0; i < b.N; i++ {
		if _, err := c.CallTool(context.Background(), "echo", args); err != nil {
			b.Fatal(err)
		}
	}
}

// BenchmarkList10000Tools lists 10,000 tools over 200 pages of 50.
func BenchmarkList10000Tools(b *testing.B) {
	c, err := Connect(context.Background(), fake("-tools", "9994", "-page", "50"))
	if err != nil {
		b.Fatal(err)
	}
	defer c.Close()
	b.ResetTimer()
	for i := 0; i < b.N; i++ {
		tools, err := c.ListTools(context.Background())
		if err != nil || len(tools) != 10000 {
			b.Fatalf("%d tools, %v", len(tools), err)
		}
	}
}

// BenchmarkConnectCallClose is a whole provider use: start, initialize,
// one call and Close, as the gateway does it for one invocation.
func BenchmarkConnectCallClose(b *testing.B) {
	for i := 0; i < b.N; i++ {
		c, err := Connect(context.Background(), fake())
		if err != nil {
			b.Fatal(err)
		}
		if _, err := c.CallTool(context.Background(), "echo", nil); err != nil {
			b.Fatal(err)
		}
		c.Close()
	}
}

// BenchmarkCallRoundTripPipe is one tools/call over io.Pipe to the fake
// server in this process: the client's own cost, without a process.
func BenchmarkCallRoundTripPipe(b *testing.B) {
	c, err := ConnectConn(context.Background(), fakemcp.Pipe(), Options{})
	if err != nil {
		b.Fatal(err)
	}
	defer c.Close()
	args := json.RawMessage(`{"text":"hi"}`)
	b.ResetTimer()
	for i := 0; i < b.N; i++ {
		if _, err := c.CallTool(context.Background(), "echo", args); err != nil {
			b.Fatal(err)
		}
	}
}
