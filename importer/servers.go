package importer

import (
	"encoding/json"
	"fmt"
	"path/filepath"
	"sort"
	"strings"

	"spear/deploy"
	"spear/internal/strictjson"
)

// dialect is what one host's JSON server entry may hold beyond type,
// command, args, env and disabled.
type dialect struct {
	// remote are the keys that make a server a remote one, with what each
	// says of its transport.
	remote map[string]string
	// known are keys the host reads that are not carried, and why.
	known map[string]string
}

// Reasons shared by the formats for keys that are not carried.
const (
	whyCwd      = "SPEAR starts every server in the registry's directory; if the server needs this directory, pass it as an argument"
	whyEnvFile  = "SPEAR reads no env files; copy the variables the server needs into \"env\""
	whyTimeout  = "SPEAR's \"timeout\" is seconds a request may take (default 10); set it in the registry if the server needs more"
	whyTools    = "SPEAR offers every tool the server lists; \"read\" alone decides which are READ"
	whyTrust    = "nothing a host trusted decides anything here: \"read\" and \"write\" do"
	whyRemote   = "it is about a remote server, and this one is started over stdio"
	whyUnknown  = "not a key SPEAR knows; nothing of it is carried"
	whyEnvNames = "SPEAR passes a server only PATH, HOME and \"env\"; copy these variables' values into \"env\""
)

// commonKeys are keys some host reads, whichever file they turn up in.
var commonKeys = map[string]string{"cwd": whyCwd, "envFile": whyEnvFile}

var (
	claudeDialect = dialect{
		remote: map[string]string{"url": "a remote server (\"url\")"},
		known:  map[string]string{"headers": whyRemote, "oauth": whyRemote},
	}
	geminiDialect = dialect{
		remote: map[string]string{"url": "an SSE server (\"url\")", "httpUrl": "an HTTP server (\"httpUrl\")"},
		known: map[string]string{
			"cwd": whyCwd, "timeout": whyTimeout, "trust": whyTrust,
			"includeTools": whyTools, "excludeTools": whyTools,
			"description": "a description for people; SPEAR shows the server's tools, not this",
			"headers":     whyRemote, "oauth": whyRemote, "authProviderType": whyRemote,
			"targetAudience": whyRemote, "targetServiceAccount": whyRemote,
			"extensionName": "it names the Gemini CLI extension that added the server",
		},
	}
	vscodeDialect = dialect{
		remote: map[string]string{"url": "a remote server (\"url\")"},
		known: map[string]string{
			"envFile": whyEnvFile, "cwd": whyCwd, "headers": whyRemote,
			"dev": "VS Code's development mode (watch and debug) has no meaning here",
		},
	}
	cursorDialect = dialect{
		remote: map[string]string{"url": "a remote server (\"url\")"},
		known:  map[string]string{"envFile": whyEnvFile, "headers": whyRemote, "cwd": whyCwd},
	}
)

// readServers reads an object of named servers, as mcpServers and
// servers are.
func readServers(d dialect, path, prefix string, raw json.RawMessage) ([]Server, error) {
	ms, err := strictjson.Members(raw)
	if err != nil {
		return nil, &Error{Path: path, Msg: fmt.Sprintf("%q must be an object of server names to servers", prefix)}
	}
	var out []Server
	for _, m := range ms {
		out = append(out, readServer(d, m.Key, where(prefix, m.Key), m.Raw))
	}
	return out, nil
}

// readServer reads one server entry of a JSON file. A skipped server
// carries nothing but why.
func readServer(d dialect, name, at string, raw json.RawMessage) Server {
	s := Server{Name: name, Where: at}
	s.read(d, raw)
	if s.Skip != "" {
		s.Command, s.Env, s.Notes = nil, nil, nil
	}
	return s
}

func (s *Server) read(d dialect, raw json.RawMessage) {
	ms, err := strictjson.Members(raw)
	if err != nil {
		s.Skip = "its entry is not an object"
		return
	}
	var (
		typ, command      string
		args              []string
		remote, remoteKey string
		disabled          bool
		env               json.RawMessage
	)
	for _, m := range ms {
		switch m.Key {
		case "type":
			if json.Unmarshal(m.Raw, &typ) != nil {
				s.Skip = `its "type" is not a string`
				return
			}
		case "command":
			if json.Unmarshal(m.Raw, &command) != nil {
				s.Skip = `its "command" is not a string`
				return
			}
		case "args":
			if json.Unmarshal(m.Raw, &args) != nil {
				s.Skip = `its "args" is not a list of strings`
				return
			}
		case "env":
			env = m.Raw
		case "disabled":
			if json.Unmarshal(m.Raw, &disabled) != nil {
				s.Skip = `its "disabled" is not true or false`
				return
			}
		default:
			if why, ok := d.remote[m.Key]; ok {
				remote, remoteKey = why, m.Key
				continue
			}
			s.skipKey(m.Key, d.known)
		}
	}
	switch typ {
	case "", "stdio":
	case "http", "streamable-http", "streamableHttp":
		s.Skip = fmt.Sprintf("an HTTP server (type %q); SPEAR starts stdio servers only", typ)
	case "sse":
		s.Skip = fmt.Sprintf("an SSE server (type %q); SPEAR starts stdio servers only", typ)
	default:
		s.Skip = fmt.Sprintf("type %q is not a transport SPEAR knows; it starts stdio servers only", typ)
	}
	switch {
	case s.Skip != "":
	case remote != "" && command == "":
		s.Skip = remote + "; SPEAR starts stdio servers only"
	case disabled:
		s.Skip = `disabled in the file ("disabled": true)`
	case command == "":
		s.Skip = "it has no command: nothing to start"
	}
	if s.Skip != "" {
		return
	}
	if remote != "" {
		s.skipKey(remoteKey, map[string]string{remoteKey: "the server has a command, which is what SPEAR starts"})
	}
	s.setCommand(command, args)
	if env != nil && string(env) != "null" {
		var vars map[string]json.RawMessage
		if json.Unmarshal(env, &vars) != nil {
			s.Skip = `its "env" is not an object of variable names to strings`
			return
		}
		for _, k := range sortedKeys(vars) {
			var v string
			if err := json.Unmarshal(vars[k], &v); err != nil {
				s.note("skipped", fmt.Sprintf("env %s: its value is %s, not a string; write it in the registry as a string", quoteOdd(k), typeName(vars[k])))
				continue
			}
			s.setEnv(k, v)
		}
	}
	s.checkCommand()
}

// setCommand sets the command and notes arguments that hold variables.
func (s *Server) setCommand(command string, args []string) {
	s.Command = append([]string{command}, args...)
	for i, a := range args {
		if hasVariable(a) {
			s.note("note", fmt.Sprintf("argument %d holds a variable reference, copied as written: SPEAR expands no variables, so write the value itself in the registry", i+1))
		}
	}
}

// setEnv copies one variable as written, or notes why it is left out.
func (s *Server) setEnv(k, v string) {
	if !deploy.ValidEnvName(k) {
		s.note("skipped", fmt.Sprintf("env %s: not a variable name (letters, digits and _, not starting with a digit)", quoteOdd(k)))
		return
	}
	if s.Env == nil {
		s.Env = map[string]string{}
	}
	s.Env[k] = v
	if hasVariable(v) {
		s.note("note", fmt.Sprintf("env %s holds a variable reference, copied as written: SPEAR expands no variables, so write the value itself in the registry", k))
	}
}

// checkCommand skips a server whose command cannot be resolved here.
func (s *Server) checkCommand() {
	c := s.Command[0]
	switch {
	case hasVariable(c):
		s.Skip = fmt.Sprintf("its command %q holds a variable SPEAR cannot expand; register it with spear-capability add and the real path", c)
	case strings.Contains(c, "/") && !filepath.IsAbs(c):
		s.Skip = fmt.Sprintf("its command %q is a relative path, and the directory it is relative to is not known here; register it with spear-capability add and an absolute path", c)
	case strings.Contains(c, `\`):
		s.Skip = fmt.Sprintf("its command %q is a Windows path", c)
	}
}

func (s *Server) note(kind, text string) {
	s.Notes = append(s.Notes, Note{Kind: kind, Text: text})
}

// skipKey notes a key that is not carried, and why.
func (s *Server) skipKey(key string, known map[string]string) {
	why, ok := known[key]
	if !ok {
		why, ok = commonKeys[key]
	}
	if !ok {
		why = whyUnknown
	}
	s.note("skipped", fmt.Sprintf("key %s: %s", quoteOdd(key), why))
}

// hasVariable reports whether s refers to a variable the way the hosts
// write them: $NAME, ${NAME}, ${env:NAME}, ${input:id}, ${workspaceFolder}.
func hasVariable(s string) bool {
	for i := 0; i+1 < len(s); i++ {
		if s[i] != '$' {
			continue
		}
		c := s[i+1]
		if c == '{' || c == '_' || c >= 'A' && c <= 'Z' || c >= 'a' && c <= 'z' {
			return true
		}
	}
	return false
}

// quoteOdd quotes a key for a message.
func quoteOdd(k string) string {
	q, _ := json.Marshal(k)
	return string(q)
}

func typeName(raw json.RawMessage) string {
	s := strings.TrimSpace(string(raw))
	switch {
	case s == "null":
		return "null"
	case s == "true" || s == "false":
		return "a boolean"
	case strings.HasPrefix(s, "{"):
		return "an object"
	case strings.HasPrefix(s, "["):
		return "a list"
	case strings.HasPrefix(s, `"`):
		return "a string"
	}
	return "a number"
}

func sortedKeys[V any](m map[string]V) []string {
	keys := make([]string, 0, len(m))
	for k := range m {
		keys = append(keys, k)
	}
	sort.Strings(keys)
	return keys
}

// fileNotes notes the top-level keys of a file that holds only servers,
// other than the ones read.
func fileNotes(top []strictjson.Member, read ...string) []Note {
	var out []Note
	for _, m := range top {
		found := false
		for _, r := range read {
			if m.Key == r {
				found = true
			}
		}
		if !found {
			out = append(out, Note{Kind: "skipped", Text: fmt.Sprintf("key %s: %s", quoteOdd(m.Key), whyUnknown)})
		}
	}
	return out
}
