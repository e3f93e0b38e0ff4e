package importer

import (
	"encoding/json"
	"fmt"
	"path/filepath"
	"slices"

	"spear/internal/strictjson"
)

// readClaude reads Claude Code's files: a project's .mcp.json
// ("mcpServers") and ~/.claude.json, which holds the user's servers in
// "mcpServers" and each project's own in "projects". Claude Desktop's
// claude_desktop_config.json has the same "mcpServers".
func readClaude(path string, top []strictjson.Member) (*File, error) {
	f := &File{}
	servers, hasServers := lookup(top, "mcpServers")
	projects, hasProjects := lookup(top, "projects")
	if !hasServers && !hasProjects {
		return nil, &Error{Path: path, Msg: `it has neither "mcpServers" nor "projects", so it lists no servers`}
	}
	if hasServers {
		ss, err := readServers(claudeDialect, path, "mcpServers", servers)
		if err != nil {
			return nil, err
		}
		f.Servers = ss
	}
	// ~/.claude.json and Claude Desktop's file hold the hosts' other
	// settings too; only .mcp.json is all servers.
	base := filepath.Base(path)
	if !hasProjects && base != ".claude.json" && base != "claude_desktop_config.json" {
		f.Notes = fileNotes(top, "mcpServers")
	}
	if !hasProjects {
		return f, nil
	}
	user := len(f.Servers)
	dirs, err := strictjson.Members(projects)
	if err != nil {
		return nil, &Error{Path: path, Msg: `"projects" must be an object of project directories to their settings`}
	}
	for _, d := range dirs {
		settings, err := strictjson.Members(d.Raw)
		if err != nil {
			continue // not a project's settings, so no servers of it
		}
		var disabled []string
		if raw, ok := lookup(settings, "disabledMcpServers"); ok {
			json.Unmarshal(raw, &disabled)
		}
		if raw, ok := lookup(settings, "mcpServers"); ok {
			prefix := where("projects", d.Key) + ".mcpServers"
			ss, err := readServers(claudeDialect, path, prefix, raw)
			if err != nil {
				return nil, err
			}
			for i := range ss {
				s := &ss[i]
				switch {
				case s.Skip != "":
				case slices.Contains(disabled, s.Name):
					s.skip(fmt.Sprintf("disabled in project %s (disabledMcpServers)", d.Key))
				default:
					s.note("note", fmt.Sprintf("Claude Code starts it in project %s only; --scope 'path %s' says the same here", d.Key, d.Key))
				}
			}
			f.Servers = append(f.Servers, ss...)
		}
		for i := range f.Servers[:user] {
			if s := &f.Servers[i]; s.Skip == "" && slices.Contains(disabled, s.Name) {
				s.note("note", fmt.Sprintf("Claude Code has it disabled in project %s (disabledMcpServers)", d.Key))
			}
		}
	}
	return f, nil
}

// skip marks a server as not imported, and why; it carries nothing else.
func (s *Server) skip(why string) {
	s.Skip = why
	s.Command, s.Env, s.Notes = nil, nil, nil
}
