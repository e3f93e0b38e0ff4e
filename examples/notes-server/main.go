// Command notes-server is a small MCP server, written with the official Go
// SDK, that keeps plain-text notes as files in one directory. It is the
// example provider that make demo registers.
//
// Usage: notes-server -dir DIR   (or NOTES_DIR=DIR notes-server)
//
// Tools: list_notes, read_note and search_notes only read; write_note and
// delete_note change the directory.
package main

import (
	"bufio"
	"context"
	"errors"
	"flag"
	"fmt"
	"io/fs"
	"os"
	"path/filepath"
	"regexp"
	"sort"
	"strings"

	"github.com/modelcontextprotocol/go-sdk/mcp"
)

// maxNote bounds a note's size, in bytes.
const maxNote = 1 << 20

var validName = regexp.MustCompile(`^[A-Za-z0-9][A-Za-z0-9._-]{0,63}$`)

type notes struct{ dir string }

func (n *notes) path(name string) (string, error) {
	if !validName.MatchString(name) {
		return "", fmt.Errorf("invalid note name %q: use 1 to 64 letters, digits, '.', '_' or '-', starting with a letter or digit", name)
	}
	return filepath.Join(n.dir, name+".txt"), nil
}

func textResult(format string, args ...any) *mcp.CallToolResult {
	return &mcp.CallToolResult{Content: []mcp.Content{&mcp.TextContent{Text: fmt.Sprintf(format, args...)}}}
}

type listIn struct{}

type listOut struct {
	Notes []string `json:"notes" jsonschema:"the names of the notes, sorted"`
}

func (n *notes) list(ctx context.Context, req *mcp.CallToolRequest, in listIn) (*mcp.CallToolResult, listOut, error) {
	entries, err := os.ReadDir(n.dir)
	if err != nil {
		return nil, listOut{}, err
	}
	out := listOut{Notes: []string{}}
	for _, e := range entries {
		if name, ok := strings.CutSuffix(e.Name(), ".txt"); ok && e.Type().IsRegular() && validName.MatchString(name) {
			out.Notes = append(out.Notes, name)
		}
	}
	sort.Strings(out.Notes)
	if len(out.Notes) == 0 {
		return textResult("no notes yet"), out, nil
	}
	return textResult("%d notes: %s", len(out.Notes), strings.Join(out.Notes, ", ")), out, nil
}

type readIn struct {
	Name string `json:"name" jsonschema:"the note's name"`
}

func (n *notes) read(ctx context.Context, req *mcp.CallToolRequest, in readIn) (*mcp.CallToolResult, any, error) {
	p, err := n.path(in.Name)
	if err != nil {
		return nil, nil, err
	}
	data, err := os.ReadFile(p)
	if errors.Is(err, fs.ErrNotExist) {
		return nil, nil, fmt.Errorf("there is no note %q", in.Name)
	}
	if err != nil {
		return nil, nil, err
	}
	return textResult("%s", data), nil, nil
}

type searchIn struct {
	Query string `json:"query" jsonschema:"text to look for, case-insensitive"`
}

type match struct {
	Note string `json:"note"`
	Line int    `json:"line"`
	Text string `json:"text"`
}

type searchOut struct {
	Matches []match `json:"matches"`
}

func (n *notes) search(ctx context.Context, req *mcp.CallToolRequest, in searchIn) (*mcp.CallToolResult, searchOut, error) {
	if strings.TrimSpace(in.Query) == "" {
		return nil, searchOut{}, errors.New("the query is empty")
	}
	_, names, err := n.list(ctx, req, listIn{})
	if err != nil {
		return nil, searchOut{}, err
	}
	out := searchOut{Matches: []match{}}
	q := strings.ToLower(in.Query)
	var lines []string
	for _, name := range names.Notes {
		f, err := os.Open(filepath.Join(n.dir, name+".txt"))
		if err != nil {
			continue
		}
		sc := bufio.NewScanner(f)
		for i := 1; sc.Scan(); i++ {
			if strings.Contains(strings.ToLower(sc.Text()), q) {
				out.Matches = append(out.Matches, match{Note: name, Line: i, Text: sc.Text()})
				lines = append(lines, fmt.Sprintf("%s:%d: %s", name, i, sc.Text()))
			}
		}
		f.Close()
	}
	if len(lines) == 0 {
		return textResult("no note mentions %q", in.Query), out, nil
	}
	return textResult("%s", strings.Join(lines, "\n")), out, nil
}

type writeIn struct {
	Name string `json:"name" jsonschema:"the note's name"`
	Text string `json:"text" jsonschema:"the note's whole new text"`
}

func (n *notes) write(ctx context.Context, req *mcp.CallToolRequest, in writeIn) (*mcp.CallToolResult, any, error) {
	p, err := n.path(in.Name)
	if err != nil {
		return nil, nil, err
	}
	if len(in.Text) > maxNote {
		return nil, nil, fmt.Errorf("the text is %d bytes; a note holds at most %d", len(in.Text), maxNote)
	}
	tmp, err := os.CreateTemp(n.dir, ".write-*")
	if err != nil {
		return nil, nil, err
	}
	defer os.Remove(tmp.Name())
	if _, err := tmp.WriteString(in.Text); err != nil {
		tmp.Close()
		return nil, nil, err
	}
	if err := tmp.Close(); err != nil {
		return nil, nil, err
	}
	if err := os.Rename(tmp.Name(), p); err != nil {
		return nil, nil, err
	}
	return textResult("saved note %q (%d bytes)", in.Name, len(in.Text)), nil, nil
}

type deleteIn struct {
	Name string `json:"name" jsonschema:"the note's name"`
}

func (n *notes) delete(ctx context.Context, req *mcp.CallToolRequest, in deleteIn) (*mcp.CallToolResult, any, error) {
	p, err := n.path(in.Name)
	if err != nil {
		return nil, nil, err
	}
	if err := os.Remove(p); errors.Is(err, fs.ErrNotExist) {
		return nil, nil, fmt.Errorf("there is no note %q", in.Name)
	} else if err != nil {
		return nil, nil, err
	}
	return textResult("deleted note %q", in.Name), nil, nil
}

func main() {
	dir := flag.String("dir", os.Getenv("NOTES_DIR"), "the directory that holds the notes (default $NOTES_DIR)")
	flag.Parse()
	if *dir == "" {
		fmt.Fprintln(os.Stderr, "notes-server: no directory: give -dir DIR or set NOTES_DIR")
		os.Exit(2)
	}
	if err := os.MkdirAll(*dir, 0o755); err != nil {
		fmt.Fprintln(os.Stderr, "notes-server:", err)
		os.Exit(1)
	}
	n := &notes{dir: *dir}
	s := mcp.NewServer(&mcp.Implementation{Name: "notes-server", Version: "1.0.0"}, nil)
	ro := &mcp.ToolAnnotations{ReadOnlyHint: true}
	mcp.AddTool(s, &mcp.Tool{Name: "list_notes", Title: "List notes", Description: "List the names of all notes.", Annotations: ro}, n.list)
	mcp.AddTool(s, &mcp.Tool{Name: "read_note", Title: "Read a note", Description: "Return the whole text of one note.", Annotations: ro}, n.read)
	mcp.AddTool(s, &mcp.Tool{Name: "search_notes", Title: "Search notes", Description: "Find the lines of all notes that contain a text, case-insensitively.", Annotations: ro}, n.search)
	mcp.AddTool(s, &mcp.Tool{Name: "write_note", Title: "Write a note", Description: "Create a note, or replace its whole text."}, n.write)
	mcp.AddTool(s, &mcp.Tool{Name: "delete_note", Title: "Delete a note", Description: "Delete one note."}, n.delete)
	if err := s.Run(context.Background(), &mcp.StdioTransport{}); err != nil {
		fmt.Fprintln(os.Stderr, "notes-server:", err)
		os.Exit(1)
	}
}
