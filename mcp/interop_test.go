package mcp

import (
	"context"
	"encoding/json"
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	sdk "github.com/modelcontextprotocol/go-sdk/mcp"
)

type greetIn struct {
	Name string `json:"name" jsonschema:"who to greet"`
}

type greetOut struct {
	Greeting string `json:"greeting"`
}

// runSDKServer serves tools written with the official Go SDK on stdio, with
// small pages so that pagination is exercised.
func runSDKServer() int {
	s := sdk.NewServer(&sdk.Implementation{Name: "sdk-test", Version: "1.0.0"}, &sdk.ServerOptions{PageSize: 3})
	sdk.AddTool(s, &sdk.Tool{Name: "greet", Description: "Greet someone"}, func(ctx context.Context, req *sdk.CallToolRequest, in greetIn) (*sdk.CallToolResult, greetOut, error) {
		return nil, greetOut{Greeting: "hello, " + in.Name}, nil
	})
	for i := 0; i < 10; i++ {
		sdk.AddTool(s, &sdk.Tool{Name: fmt.Sprintf("filler%02d", i), Description: "does nothing"}, func(ctx context.Context, req *sdk.CallToolRequest, in struct{}) (*sdk.CallToolResult, any, error) {
			return &sdk.CallToolResult{Content: []sdk.Content{&sdk.TextContent{Text: "nothing"}}}, nil, nil
		})
	}
	if err := s.Run(context.Background(), &sdk.StdioTransport{}); err != nil {
		fmt.Fprintln(os.Stderr, err)
		return 1
	}
	return 0
}

func sdkServer() Options {
	return Options{Command: []string{os.Args[0]}, Env: map[string]string{"MCPTEST_SERVER": "sdk"}, Timeout: 10 * time.Second}
}

func TestInteropGoSDK(t *testing.T) {
	c := connect(t, sdkServer())
	if got := c.InitializeResult().ServerInfo.Name; got != "sdk-test" {
		t.Fatalf("server name %q", got)
	}
	tools, err := c.ListTools(context.Background())
	if err != nil {
		t.Fatal(err)
	}
	if len(tools) != 11 {
		t.Fatalf("listed %d tools, want 11 over 4 pages", len(tools))
	}
	var greet *Tool
	for i := range tools {
		if tools[i].Name == "greet" {
			greet = &tools[i]
		}
	}
	if greet == nil || !strings.Contains(string(greet.InputSchema), `"additionalProperties":false`) {
		t.Fatalf("greet schema: %+v", greet)
	}
	res, err := c.CallTool(context.Background(), "greet", json.RawMessage(`{"name":"Ada"}`))
	if err != nil {
		t.Fatal(err)
	}
	if string(res.StructuredContent) != `{"greeting":"hello, Ada"}` || len(res.Content) != 1 || !strings.Contains(res.Content[0].Text, "hello, Ada") {
		t.Fatalf("result %+v / %s", res, res.StructuredContent)
	}
	// The SDK validates arguments itself and reports violations as a tool error.
	res, err = c.CallTool(context.Background(), "greet", json.RawMessage(`{"name":7}`))
	if err == nil && !res.IsError {
		t.Fatalf("bad arguments accepted: %+v", res)
	}
	pid := c.Pid()
	c.Close()
	assertGone(t, pid)
}

// everythingEntry finds the installed server-everything stdio entry, or
// skips the test; with SPEAR_REQUIRE_INTEROP=1 (as make test sets) a missing
// install fails instead.
func everythingEntry(t testing.TB) string {
	entry, _ := filepath.Abs("../testdata/interop/node_modules/@modelcontextprotocol/server-everything/dist/index.js")
	if _, err := os.Stat(entry); err != nil {
		if os.Getenv("SPEAR_REQUIRE_INTEROP") == "1" {
			t.Fatalf("server-everything is not installed (run make interop-deps): %v", err)
		}
		t.Skip("server-everything is not installed; run make interop-deps")
	}
	return entry
}

func TestInteropServerEverything(t *testing.T) {
	entry := everythingEntry(t)
	c := connect(t, Options{Command: []string{"node", entry, "stdio"}, Timeout: 30 * time.Second})
	tools, err := c.ListTools(context.Background())
	if err != nil {
		t.Fatal(err)
	}
	names := map[string]bool{}
	for _, tool := range tools {
		names[tool.Name] = true
	}
	if len(tools) != 13 || !names["echo"] {
		t.Fatalf("listed %d tools: %v", len(tools), names)
	}
	res, err := c.CallTool(context.Background(), "echo", json.RawMessage(`{"message":"interop"}`))
	if err != nil {
		t.Fatal(err)
	}
	if len(res.Content) == 0 || !strings.Contains(res.Content[0].Text, "interop") {
		t.Fatalf("echo result %+v", res)
	}
	var sawImage, sawStructured bool
	for name := range names {
		if strings.Contains(name, "image") {
			r, err := c.CallTool(context.Background(), name, json.RawMessage(`{}`))
			if err == nil {
				for _, b := range r.Content {
					sawImage = sawImage || (b.Type == "image" && b.Data != "")
				}
			}
		}
		if strings.Contains(name, "structured") {
			r, err := c.CallTool(context.Background(), name, json.RawMessage(`{"location":"New York"}`))
			sawStructured = err == nil && len(r.StructuredContent) > 0
		}
	}
	if !sawImage || !sawStructured {
		t.Errorf("image %v, structured %v; tools %v", sawImage, sawStructured, names)
	}
	pid := c.Pid()
	c.Close()
	assertGone(t, pid)
}
