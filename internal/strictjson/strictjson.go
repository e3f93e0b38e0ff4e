// Package strictjson holds the strict JSON reading that the deployment's
// files and a turn's arguments share: duplicate keys refused, syntax errors
// placed by line and column, values named by their type.
package strictjson

import (
	"bytes"
	"encoding/json"
	"errors"
	"fmt"
)

// LineCol turns a json.SyntaxError offset, which counts the bad byte
// itself, into the 1-based line and column of that byte.
func LineCol(data []byte, offset int64) (int, int) {
	if offset > int64(len(data)) {
		offset = int64(len(data))
	}
	if offset > 0 {
		offset--
	}
	before := data[:offset]
	line := bytes.Count(before, []byte("\n")) + 1
	col := int(offset) - bytes.LastIndexByte(before, '\n')
	return line, col
}

// CheckDuplicateKeys reports the first object in data that holds a key
// twice; encoding/json would silently keep the last.
func CheckDuplicateKeys(data []byte) error {
	dec := json.NewDecoder(bytes.NewReader(data))
	dec.UseNumber()
	return walkValue(dec)
}

func walkValue(dec *json.Decoder) error {
	tok, err := dec.Token()
	if err != nil {
		return err
	}
	switch tok {
	case json.Delim('{'):
		seen := map[string]bool{}
		for dec.More() {
			k, err := dec.Token()
			if err != nil {
				return err
			}
			key := k.(string)
			if seen[key] {
				return fmt.Errorf("the key %q appears twice in one object", key)
			}
			seen[key] = true
			if err := walkValue(dec); err != nil {
				return err
			}
		}
		_, err = dec.Token()
		return err
	case json.Delim('['):
		for dec.More() {
			if err := walkValue(dec); err != nil {
				return err
			}
		}
		_, err = dec.Token()
		return err
	}
	return nil
}

// TypeName describes a raw JSON value's type, for error messages.
func TypeName(raw json.RawMessage) string {
	t := bytes.TrimSpace(raw)
	if len(t) == 0 {
		return "nothing"
	}
	switch t[0] {
	case '{':
		return "an object"
	case '[':
		return "a list"
	case '"':
		return "a string"
	case 't', 'f':
		return "a boolean"
	case 'n':
		return "null"
	default:
		return "a number"
	}
}

// Member is one key of a JSON object and its raw value.
type Member struct {
	Key string
	Raw json.RawMessage
}

// ErrNotObject is a value that is not a JSON object.
var ErrNotObject = errors.New("not an object")

// Members returns the keys and values of the JSON object raw, in the order
// they are written. A key given twice keeps its first place and its last
// value, as JavaScript's JSON.parse keeps the last; a value that is not an
// object is ErrNotObject.
func Members(raw []byte) ([]Member, error) {
	dec := json.NewDecoder(bytes.NewReader(raw))
	tok, err := dec.Token()
	if err != nil {
		return nil, err
	}
	if tok != json.Delim('{') {
		return nil, ErrNotObject
	}
	var ms []Member
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
			ms[i].Raw = v
			continue
		}
		at[key] = len(ms)
		ms = append(ms, Member{Key: key, Raw: v})
	}
	return ms, nil
}
