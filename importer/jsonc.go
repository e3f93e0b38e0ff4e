package importer

import (
	"bytes"
	"encoding/json"
	"errors"
	"fmt"

	"spear/internal/strictjson"
)

// parseJSONC reads a JSON file the way VS Code, Gemini CLI and Cursor
// read theirs (JSON with comments and trailing commas) and returns its
// top-level object's members in file order. A syntax error is placed by
// line and column in the file as written.
func parseJSONC(path string, data []byte) ([]strictjson.Member, error) {
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
	ms, err := strictjson.Members(clean)
	if err != nil {
		return nil, &Error{Path: path, Msg: "the file must hold one JSON object"}
	}
	return ms, nil
}

// lookup returns the value of key among ms.
func lookup(ms []strictjson.Member, key string) (json.RawMessage, bool) {
	for _, m := range ms {
		if m.Key == key {
			return m.Raw, true
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
