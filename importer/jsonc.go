package importer

import (
	"bytes"
	"encoding/json"
	"errors"
	"fmt"

	"spear/internal/strictjson"
)

// member is one key of a JSON object and its raw value, in file order.
type member struct {
	key string
	raw json.RawMessage
}

// parseJSONC reads a JSON file the way VS Code, Gemini CLI and Cursor
// read theirs (JSON with comments and trailing commas) and returns its
// top-level object's members in file order. A syntax error is placed by
// line and column in the file as written.
func parseJSONC(path string, data []byte) ([]member, error) {
	clean := stripJSONC(data)
	var probe any
	if err := json.Unmarshal(clean, &probe); err != nil {
		var se *json.SyntaxError
		if errors.As(err, &se) {
			line, col := strictjson.LineCol(data, se.Offset)
			return nil, &Error{Path: path, Line: line, Col: col, Msg: fmt.Sprintf("not valid JSON: %v", se)}
		}
		return nil, &Error{Path: path, Msg: fmt.Sprintf("not valid JSON: %v", err)}
	}
	ms, err := members(clean)
	if err != nil {
		return nil, &Error{Path: path, Msg: "the file must hold one JSON object"}
	}
	return ms, nil
}

// members returns the keys and values of the JSON object raw, in order. A
// key given twice keeps its first place and its last value, as
// JavaScript's JSON.parse keeps the last.
func members(raw []byte) ([]member, error) {
	dec := json.NewDecoder(bytes.NewReader(raw))
	tok, err := dec.Token()
	if err != nil {
		return nil, err
	}
	if tok != json.Delim('{') {
		return nil, errNotObject
	}
	var ms []member
	at := map[string]int{}
	for dec.More() {
		k, err := dec.Token()
		if err != nil {
			return nil, err
		}
		var v json.RawMessage
		if err := dec.Decode(&v); err != nil {
			return nil, err
		}
		key := k.(string)
		if i, ok := at[key]; ok {
			ms[i].raw = v
			continue
		}
		at[key] = len(ms)
		ms = append(ms, member{key, v})
	}
	return ms, nil
}

// lookup returns the value of key among ms.
func lookup(ms []member, key string) (json.RawMessage, bool) {
	for _, m := range ms {
		if m.key == key {
			return m.raw, true
		}
	}
	return nil, false
}

// stripJSONC returns data with a leading byte order mark, // and /* */
// comments and trailing commas blanked out with spaces (newlines kept),
// so that every offset stays the file's own.
func stripJSONC(data []byte) []byte {
	out := bytes.Clone(data)
	if bytes.HasPrefix(out, []byte("\xef\xbb\xbf")) {
		copy(out, "   ")
	}
	blank := func(from, to int) {
		for i := from; i < to; i++ {
			if out[i] != '\n' {
				out[i] = ' '
			}
		}
	}
	inString := false
	for i := 0; i < len(out); i++ {
		c := out[i]
		switch {
		case inString:
			if c == '\\' {
				i++
			} else if c == '"' {
				inString = false
			}
		case c == '"':
			inString = true
		case c == '/' && i+1 < len(out) && out[i+1] == '/':
			end := bytes.IndexByte(out[i:], '\n')
			if end < 0 {
				end = len(out) - i
			}
			blank(i, i+end)
			i += end - 1
		case c == '/' && i+1 < len(out) && out[i+1] == '*':
			end := bytes.Index(out[i+2:], []byte("*/"))
			if end < 0 {
				end = len(out)
			} else {
				end += i + 4
			}
			blank(i, end)
			i = end - 1
		}
	}
	// Trailing commas, now that no comment hides what follows them.
	inString = false
	for i := 0; i < len(out); i++ {
		c := out[i]
		switch {
		case inString:
			if c == '\\' {
				i++
			} else if c == '"' {
				inString = false
			}
		case c == '"':
			inString = true
		case c == ',':
			j := i + 1
			for j < len(out) && (out[j] == ' ' || out[j] == '\t' || out[j] == '\n' || out[j] == '\r') {
				j++
			}
			if j < len(out) && (out[j] == '}' || out[j] == ']') {
				out[i] = ' '
			}
		}
	}
	return out
}
