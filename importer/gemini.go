package importer

import (
	"encoding/json"
	"slices"

	"spear/internal/strictjson"
)

// readGemini reads Gemini CLI's settings.json (~/.gemini/settings.json,
// .gemini/settings.json): its "mcpServers", less the servers that
// "mcp.excluded" names or that "mcp.allowed", when given, does not (and
// the older top-level "excludeMCPServers" and "allowMCPServers"). Its
// other keys are Gemini CLI's own settings.
func readGemini(path string, top []strictjson.Member) (*File, error) {
	raw, ok := lookup(top, "mcpServers")
	if !ok {
		return nil, &Error{Path: path, Msg: `it has no "mcpServers" object, so it lists no servers`}
	}
	ss, err := readServers(geminiDialect, path, "mcpServers", raw)
	if err != nil {
		return nil, err
	}
	var allowed, excluded []string
	hasAllowed := false
	list := func(ms []strictjson.Member, key string, into *[]string) bool {
		v, ok := lookup(ms, key)
		if !ok || json.Unmarshal(v, into) != nil {
			return false
		}
		return true
	}
	if mcp, ok := lookup(top, "mcp"); ok {
		if ms, err := strictjson.Members(mcp); err == nil {
			hasAllowed = list(ms, "allowed", &allowed)
			list(ms, "excluded", &excluded)
		}
	}
	var old []string
	if list(top, "allowMCPServers", &old) {
		hasAllowed = true
		allowed = append(allowed, old...)
	}
	if list(top, "excludeMCPServers", &old) {
		excluded = append(excluded, old...)
	}
	for i := range ss {
		s := &ss[i]
		switch {
		case s.Skip != "":
		case slices.Contains(excluded, s.Name):
			s.skip("disabled in the file (Gemini CLI's excluded list names it)")
		case hasAllowed && !slices.Contains(allowed, s.Name):
			s.skip("disabled in the file (Gemini CLI's allowed list does not name it)")
		}
	}
	return &File{Servers: ss}, nil
}
