package warm

import (
	"bytes"
	"encoding/json"
	"errors"
	"strconv"
)

// kind is what a JSON-RPC message is.
type kind int

const (
	kindRequest kind = iota
	kindNotification
	kindResponse
)

// rpc is one JSON-RPC message as the host relays it: every member kept as
// it came, the id and the method read out.
type rpc struct {
	members map[string]json.RawMessage
	id      json.RawMessage // nil for a notification
	method  string
	kind    kind
}

// parseRPC reads one JSON-RPC 2.0 message. Its id, where it has one, is a
// string or a number; a batch, or anything that is not an object with
// "jsonrpc": "2.0", is an error.
func parseRPC(line []byte) (*rpc, error) {
	line = bytes.TrimSpace(line)
	if len(line) == 0 || line[0] != '{' {
		return nil, errors.New("not a JSON-RPC object")
	}
	var m map[string]json.RawMessage
	if err := json.Unmarshal(line, &m); err != nil {
		return nil, errors.New("does not decode: " + err.Error())
	}
	var version string
	if json.Unmarshal(m["jsonrpc"], &version) != nil || version != "2.0" {
		return nil, errors.New(`no "jsonrpc": "2.0"`)
	}
	r := &rpc{members: m}
	if raw, ok := m["method"]; ok {
		if json.Unmarshal(raw, &r.method) != nil || r.method == "" {
			return nil, errors.New("a method that is not a string")
		}
	}
	raw, hasID := m["id"]
	if raw = bytes.TrimSpace(raw); hasID && !bytes.Equal(raw, []byte("null")) {
		if len(raw) == 0 || (raw[0] != '"' && raw[0] != '-' && (raw[0] < '0' || raw[0] > '9')) {
			return nil, errors.New("an id that is neither a string nor a number")
		}
		r.id = raw
	}
	switch {
	case r.method != "" && r.id != nil:
		r.kind = kindRequest
	case r.method != "":
		r.kind = kindNotification
	case hasID:
		// An answer; one under a null id (a parse error, say) answers
		// nothing that was asked.
		r.kind = kindResponse
	default:
		return nil, errors.New("neither a method nor an id")
	}
	return r, nil
}

// intID returns the message's id as an integer, if it is one.
func (r *rpc) intID() (int64, bool) {
	n, err := strconv.ParseInt(string(r.id), 10, 64)
	return n, err == nil
}

// withID returns the message as a line, with its id replaced by id.
func (r *rpc) withID(id json.RawMessage) []byte {
	r.members["id"] = id
	return r.line()
}

// line returns the message as one line of JSON.
func (r *rpc) line() []byte {
	data, _ := json.Marshal(r.members)
	return append(data, '\n')
}

// cancelledID returns the requestId of a notifications/cancelled, if it has
// one that is a string or a number.
func (r *rpc) cancelledID() (json.RawMessage, bool) {
	var p map[string]json.RawMessage
	if json.Unmarshal(r.members["params"], &p) != nil {
		return nil, false
	}
	id := bytes.TrimSpace(p["requestId"])
	if len(id) == 0 || (id[0] != '"' && id[0] != '-' && (id[0] < '0' || id[0] > '9')) {
		return nil, false
	}
	return id, true
}

// withCancelledID returns a notifications/cancelled as a line, with its
// requestId replaced by id.
func (r *rpc) withCancelledID(id json.RawMessage) []byte {
	var p map[string]json.RawMessage
	json.Unmarshal(r.members["params"], &p)
	p["requestId"] = id
	r.members["params"], _ = json.Marshal(p)
	return r.line()
}

// idKey is an id as a map key: its JSON text, compacted, so that 7 and 7.0
// stay different ids and "a" is not a.
func idKey(id json.RawMessage) string {
	var b bytes.Buffer
	if json.Compact(&b, id) != nil {
		return string(id)
	}
	return b.String()
}

// response is a JSON-RPC answer to id, with result or error.
func response(id json.RawMessage, result json.RawMessage, code int, message string) []byte {
	m := map[string]any{"jsonrpc": "2.0", "id": id}
	if result != nil {
		m["result"] = result
	} else {
		m["error"] = map[string]any{"code": code, "message": message}
	}
	data, _ := json.Marshal(m)
	return append(data, '\n')
}
