package deploy

import (
	"bytes"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"slices"
	"sort"

	"spear/internal/strictjson"
)

// Entry is one provider entry as spear-capability add and import write
// it. Read and Write are always written, so that the file says what is
// READ and what a WRITE may do; the other keys only when they are set.
type Entry struct {
	ID       string
	Command  []string
	Scope    string            // "" writes no scope: the entry applies nowhere
	Tasks    []Task            // nil writes none: the default
	Env      map[string]string // empty writes none
	Read     []string          // nil writes []
	Write    WritePolicy       // "" writes refuse
	Disabled bool              // true writes "enabled": false
	Timeout  float64           // seconds; 0 writes none
	Private  []string          // empty writes none
	Lifetime Lifetime          // "" writes none
}

// members returns the entry's keys and values.
func (e *Entry) members() []strictjson.Member {
	var ms []strictjson.Member
	add := func(k string, v any) {
		raw, err := marshal(v)
		if err != nil {
			panic(err) // strings, lists and maps of strings always encode
		}
		ms = append(ms, strictjson.Member{Key: k, Raw: raw})
	}
	add("id", e.ID)
	add("command", nonNil(e.Command))
	if e.Scope != "" {
		add("scope", e.Scope)
	}
	if e.Tasks != nil {
		add("tasks", e.Tasks)
	}
	if len(e.Env) > 0 {
		add("env", e.Env)
	}
	add("read", nonNil(e.Read))
	w := e.Write
	if w == "" {
		w = WriteRefuse
	}
	add("write", w)
	if e.Disabled {
		add("enabled", false)
	}
	if e.Timeout != 0 {
		add("timeout", e.Timeout)
	}
	if len(e.Private) > 0 {
		add("private", e.Private)
	}
	if e.Lifetime != "" {
		add("lifetime", e.Lifetime)
	}
	return ms
}

func nonNil(s []string) []string {
	if s == nil {
		return []string{}
	}
	return s
}

// Text returns the entry as add and import write it, at the top level of
// a list whose entries are indented by two spaces.
func (e *Entry) Text() string {
	return string(formatEntry(e.members(), "  "))
}

// Check validates the entry exactly as the registry loader does, as if it
// were in the registry file at path; the error is the loader's *Problem.
func (e *Entry) Check(path string) (*Provider, error) {
	return checkEntryText(path, formatEntry(e.members(), "  "))
}

func checkEntryText(path string, text []byte) (*Provider, error) {
	data := append(append([]byte(`{"providers": [`), text...), "]}"...)
	reg, err := ParseRegistry(path, data)
	if err != nil {
		return nil, err
	}
	if len(reg.Problems) > 0 {
		p := reg.Problems[0]
		return nil, &p
	}
	return reg.Providers[0], nil
}

// EntryExistsError is an edit that would give a second entry an id that
// the registry already has.
type EntryExistsError struct {
	File, ID string
}

func (e *EntryExistsError) Error() string {
	return fmt.Sprintf("%s: an entry with id %q is already registered", e.File, e.ID)
}

// NoEntryError is an edit of an entry that the registry does not have.
type NoEntryError struct {
	File, ID string
}

func (e *NoEntryError) Error() string {
	return fmt.Sprintf("%s: no entry has id %q (spear-capability list shows the registered ones)", e.File, e.ID)
}

// RegistryIDs returns the id of every entry of capabilities.json's
// content that has one, valid or not, in file order; nil data is a file
// that does not exist yet. A file that is not a registry is a *FileError.
func RegistryIDs(path string, data []byte) ([]string, error) {
	t, err := scanRegistry(path, data)
	if err != nil {
		return nil, err
	}
	var ids []string
	for _, e := range t.entries {
		if e.id != "" {
			ids = append(ids, e.id)
		}
	}
	return ids, nil
}

// AddEntry returns capabilities.json's content with e added after the
// last entry or, with replace, in the place of the entry that has its id.
// nil data is a file that does not exist yet: the result is a new file.
// Every other entry's text is copied byte for byte; only e's is written
// anew. e must pass the registry loader, or its *Problem is the error.
func AddEntry(path string, data []byte, e *Entry, replace bool) ([]byte, error) {
	if data == nil {
		return checked(path, []byte(`{"providers": [`+"\n  "+e.Text()+"\n]}\n"), 0, e.ID)
	}
	t, err := scanRegistry(path, data)
	if err != nil {
		return nil, err
	}
	i, err := t.find(e.ID)
	switch {
	case err == nil && !replace:
		return nil, &EntryExistsError{File: path, ID: e.ID}
	case err == nil:
		return checked(path, t.replace(i, e.members()), i, e.ID)
	case !errors.As(err, new(*NoEntryError)):
		return nil, err
	}
	return checked(path, t.insert(e.members()), len(t.entries), e.ID)
}

// checked returns out when checkEdited finds nothing wrong in it.
func checked(path string, out []byte, i int, id string) ([]byte, error) {
	if err := checkEdited(path, out, i, id); err != nil {
		return nil, err
	}
	return out, nil
}

// checkEdited loads an edited file as the registry loader does and
// returns the first Problem of its entry number i (from 0) with the given
// id, in the loader's words.
func checkEdited(path string, out []byte, i int, id string) error {
	reg, err := ParseRegistry(path, out)
	if err != nil {
		return err
	}
	pos := fmt.Sprintf("#%d", i+1)
	for _, p := range reg.Problems {
		if p.Entry == pos || p.Entry == id {
			return &p
		}
	}
	return nil
}

// RemoveEntry returns capabilities.json's content without the entry that
// has the given id, every other byte kept. nil data, a file that does not
// exist, has no entries.
func RemoveEntry(path string, data []byte, id string) ([]byte, error) {
	t, err := scanRegistry(path, data)
	if err != nil {
		return nil, err
	}
	i, err := t.find(id)
	if err != nil {
		return nil, err
	}
	return t.remove(i), nil
}

// SetEnabled returns capabilities.json's content with the entry that has
// the given id enabled or disabled: "enabled": false to disable, and no
// "enabled" key (true is the default) to enable. That entry is written
// anew, its other keys kept in the stable order; every other byte is kept.
// An entry already in that state is returned unchanged. The entry must
// pass the registry loader afterwards, or its *Problem is the error.
func SetEnabled(path string, data []byte, id string, on bool) ([]byte, error) {
	t, err := scanRegistry(path, data)
	if err != nil {
		return nil, err
	}
	i, err := t.find(id)
	if err != nil {
		return nil, err
	}
	ms, err := strictjson.Members(t.data[t.entries[i].start:t.entries[i].end])
	if errors.Is(err, strictjson.ErrNotObject) {
		err = errors.New("the entry is not an object; fix it by hand")
	}
	if err != nil {
		return nil, err
	}
	was := true
	var kept []strictjson.Member
	for _, m := range ms {
		if m.Key == "enabled" {
			if err := json.Unmarshal(m.Raw, &was); err != nil {
				return nil, &Problem{File: path, Entry: id, Key: "enabled", Msg: "must be true or false; fix it by hand"}
			}
			continue
		}
		kept = append(kept, m)
	}
	if !on {
		kept = append(kept, strictjson.Member{Key: "enabled", Raw: json.RawMessage("false")})
	}
	out := t.replace(i, kept)
	if err := checkEdited(path, out, i, id); err != nil {
		return nil, err
	}
	if was == on {
		return data, nil
	}
	return out, nil
}

// span is the byte range [start, end) of one entry, and its id if it has
// one.
type span struct {
	start, end int
	id         string
}

// registryText is capabilities.json's text with the byte range of its
// providers list and of each entry in it, so that one entry can be
// changed and every other byte copied.
type registryText struct {
	path       string
	data       []byte
	open       int  // just after the top-level '{'
	members    int  // how many top-level keys
	list       span // the providers value; end 0 when there is none
	emptyValue bool // the providers value is null or []
	entries    []span
}

// scanRegistry reads data as the loader does (one object, no key twice,
// "providers" a list or null) and finds the byte ranges.
func scanRegistry(path string, data []byte) (*registryText, error) {
	if data == nil { // a file that does not exist yet has no entries
		return &registryText{path: path}, nil
	}
	if _, _, err := registryEntries(path, data, "providers"); err != nil {
		return nil, err
	}
	t := &registryText{path: path, data: data}
	dec := json.NewDecoder(bytes.NewReader(data))
	if _, err := dec.Token(); err != nil { // '{'
		return nil, &FileError{Path: path, Err: err}
	}
	t.open = int(dec.InputOffset())
	for dec.More() {
		tok, err := dec.Token()
		if err != nil {
			return nil, &FileError{Path: path, Err: err}
		}
		var raw json.RawMessage
		if err := dec.Decode(&raw); err != nil {
			return nil, &FileError{Path: path, Err: err}
		}
		t.members++
		if tok != "providers" {
			continue
		}
		end := int(dec.InputOffset())
		t.list = span{start: end - len(raw), end: end}
		if string(raw) == "null" {
			t.emptyValue = true
			continue
		}
		entries, err := elementSpans(raw, t.list.start)
		if err != nil {
			return nil, &FileError{Path: path, Err: err}
		}
		t.entries = entries
		t.emptyValue = len(entries) == 0
	}
	return t, nil
}

// elementSpans returns the byte range of each element of the JSON list
// raw, which starts at offset base of the file.
func elementSpans(raw []byte, base int) ([]span, error) {
	dec := json.NewDecoder(bytes.NewReader(raw))
	if _, err := dec.Token(); err != nil { // '['
		return nil, err
	}
	var out []span
	for dec.More() {
		var elem json.RawMessage
		if err := dec.Decode(&elem); err != nil {
			return nil, err
		}
		end := base + int(dec.InputOffset())
		s := span{start: end - len(elem), end: end}
		var head struct {
			ID json.RawMessage `json:"id"`
		}
		if json.Unmarshal(elem, &head) == nil {
			json.Unmarshal(head.ID, &s.id)
		}
		out = append(out, s)
	}
	return out, nil
}

// find returns the index of the one entry that has id.
func (t *registryText) find(id string) (int, error) {
	found := -1
	for i, e := range t.entries {
		if e.id != id {
			continue
		}
		if found >= 0 {
			return 0, &Problem{File: t.path, Entry: id, Key: "id", Msg: "two entries have this id; remove one by hand first"}
		}
		found = i
	}
	if found < 0 {
		return 0, &NoEntryError{File: t.path, ID: id}
	}
	return found, nil
}

func splice(data []byte, start, end int, with string) []byte {
	out := make([]byte, 0, len(data)-(end-start)+len(with))
	out = append(out, data[:start]...)
	out = append(out, with...)
	return append(out, data[end:]...)
}

// insert adds an entry after the last one.
func (t *registryText) insert(ms []strictjson.Member) []byte {
	switch {
	case t.list.end == 0: // no providers key
		text := `"providers": [` + "\n  " + string(formatEntry(ms, "  ")) + "\n]"
		if t.members > 0 {
			text += ", "
		}
		return splice(t.data, t.open, t.open, text)
	case t.emptyValue: // null, [] or [ ]
		return splice(t.data, t.list.start, t.list.end, "[\n  "+string(formatEntry(ms, "  "))+"\n]")
	}
	last := t.entries[len(t.entries)-1]
	return splice(t.data, last.end, last.end, ",\n  "+string(formatEntry(ms, "  ")))
}

// replace writes entry i anew, in its place.
func (t *registryText) replace(i int, ms []strictjson.Member) []byte {
	e := t.entries[i]
	return splice(t.data, e.start, e.end, string(formatEntry(ms, "  ")))
}

// remove takes entry i out with the separator before it (after it, for
// the first), so that the white space before every other entry stays; the
// only entry leaves an empty list.
func (t *registryText) remove(i int) []byte {
	switch {
	case len(t.entries) == 1:
		return splice(t.data, t.list.start, t.list.end, "[]")
	case i == 0:
		return splice(t.data, t.entries[0].start, t.entries[1].start, "")
	default:
		return splice(t.data, t.entries[i-1].end, t.entries[i].end, "")
	}
}

// formatEntry writes an entry: one key a line in providerKeys' order
// (unknown keys after, sorted), indented two spaces deeper than indent,
// lists of plain values on one line, objects one key a line.
func formatEntry(ms []strictjson.Member, indent string) []byte {
	rank := func(k string) int {
		if i := slices.Index(providerKeys, k); i >= 0 {
			return i
		}
		return len(providerKeys)
	}
	sorted := slices.Clone(ms)
	sort.SliceStable(sorted, func(i, j int) bool {
		ri, rj := rank(sorted[i].Key), rank(sorted[j].Key)
		if ri != rj {
			return ri < rj
		}
		return ri == len(providerKeys) && sorted[i].Key < sorted[j].Key
	})
	var b bytes.Buffer
	b.WriteString("{")
	for i, m := range sorted {
		if i > 0 {
			b.WriteString(",")
		}
		b.WriteString("\n" + indent + "  ")
		b.Write(encodeString(m.Key))
		b.WriteString(": ")
		writeValue(&b, decodeAny(m.Raw), indent+"  ")
	}
	b.WriteString("\n" + indent + "}")
	return b.Bytes()
}

// decodeAny decodes a raw value, keeping numbers as written.
func decodeAny(raw json.RawMessage) any {
	dec := json.NewDecoder(bytes.NewReader(raw))
	dec.UseNumber()
	var v any
	if err := dec.Decode(&v); err != nil && err != io.EOF {
		return string(raw)
	}
	return v
}

func writeValue(b *bytes.Buffer, v any, indent string) {
	switch v := v.(type) {
	case []any:
		plain := true
		for _, e := range v {
			switch e.(type) {
			case []any, map[string]any:
				plain = false
			}
		}
		if plain {
			b.WriteString("[")
			for i, e := range v {
				if i > 0 {
					b.WriteString(", ")
				}
				writeValue(b, e, indent)
			}
			b.WriteString("]")
			return
		}
		b.WriteString("[")
		for i, e := range v {
			if i > 0 {
				b.WriteString(",")
			}
			b.WriteString("\n" + indent + "  ")
			writeValue(b, e, indent+"  ")
		}
		b.WriteString("\n" + indent + "]")
	case map[string]any:
		if len(v) == 0 {
			b.WriteString("{}")
			return
		}
		keys := make([]string, 0, len(v))
		for k := range v {
			keys = append(keys, k)
		}
		sort.Strings(keys)
		b.WriteString("{")
		for i, k := range keys {
			if i > 0 {
				b.WriteString(",")
			}
			b.WriteString("\n" + indent + "  ")
			b.Write(encodeString(k))
			b.WriteString(": ")
			writeValue(b, v[k], indent+"  ")
		}
		b.WriteString("\n" + indent + "}")
	case string:
		b.Write(encodeString(v))
	default:
		raw, _ := marshal(v)
		b.Write(raw)
	}
}

// marshal encodes v without escaping <, > and &, which the file's reader
// is a person, not a browser.
func marshal(v any) (json.RawMessage, error) {
	var b bytes.Buffer
	enc := json.NewEncoder(&b)
	enc.SetEscapeHTML(false)
	if err := enc.Encode(v); err != nil {
		return nil, err
	}
	return bytes.TrimSuffix(b.Bytes(), []byte("\n")), nil
}

func encodeString(s string) []byte {
	raw, _ := marshal(s)
	return raw
}
