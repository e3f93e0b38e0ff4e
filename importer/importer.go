// Package importer reads the MCP server lists that other MCP hosts keep
// (Claude Code, Codex CLI, Gemini CLI, VS Code, Cursor) into provider
// registry entries.
package importer

import (
	"encoding/json"
	"fmt"
	"path/filepath"
	"strings"

	"spear/internal/strictjson"
)

// Format is an MCP host's server list format.
type Format string

// The formats Read knows.
const (
	Claude Format = "claude" // Claude Code: .mcp.json, ~/.claude.json
	Codex  Format = "codex"  // Codex CLI: ~/.codex/config.toml, .codex/config.toml
	Gemini Format = "gemini" // Gemini CLI: settings.json
	VSCode Format = "vscode" // VS Code: .vscode/mcp.json
	Cursor Format = "cursor" // Cursor: mcp.json
)

// Formats lists every format, in the order help text names them.
var Formats = []Format{Claude, Codex, Gemini, VSCode, Cursor}

func (f Format) String() string { return string(f) }

// Host names the program whose format f is.
func (f Format) Host() string {
	switch f {
	case Claude:
		return "Claude Code"
	case Codex:
		return "Codex CLI"
	case Gemini:
		return "Gemini CLI"
	case VSCode:
		return "VS Code"
	case Cursor:
		return "Cursor"
	}
	return string(f)
}

// ParseFormat reads a format's name, as --format gives it.
func ParseFormat(s string) (Format, error) {
	for _, f := range Formats {
		if string(f) == s {
			return f, nil
		}
	}
	return "", fmt.Errorf("%q is not a format; use one of %s", s, formatNames())
}

func formatNames() string {
	names := make([]string, len(Formats))
	for i, f := range Formats {
		names[i] = string(f)
	}
	return strings.Join(names, ", ")
}

// Server is one server that a file lists.
type Server struct {
	Name    string            // as the file names it
	Where   string            // where the file lists it, as in mcpServers.github
	Command []string          // the command and its arguments, as written
	Env     map[string]string // copied as written
	// Skip says why the server is not imported; "" when it is.
	Skip string
	// Notes say what of the server is left out, and what is copied as
	// written that may need a look.
	Notes []Note
}

// Note is one thing said about a server: Kind "skipped" for a key or
// variable left out, "note" for anything else.
type Note struct {
	Kind, Text string
}

// File is what one file lists.
type File struct {
	Path    string
	Format  Format
	Servers []Server
	// Notes are about the file as a whole: keys of a file that holds only
	// servers, which are not read.
	Notes []Note
}

// Error is a file that cannot be read as a server list.
type Error struct {
	Path      string
	Line, Col int // 0 when not known
	Msg       string
}

func (e *Error) Error() string {
	if e.Line > 0 {
		return fmt.Sprintf("%s:%d:%d: %s", e.Path, e.Line, e.Col, e.Msg)
	}
	return fmt.Sprintf("%s: %s", e.Path, e.Msg)
}

// Read reads data, the content of the file at path, as format; an empty
// format is recognised from the file (Detect). Servers keep the file's
// order. A file that is not the format, or lists no servers at all, is an
// *Error.
func Read(path string, data []byte, format Format) (*File, error) {
	if format == "" {
		f, err := Detect(path, data)
		if err != nil {
			return nil, err
		}
		format = f
	}
	var (
		f   *File
		err error
	)
	if format == Codex {
		f, err = readCodex(path, data)
	} else {
		var top []strictjson.Member
		top, err = parseJSONC(path, data)
		if err == nil {
			switch format {
			case Claude:
				f, err = readClaude(path, top)
			case Gemini:
				f, err = readGemini(path, top)
			case VSCode:
				f, err = readVSCode(path, top)
			case Cursor:
				f, err = readCursor(path, top)
			default:
				err = &Error{Path: path, Msg: fmt.Sprintf("%q is not a format; use one of %s", format, formatNames())}
			}
		}
	}
	if err != nil {
		return nil, err
	}
	f.Path, f.Format = path, format
	return f, nil
}

// Detect recognises a file's format from its name and content: a .toml
// file is Codex's; a JSON file's name (.claude.json, .mcp.json,
// settings.json, or a .vscode, .cursor or .gemini directory) says which
// host's it is, and else its keys do ("servers" is VS Code's, "projects"
// Claude Code's). A file whose keys fit several hosts and whose name says
// none is an *Error that asks for --format.
func Detect(path string, data []byte) (Format, error) {
	base := filepath.Base(path)
	parent := filepath.Base(filepath.Dir(path))
	if strings.HasSuffix(base, ".toml") {
		return Codex, nil
	}
	top, err := parseJSONC(path, data)
	if err != nil {
		if looksLikeCodex(data) {
			return Codex, nil
		}
		return "", err
	}
	has := map[string]bool{}
	for _, m := range top {
		has[m.Key] = true
	}
	if mcp, ok := lookup(top, "mcp"); ok {
		if ms, err := strictjson.Members(mcp); err == nil {
			_, has["mcp.servers"] = lookup(ms, "servers")
		}
	}
	switch {
	case base == ".claude.json" || base == ".mcp.json" || base == "claude_desktop_config.json":
		return Claude, nil
	case parent == ".vscode":
		return VSCode, nil
	case parent == ".gemini" || (base == "settings.json" && has["mcpServers"]):
		return Gemini, nil
	case parent == ".cursor":
		return Cursor, nil
	case has["servers"] && !has["mcpServers"], has["mcp.servers"] && !has["mcpServers"]:
		return VSCode, nil
	case has["projects"]:
		return Claude, nil
	case has["mcpServers"]:
		return "", &Error{Path: path, Msg: `it lists "mcpServers", as the files of Claude Code, Gemini CLI and Cursor do, and its name does not say which; give --format claude, gemini or cursor`}
	}
	return "", &Error{Path: path, Msg: "it is not a server list this command reads: Claude Code's .mcp.json or ~/.claude.json, Codex CLI's config.toml, Gemini CLI's settings.json, VS Code's .vscode/mcp.json or Cursor's mcp.json (give --format when the name does not say which)"}
}

// looksLikeCodex reports whether data, which is not JSON, has a
// [mcp_servers...] table header.
func looksLikeCodex(data []byte) bool {
	for _, line := range strings.Split(string(data), "\n") {
		if strings.HasPrefix(strings.TrimSpace(line), "[mcp_servers") {
			return true
		}
	}
	return false
}

// where names a server inside an object of servers, as a path a reader
// can find in the file: mcpServers.github, mcpServers["My Server"].
func where(prefix, name string) string {
	plain := name != ""
	for i, r := range name {
		if !(r == '_' || r == '-' || r >= 'a' && r <= 'z' || r >= 'A' && r <= 'Z' || i > 0 && r >= '0' && r <= '9') {
			plain = false
		}
	}
	if plain {
		return prefix + "." + name
	}
	q, _ := json.Marshal(name)
	return prefix + "[" + string(q) + "]"
}
