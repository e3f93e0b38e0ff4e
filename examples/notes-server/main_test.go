package main

import (
	"context"
	"encoding/json"
	"os"
	"strings"
	"testing"

	"spear/mcp"
)

func TestMain(m *testing.M) {
	if os.Getenv("NOTES_SERVER_TEST") == "1" {
		main()
		os.Exit(0)
	}
	os.Exit(m.Run())
}

func call(t *testing.T, c *mcp.Client, tool, args string) *mcp.CallToolResult {
	t.Helper()
	res, err := c.CallTool(context.Background(), tool, json.RawMessage(args))
	if err != nil {
		t.Fatalf("%s: %v", tool, err)
	}
	return res
}

func TestNotes(t *testing.T) {
	dir := t.TempDir()
	c, err := mcp.Connect(context.Background(), mcp.Options{
		Command: []string{os.Args[0], "-dir", dir},
		Env:     map[string]string{"NOTES_SERVER_TEST": "1"},
	})
	if err != nil {
		t.Fatal(err)
	}
	defer c.Close()
	tools, err := c.ListTools(context.Background())
	if err != nil || len(tools) != 5 {
		t.Fatalf("%d tools, %v", len(tools), err)
	}
	if got := call(t, c, "list_notes", `{}`).Content[0].Text; got != "no notes yet" {
		t.Errorf("empty list: %q", got)
	}
	call(t, c, "write_note", `{"name":"plan","text":"ship the gateway\nwrite docs"}`)
	if data, err := os.ReadFile(dir + "/plan.txt"); err != nil || string(data) != "ship the gateway\nwrite docs" {
		t.Fatalf("file: %q, %v", data, err)
	}
	if got := call(t, c, "read_note", `{"name":"plan"}`).Content[0].Text; !strings.HasPrefix(got, "ship the gateway") {
		t.Errorf("read: %q", got)
	}
	res := call(t, c, "search_notes", `{"query":"DOCS"}`)
	if res.Content[0].Text != "plan:2: write docs" || !strings.Contains(string(res.StructuredContent), `"line":2`) {
		t.Errorf("search: %+v %s", res.Content, res.StructuredContent)
	}
	if res := call(t, c, "read_note", `{"name":"../etc/passwd"}`); !res.IsError || !strings.Contains(res.Content[0].Text, "invalid note name") {
		t.Errorf("path traversal: %+v", res)
	}
	call(t, c, "delete_note", `{"name":"plan"}`)
	if res := call(t, c, "read_note", `{"name":"plan"}`); !res.IsError {
		t.Errorf("read after delete: %+v", res)
	}
}
