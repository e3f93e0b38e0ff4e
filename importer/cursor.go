package importer

import "spear/internal/strictjson"

// readCursor reads Cursor's mcp.json (.cursor/mcp.json, ~/.cursor/mcp.json):
// its "mcpServers".
func readCursor(path string, top []strictjson.Member) (*File, error) {
	raw, ok := lookup(top, "mcpServers")
	if !ok {
		return nil, &Error{Path: path, Msg: `it has no "mcpServers" object, so it lists no servers`}
	}
	ss, err := readServers(cursorDialect, path, "mcpServers", raw)
	if err != nil {
		return nil, err
	}
	return &File{Servers: ss, Notes: fileNotes(top, "mcpServers")}, nil
}
