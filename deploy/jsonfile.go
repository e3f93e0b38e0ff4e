package deploy

import (
	"encoding/json"
	"errors"
	"fmt"
	"os"
	"sort"

	"spear/internal/strictjson"
)

// FileError reports a file that cannot be read or is not JSON, with the
// line and column of a syntax error.
type FileError struct {
	Path      string
	Line, Col int
	Err       error
}

func (e *FileError) Error() string {
	if e.Line > 0 {
		return fmt.Sprintf("%s:%d:%d: %v", e.Path, e.Line, e.Col, e.Err)
	}
	return fmt.Sprintf("%s: %v", e.Path, e.Err)
}

func (e *FileError) Unwrap() error { return e.Err }

// maxConfigFile bounds the registries and the turn file.
const maxConfigFile = 16 << 20

// readConfig reads a registry or turn file of bounded size.
func readConfig(path string) ([]byte, error) {
	data, err := os.ReadFile(path)
	if err != nil {
		return nil, &FileError{Path: path, Err: err}
	}
	if len(data) > maxConfigFile {
		return nil, &FileError{Path: path, Err: fmt.Errorf("the file is %d bytes; at most %d are read", len(data), maxConfigFile)}
	}
	return data, nil
}

func decodeObject(path string, data []byte) (map[string]json.RawMessage, error) {
	var top map[string]json.RawMessage
	if err := json.Unmarshal(data, &top); err != nil {
		fe := &FileError{Path: path, Err: err}
		var se *json.SyntaxError
		var te *json.UnmarshalTypeError
		switch {
		case errors.As(err, &se):
			fe.Line, fe.Col = strictjson.LineCol(data, se.Offset)
			fe.Err = fmt.Errorf("not valid JSON: %v", se)
		case errors.As(err, &te):
			fe.Err = errors.New("the file must hold one JSON object")
		}
		return nil, fe
	}
	if top == nil {
		return nil, &FileError{Path: path, Err: errors.New("the file must hold one JSON object, not null")}
	}
	if err := strictjson.CheckDuplicateKeys(data); err != nil {
		return nil, &FileError{Path: path, Err: err}
	}
	return top, nil
}

// entrySpec says how to read one registry file's entries.
type entrySpec[T any] struct {
	listKey string                                         // the top-level key holding the list
	decode  func(i int, raw json.RawMessage) (T, *Problem) // one entry, or why it is rejected
	name    func(T) string                                 // the entry's unique name
	nameKey string                                         // the key that holds it
	dupMsg  string                                         // the problem of a name given twice
}

// parseEntries decodes a registry file's content: one object with the
// single key spec.listKey, holding a list of entries. Each invalid entry,
// each repeated name and each other top-level key is a Problem, and the
// other entries still load; a file that is not such an object is a
// *FileError.
func parseEntries[T any](path string, data []byte, spec entrySpec[T]) ([]T, []Problem, error) {
	entries, problems, err := registryEntries(path, data, spec.listKey)
	if err != nil {
		return nil, nil, err
	}
	var out []T
	names := map[string]bool{}
	for i, raw := range entries {
		v, prob := spec.decode(i, raw)
		if prob != nil {
			problems = append(problems, *prob)
			continue
		}
		if n := spec.name(v); names[n] {
			problems = append(problems, Problem{File: path, Entry: n, Key: spec.nameKey, Msg: spec.dupMsg})
			continue
		}
		names[spec.name(v)] = true
		out = append(out, v)
	}
	return out, problems, nil
}

// registryEntries decodes the top level of a registry file and returns the
// raw entries of its list, with a Problem for each other key.
func registryEntries(path string, data []byte, listKey string) ([]json.RawMessage, []Problem, error) {
	top, err := decodeObject(path, data)
	if err != nil {
		return nil, nil, err
	}
	var problems []Problem
	keys := make([]string, 0, len(top))
	for k := range top {
		keys = append(keys, k)
	}
	sort.Strings(keys)
	for _, k := range keys {
		if k != listKey {
			problems = append(problems, Problem{File: path, Key: k, Msg: fmt.Sprintf("unknown key; the file holds only %q", listKey)})
		}
	}
	var entries []json.RawMessage
	if raw, ok := top[listKey]; ok {
		if err := json.Unmarshal(raw, &entries); err != nil {
			return nil, nil, &FileError{Path: path, Err: fmt.Errorf("%q must be a list, found %s", listKey, strictjson.TypeName(raw))}
		}
	}
	return entries, problems, nil
}
