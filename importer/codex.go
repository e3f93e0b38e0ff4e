package importer

import (
	"errors"
	"fmt"

	"github.com/BurntSushi/toml"
)

var codexKnown = map[string]string{
	"cwd":                  whyCwd,
	"env_vars":             whyEnvNames,
	"startup_timeout_sec":  whyTimeout,
	"startup_timeout_ms":   whyTimeout,
	"tool_timeout_sec":     whyTimeout,
	"enabled_tools":        whyTools,
	"disabled_tools":       whyTools,
	"required":             "a provider that cannot start is unavailable to the turn, and check reports it",
	"bearer_token_env_var": whyRemote,
	"bearer_token":         whyRemote,
	"http_headers":         whyRemote,
	"env_http_headers":     whyRemote,
	"oauth":                whyRemote,
	"scopes":               whyRemote,
}

// readCodex reads Codex CLI's config.toml (~/.codex/config.toml,
// .codex/config.toml): its [mcp_servers.<name>] tables, in file order.
// Its other tables are Codex's own settings.
func readCodex(path string, data []byte) (*File, error) {
	var doc map[string]any
	md, err := toml.Decode(string(data), &doc)
	if err != nil {
		var pe toml.ParseError
		if errors.As(err, &pe) {
			return nil, &Error{Path: path, Line: pe.Position.Line, Col: pe.Position.Col, Msg: "not valid TOML: " + pe.Message}
		}
		return nil, &Error{Path: path, Msg: "not valid TOML: " + err.Error()}
	}
	raw, ok := doc["mcp_servers"]
	if !ok {
		return nil, &Error{Path: path, Msg: "it has no [mcp_servers.<name>] table, so it lists no servers"}
	}
	servers, ok := raw.(map[string]any)
	if !ok {
		return nil, &Error{Path: path, Msg: "mcp_servers must be a table of servers, as in [mcp_servers.docs]"}
	}
	// The file's order: MetaData keeps keys as they appear.
	order := map[string][]string{} // server → its keys in order
	var names []string
	for _, k := range md.Keys() {
		if len(k) < 2 || k[0] != "mcp_servers" {
			continue
		}
		if _, ok := order[k[1]]; !ok {
			names = append(names, k[1])
			order[k[1]] = nil
		}
		if len(k) == 3 {
			order[k[1]] = append(order[k[1]], k[2])
		}
	}
	for _, name := range sortedKeys(servers) {
		if _, ok := order[name]; !ok {
			names = append(names, name)
		}
	}
	f := &File{}
	for _, name := range names {
		s := Server{Name: name, Where: "[mcp_servers." + tomlKey(name) + "]"}
		s.readCodex(servers[name], order[name])
		if s.Skip != "" {
			s.Command, s.Env, s.Notes = nil, nil, nil
		}
		f.Servers = append(f.Servers, s)
	}
	return f, nil
}

func (s *Server) readCodex(v any, keyOrder []string) {
	t, ok := v.(map[string]any)
	if !ok {
		s.Skip = "its entry is not a table"
		return
	}
	keys := keyOrder
	for _, k := range sortedKeys(t) {
		found := false
		for _, o := range keyOrder {
			found = found || o == k
		}
		if !found {
			keys = append(keys, k)
		}
	}
	var (
		command  string
		args     []string
		env      map[string]any
		enabled  = true
		isRemote bool
	)
	seen := map[string]bool{}
	for _, k := range keys {
		if seen[k] {
			continue
		}
		seen[k] = true
		v, ok := t[k]
		if !ok {
			continue
		}
		switch k {
		case "command":
			if command, ok = v.(string); !ok {
				s.Skip = "its command is not a string"
				return
			}
		case "args":
			list, ok := v.([]any)
			if !ok {
				s.Skip = "its args is not a list of strings"
				return
			}
			for _, a := range list {
				str, ok := a.(string)
				if !ok {
					s.Skip = "its args is not a list of strings"
					return
				}
				args = append(args, str)
			}
		case "env":
			if env, ok = v.(map[string]any); !ok {
				s.Skip = "its env is not a table of variable names to strings"
				return
			}
		case "enabled":
			if enabled, ok = v.(bool); !ok {
				s.Skip = "its enabled is not true or false"
				return
			}
		case "url":
			isRemote = true
		default:
			s.skipKey(k, codexKnown)
		}
	}
	switch {
	case isRemote && command == "":
		s.Skip = `an HTTP server ("url"); SPEAR starts stdio servers only`
		return
	case !enabled:
		s.Skip = "disabled in the file (enabled = false)"
		return
	case command == "":
		s.Skip = "it has no command: nothing to start"
		return
	}
	if isRemote {
		s.skipKey("url", map[string]string{"url": "the server has a command, which is what SPEAR starts"})
	}
	s.setCommand(command, args)
	for _, k := range sortedKeys(env) {
		str, ok := env[k].(string)
		if !ok {
			s.note("skipped", fmt.Sprintf("env %s: its value is %s, not a string; write it in the registry as a string", quoteOdd(k), tomlType(env[k])))
			continue
		}
		s.setEnv(k, str)
	}
	s.checkCommand()
}

func tomlType(v any) string {
	switch v.(type) {
	case bool:
		return "a boolean"
	case int64, float64:
		return "a number"
	case []any, []map[string]any:
		return "an array"
	case map[string]any:
		return "a table"
	}
	return "a date or time"
}

// tomlKey writes a key as TOML would: bare when it can be, else quoted.
func tomlKey(k string) string {
	for _, r := range k {
		if !(r == '_' || r == '-' || r >= 'a' && r <= 'z' || r >= 'A' && r <= 'Z' || r >= '0' && r <= '9') {
			return quoteOdd(k)
		}
	}
	if k == "" {
		return `""`
	}
	return k
}
