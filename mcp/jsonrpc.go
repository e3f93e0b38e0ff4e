package mcp

import (
	"bytes"
	"encoding/json"
	"fmt"
	"strconv"
)

// JSON-RPC error codes the client sends or recognises.
const (
	CodeParseError     = -32700
	CodeInvalidRequest = -32600
	CodeMethodNotFound = -32601
	CodeInvalidParams  = -32602
	CodeInternalError  = -32603
)

type kind int

const (
	kindRequest kind = iota
	kindNotification
	kindResponse
)

// wireError is the error member of a JSON-RPC response.
type wireError struct {
	Code    int             `json:"code"`
	Message string          `json:"message"`
	Data    json.RawMessage `json:"data,omitempty"`
}

// message is any JSON-RPC 2.0 message; which members are set says what it is.
type message struct {
	JSONRPC string          `json:"jsonrpc"`
	ID      json.RawMessage `json:"id,omitempty"`
	Method  string          `json:"method,omitempty"`
	Params  json.RawMessage `json:"params,omitempty"`
	Result  json.RawMessage `json:"result,omitempty"`
	Error   *wireError      `json:"error,omitempty"`
}

// hasID reports whether the message carries an id that is not null.
func (m *message) hasID() bool {
	return len(m.ID) > 0 && !bytes.Equal(m.ID, []byte("null"))
}

// intID returns the message's id as an integer, if it is one.
func (m *message) intID() (int64, bool) {
	if !m.hasID() {
		return 0, false
	}
	n, err := strconv.ParseInt(string(m.ID), 10, 64)
	return n, err == nil
}

// decodeMessage parses one line from the server and says what kind of
// message it is. A line that is not a JSON-RPC 2.0 object, including a batch
// (JSON array, removed in 2025-06-18), is a *ProtocolError; the caller
// skips one that is not JSON at all (SkippedLines.Skip).
func decodeMessage(line []byte) (*message, kind, error) {
	trimmed := bytes.TrimSpace(line)
	if len(trimmed) == 0 {
		return nil, 0, &ProtocolError{Msg: "server wrote an empty message"}
	}
	switch trimmed[0] {
	case '{':
	case '[':
		return nil, 0, &ProtocolError{Msg: "server sent a JSON array; batches are not part of protocol version " + ProtocolVersion}
	default:
		return nil, 0, &ProtocolError{Msg: "server wrote a line that is not JSON-RPC: " + quoteSnippet(trimmed)}
	}
	var m message
	if err := json.Unmarshal(trimmed, &m); err != nil {
		return nil, 0, &ProtocolError{Msg: fmt.Sprintf("server wrote a message that does not decode (%v): %s", err, quoteSnippet(trimmed))}
	}
	if m.JSONRPC != "2.0" {
		return nil, 0, &ProtocolError{Msg: fmt.Sprintf("server wrote a line that is not JSON-RPC (its jsonrpc is %q, not \"2.0\"): %s", m.JSONRPC, quoteSnippet(trimmed))}
	}
	if m.Method != "" {
		if m.hasID() {
			return &m, kindRequest, nil
		}
		return &m, kindNotification, nil
	}
	if len(m.ID) == 0 {
		return nil, 0, &ProtocolError{Msg: "server wrote a message with neither method nor id: " + quoteSnippet(trimmed)}
	}
	return &m, kindResponse, nil
}

// quoteSnippet quotes at most the first 120 bytes of b, for error messages.
func quoteSnippet(b []byte) string {
	const max = 120
	if len(b) > max {
		return strconv.Quote(string(b[:max])) + "…"
	}
	return strconv.Quote(string(b))
}

// CheckMessage reports whether line, read from a server, is one JSON-RPC
// 2.0 message as a Client reads it: nil, or a *ProtocolError that says what
// is wrong with it, with which a Client ends the connection unless the
// line is not JSON at all (a Client skips that: SkippedLines.Skip). A relay
// uses it to say what is wrong with a server's line in the client's own
// words.
func CheckMessage(line []byte) error {
	_, _, err := decodeMessage(line)
	return err
}
