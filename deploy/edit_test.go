package deploy

import (
	"bytes"
	"encoding/json"
	"errors"
	"os"
	"path/filepath"
	"strings"
	"testing"
)

var newEntry = &Entry{
	ID:      "tracker",
	Command: []string{"/opt/tracker/bin/tracker-mcp", "--token-file", "/etc/t & <x>"},
	Scope:   "corpus web, api",
	Tasks:   []Task{TaskImplementation},
	Env:     map[string]string{"URL": "https://t", "A": "1"},
	Read:    []string{"search"},
	Write:   WriteConfirm,
	Timeout: 2.5,
	Private: []string{"/etc/t"},
}

const newEntryText = `{
    "id": "tracker",
    "command": ["/opt/tracker/bin/tracker-mcp", "--token-file", "/etc/t & <x>"],
    "scope": "corpus web, api",
    "tasks": ["implementation"],
    "env": {
      "A": "1",
      "URL": "https://t"
    },
    "read": ["search"],
    "write": "confirm",
    "timeout": 2.5,
    "private": ["/etc/t"]
  }`

func TestEntryText(t *testing.T) {
	if got := newEntry.Text(); got != newEntryText {
		t.Errorf("Text:\n%s\nwant:\n%s", got, newEntryText)
	}
	min := &Entry{ID: "x", Command: []string{"x"}}
	want := "{\n    \"id\": \"x\",\n    \"command\": [\"x\"],\n    \"read\": [],\n    \"write\": \"refuse\"\n  }"
	if got := min.Text(); got != want {
		t.Errorf("Text:\n%s\nwant:\n%s", got, want)
	}
}

func TestAddEntryNewFile(t *testing.T) {
	out, err := AddEntry("c.json", nil, newEntry, false)
	if err != nil {
		t.Fatal(err)
	}
	want := "{\"providers\": [\n  " + newEntryText + "\n]}\n"
	if string(out) != want {
		t.Errorf("new file:\n%s\nwant:\n%s", out, want)
	}
	reg, err := ParseRegistry("c.json", out)
	if err != nil || len(reg.Problems) > 0 || len(reg.Providers) != 1 {
		t.Fatalf("the new file does not load: %v %v", err, reg)
	}
}

// rawEntries returns the text of each entry of a registry file.
func rawEntries(t *testing.T, data []byte) []string {
	t.Helper()
	tx, err := scanRegistry("c.json", data)
	if err != nil {
		t.Fatal(err)
	}
	var out []string
	for _, e := range tx.entries {
		out = append(out, string(data[e.start:e.end]))
	}
	return out
}

var editFiles = []string{
	`{"providers": [
  {"id": "a", "command": ["x"], "scope": "global"},
  {"id":"b","command":["y"]  , "write" :"allow"},
	{ "id": "c",
	  "command": ["z"] }
]}
`,
	`{"providers":[{"id":"a","command":["x"]}]}`,
	"{\"providers\": [\n    {\"id\": \"a\", \"command\": [\"x\"], \"future\": 1},\n    [\"not an object\"]\n  ]\n}\n",
}

func TestAddRemoveKeepOthersByteForByte(t *testing.T) {
	for _, orig := range editFiles {
		before := rawEntries(t, []byte(orig))
		out, err := AddEntry("c.json", []byte(orig), newEntry, false)
		if err != nil {
			t.Fatalf("%s: %v", orig, err)
		}
		after := rawEntries(t, out)
		if len(after) != len(before)+1 || strings.Join(after[:len(before)], "\x00") != strings.Join(before, "\x00") {
			t.Errorf("other entries changed:\n%s\n→\n%s", orig, out)
		}
		if reg, err := ParseRegistry("c.json", out); err != nil || reg.Provider("tracker") == nil {
			t.Errorf("the new entry does not load: %v\n%s", err, out)
		}
		back, err := RemoveEntry("c.json", out, "tracker")
		if err != nil {
			t.Fatal(err)
		}
		if string(back) != orig {
			t.Errorf("add then remove is not the original:\n%q\nwant\n%q", back, orig)
		}
		// disable then enable: the entry is written anew once, then stays
		disabled, err := SetEnabled("c.json", out, "tracker", false)
		if err != nil {
			t.Fatal(err)
		}
		if !strings.Contains(string(disabled), `"enabled": false`) {
			t.Errorf("disable wrote no enabled: false:\n%s", disabled)
		}
		enabled, err := SetEnabled("c.json", disabled, "tracker", true)
		if err != nil {
			t.Fatal(err)
		}
		if !bytes.Equal(enabled, out) {
			t.Errorf("disable then enable:\n%s\nwant\n%s", enabled, out)
		}
	}
}

func TestRemoveEachPlace(t *testing.T) {
	orig := editFiles[0]
	cases := map[string]string{
		"a": "{\"providers\": [\n  {\"id\":\"b\",\"command\":[\"y\"]  , \"write\" :\"allow\"},\n\t{ \"id\": \"c\",\n\t  \"command\": [\"z\"] }\n]}\n",
		"b": "{\"providers\": [\n  {\"id\": \"a\", \"command\": [\"x\"], \"scope\": \"global\"},\n\t{ \"id\": \"c\",\n\t  \"command\": [\"z\"] }\n]}\n",
		"c": "{\"providers\": [\n  {\"id\": \"a\", \"command\": [\"x\"], \"scope\": \"global\"},\n  {\"id\":\"b\",\"command\":[\"y\"]  , \"write\" :\"allow\"}\n]}\n",
	}
	for id, want := range cases {
		got, err := RemoveEntry("c.json", []byte(orig), id)
		if err != nil {
			t.Fatal(err)
		}
		if string(got) != want {
			t.Errorf("remove %s:\n%s\nwant\n%s", id, got, want)
		}
	}
	only, err := RemoveEntry("c.json", []byte(editFiles[1]), "a")
	if err != nil || string(only) != `{"providers":[]}` {
		t.Errorf("removing the only entry: %q, %v", only, err)
	}
}

func TestAddEntryShapes(t *testing.T) {
	for _, orig := range []string{`{}`, `{"providers": null}`, `{"providers": []}`, `{"providers": [ ]}`, `{"other": 1}`} {
		out, err := AddEntry("c.json", []byte(orig), newEntry, false)
		if err != nil {
			t.Fatalf("%s: %v", orig, err)
		}
		reg, err := ParseRegistry("c.json", out)
		if err != nil || reg.Provider("tracker") == nil {
			t.Errorf("%s → %s: %v", orig, out, err)
		}
	}
}

func TestEditErrors(t *testing.T) {
	two := []byte(editFiles[0])
	_, err := AddEntry("c.json", two, &Entry{ID: "b", Command: []string{"x"}}, false)
	var exists *EntryExistsError
	if !errors.As(err, &exists) || err.Error() != `c.json: an entry with id "b" is already registered` {
		t.Errorf("duplicate: %v", err)
	}
	out, err := AddEntry("c.json", two, &Entry{ID: "b", Command: []string{"/new"}, Scope: "global"}, true)
	if err != nil || !strings.Contains(string(out), `"command": ["/new"]`) || strings.Contains(string(out), `"write" :"allow"`) {
		t.Errorf("replace: %v\n%s", err, out)
	}
	_, err = AddEntry("c.json", two, &Entry{ID: "d", Command: []string{"x"}, Write: "sometimes"}, false)
	var prob *Problem
	if !errors.As(err, &prob) || err.Error() != `c.json: entry d: key "write": "sometimes" is not a write policy; allowed: refuse, confirm, allow` {
		t.Errorf("invalid entry: %v", err)
	}
	_, err = AddEntry("c.json", two, &Entry{ID: "d", Command: []string{"./rel"}}, false)
	if err == nil || !strings.Contains(err.Error(), "is a relative path") {
		t.Errorf("relative command: %v", err)
	}
	_, err = RemoveEntry("c.json", two, "ghost")
	var none *NoEntryError
	if !errors.As(err, &none) {
		t.Errorf("remove ghost: %v", err)
	}
	_, err = SetEnabled("c.json", two, "ghost", false)
	if !errors.As(err, &none) {
		t.Errorf("disable ghost: %v", err)
	}
	if _, err = RemoveEntry("c.json", nil, "a"); !errors.As(err, &none) || err.Error() != `c.json: no entry has id "a" (spear-capability list shows the registered ones)` {
		t.Errorf("remove from a missing file: %v", err)
	}
	if ids, err := RegistryIDs("c.json", nil); ids != nil || err != nil {
		t.Errorf("ids of a missing file: %v %v", ids, err)
	}
	var fe *FileError
	for _, bad := range []string{`{"providers": [`, `[]`, `{"providers": {}}`, `{"a": 1, "a": 2}`} {
		if _, err := AddEntry("c.json", []byte(bad), newEntry, false); !errors.As(err, &fe) {
			t.Errorf("%s: %v, want a *FileError", bad, err)
		}
	}
	dup := []byte(`{"providers": [{"id": "a", "command": ["x"]}, {"id": "a", "command": ["y"]}]}`)
	if _, err := RemoveEntry("c.json", dup, "a"); err == nil || !strings.Contains(err.Error(), "two entries have this id") {
		t.Errorf("two with one id: %v", err)
	}
	// an entry that is invalid for another reason is not disabled
	if _, err := SetEnabled("c.json", []byte(editFiles[2]), "a", false); err == nil || !strings.Contains(err.Error(), `key "future": unknown key`) {
		t.Errorf("disable an invalid entry: %v", err)
	}
}

func TestSetEnabledUnchanged(t *testing.T) {
	data := []byte(editFiles[0])
	out, err := SetEnabled("c.json", data, "a", true)
	if err != nil || !bytes.Equal(out, data) {
		t.Errorf("enabling an enabled entry changed the file: %v\n%s", err, out)
	}
}

func TestEditRegistryFile(t *testing.T) {
	dir := t.TempDir()
	path := filepath.Join(dir, "cfg", "capabilities.json")
	if _, err := EditRegistryFile(path, func(data []byte) ([]byte, error) { return RemoveEntry(path, data, "x") }); err == nil {
		t.Fatal("removing from a missing registry succeeded")
	}
	if _, err := os.Stat(filepath.Dir(path)); err == nil {
		t.Fatal("a failed edit created the registry's directory")
	}
	changed, err := EditRegistryFile(path, func(data []byte) ([]byte, error) {
		if data != nil {
			t.Errorf("a missing file is read as %q", data)
		}
		return AddEntry(path, data, newEntry, false)
	})
	if err != nil || !changed {
		t.Fatal(changed, err)
	}
	fi, err := os.Stat(path)
	if err != nil || fi.Mode().Perm() != 0o600 {
		t.Fatalf("new file: %v %v", fi.Mode(), err)
	}
	os.Chmod(path, 0o640)
	if _, err := EditRegistryFile(path, func(data []byte) ([]byte, error) { return RemoveEntry(path, data, "tracker") }); err != nil {
		t.Fatal(err)
	}
	if fi, _ := os.Stat(path); fi.Mode().Perm() != 0o640 {
		t.Errorf("mode after an edit: %v, want 0640", fi.Mode())
	}
	before, _ := os.ReadFile(path)
	_, err = EditRegistryFile(path, func(data []byte) ([]byte, error) { return RemoveEntry(path, data, "ghost") })
	if err == nil {
		t.Error("removing a missing entry succeeded")
	}
	if after, _ := os.ReadFile(path); !bytes.Equal(before, after) {
		t.Error("a failed edit changed the file")
	}
	entries, _ := os.ReadDir(filepath.Dir(path))
	if len(entries) != 1 {
		t.Errorf("temporary files left: %v", entries)
	}
	// a symlink is followed, and stays a symlink
	link := filepath.Join(dir, "link.json")
	os.Symlink(path, link)
	if _, err := EditRegistryFile(link, func(data []byte) ([]byte, error) { return AddEntry(link, data, newEntry, false) }); err != nil {
		t.Fatal(err)
	}
	if fi, _ := os.Lstat(link); fi.Mode()&os.ModeSymlink == 0 {
		t.Error("the symlink was replaced by a file")
	}
}

func TestResolveCommand(t *testing.T) {
	dir := t.TempDir()
	bin := filepath.Join(dir, "bin")
	os.Mkdir(bin, 0o755)
	os.WriteFile(filepath.Join(bin, "srv"), []byte("#!/bin/sh\n"), 0o755)
	os.WriteFile(filepath.Join(bin, "plain"), []byte(""), 0o644)
	rel := filepath.Join(dir, "rel")
	os.Mkdir(rel, 0o755)
	os.WriteFile(filepath.Join(rel, "srv"), []byte("#!/bin/sh\n"), 0o755)

	cases := []struct {
		name, path, want, err string
	}{
		{"srv", "::rel:" + bin, filepath.Join(bin, "srv"), ""},
		{"srv", "rel:.", "", "is not found in PATH"},
		{"plain", bin, "", "is not found in PATH"},
		{filepath.Join(bin, "srv"), "", filepath.Join(bin, "srv"), ""},
		{"bin/srv", "", filepath.Join(bin, "srv"), ""},
		{"./bin/../bin/srv", "", filepath.Join(bin, "srv"), ""},
		{"/nonexistent/srv", "", "", `command "/nonexistent/srv" does not exist; install it, or give the absolute path of the server, as in -- /nonexistent/srv`},
		{filepath.Join(bin, "plain"), "", "", "is not executable"},
		{bin, "", "", "is a directory"},
		{"uvx", "/nonexistent", "", `command "uvx" is not found in PATH (its empty and relative entries are skipped); install it, or give the absolute path of the server, as in -- /path/to/uvx`},
	}
	for _, c := range cases {
		got, err := ResolveCommand(c.name, c.path, dir)
		if c.err != "" {
			var nf *CommandNotFoundError
			if !errors.As(err, &nf) || !strings.Contains(err.Error(), c.err) {
				t.Errorf("%s in %q: %v, want %q", c.name, c.path, err, c.err)
			}
			continue
		}
		if err != nil || got != c.want {
			t.Errorf("%s in %q: %q, %v; want %q", c.name, c.path, got, err, c.want)
		}
	}
}

// FuzzEditRegistry: on any registry file the loader reads, an edit that
// succeeds keeps every other entry's text byte for byte and loads.
func FuzzEditRegistry(f *testing.F) {
	for _, s := range editFiles {
		f.Add([]byte(s), "b", uint8(0))
		f.Add([]byte(s), "a", uint8(1))
		f.Add([]byte(s), "c", uint8(2))
	}
	f.Add([]byte(`{"providers": null, "x": [1]}`), "a", uint8(3))
	f.Add([]byte(`{}`), "tracker", uint8(0))
	f.Fuzz(func(t *testing.T, data []byte, id string, op uint8) {
		if data == nil {
			data = []byte{} // nil is a file that does not exist yet
		}
		if _, err := ParseRegistry("c.json", data); err != nil {
			if _, err := AddEntry("c.json", data, newEntry, false); err == nil {
				t.Fatalf("an edit accepted a file the loader refuses: %q", data)
			}
			return
		}
		before := rawEntries(t, data)
		var out []byte
		var err error
		keep := func(s string) bool { return true }
		switch op % 4 {
		case 0:
			e := *newEntry
			e.ID = id
			out, err = AddEntry("c.json", data, &e, op%8 >= 4)
			keep = func(s string) bool { return !hasID(s, id) }
		case 1:
			out, err = RemoveEntry("c.json", data, id)
			keep = func(s string) bool { return !hasID(s, id) }
		default:
			out, err = SetEnabled("c.json", data, id, op%4 == 2)
			keep = func(s string) bool { return !hasID(s, id) }
		}
		if err != nil {
			return
		}
		reg, perr := ParseRegistry("c.json", out)
		if perr != nil {
			t.Fatalf("the edited file does not load: %v\n%q\n→\n%q", perr, data, out)
		}
		if op%4 != 1 && reg.Provider(id) == nil {
			t.Fatalf("the edited entry does not load:\n%q\n→\n%q (%v)", data, out, reg.Problems)
		}
		var kept []string
		for _, s := range before {
			if keep(s) {
				kept = append(kept, s)
			}
		}
		var got []string
		for _, s := range rawEntries(t, out) {
			if keep(s) {
				got = append(got, s)
			}
		}
		if strings.Join(kept, "\x00") != strings.Join(got, "\x00") {
			t.Fatalf("other entries changed:\n%q\n→\n%q", data, out)
		}
	})
}

func hasID(entry, id string) bool {
	var head struct {
		ID json.RawMessage `json:"id"`
	}
	var s string
	return json.Unmarshal([]byte(entry), &head) == nil && json.Unmarshal(head.ID, &s) == nil && s == id
}

func TestEditRegistryFileOneAtATime(t *testing.T) {
	path := filepath.Join(t.TempDir(), "capabilities.json")
	const n = 16
	errs := make(chan error, n)
	for i := 0; i < n; i++ {
		go func(i int) {
			e := &Entry{ID: "p" + strings.Repeat("x", i), Command: []string{"/bin/true"}}
			_, err := EditRegistryFile(path, func(data []byte) ([]byte, error) { return AddEntry(path, data, e, false) })
			errs <- err
		}(i)
	}
	for i := 0; i < n; i++ {
		if err := <-errs; err != nil {
			t.Fatal(err)
		}
	}
	reg, err := LoadRegistry(path)
	if err != nil || len(reg.Providers) != n || len(reg.Problems) != 0 {
		t.Fatalf("concurrent adds: %d entries, %v %v", len(reg.Providers), reg.Problems, err)
	}
}
