package importer

import "spear/internal/strictjson"

// readVSCode reads VS Code's mcp.json (.vscode/mcp.json, or the user
// profile's): its "servers"; "inputs" only define the ${input:…} values
// VS Code asks for, which SPEAR does not. A settings.json that holds
// {"mcp": {"servers": …}} is read too.
func readVSCode(path string, top []strictjson.Member) (*File, error) {
	if raw, ok := lookup(top, "servers"); ok {
		ss, err := readServers(vscodeDialect, path, "servers", raw)
		if err != nil {
			return nil, err
		}
		return &File{Servers: ss, Notes: fileNotes(top, "servers", "inputs")}, nil
	}
	if mcp, ok := lookup(top, "mcp"); ok {
		if ms, err := strictjson.Members(mcp); err == nil {
			if raw, ok := lookup(ms, "servers"); ok {
				ss, err := readServers(vscodeDialect, path, "mcp.servers", raw)
				if err != nil {
					return nil, err
				}
				return &File{Servers: ss}, nil
			}
		}
	}
	return nil, &Error{Path: path, Msg: `it has no "servers" object, so it lists no servers`}
}
