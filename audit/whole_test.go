package audit

import (
	"bytes"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"golang.org/x/sys/unix"
)

// TestCutShortLineRemoved: a record the file has room for only part of
// (a full disk, a file size limit) is an error, and leaves nothing of
// itself: the next record starts on a line of its own.
func TestCutShortLineRemoved(t *testing.T) {
	path := filepath.Join(t.TempDir(), "audit.jsonl")
	l, err := Open(path, "s-1", "t-1", nil)
	if err != nil {
		t.Fatal(err)
	}
	defer l.Close()
	if err := l.Record("first", Fields{"n": 1}); err != nil {
		t.Fatal(err)
	}
	before, _ := os.ReadFile(path)
	var old unix.Rlimit
	if err := unix.Getrlimit(unix.RLIMIT_FSIZE, &old); err != nil {
		t.Fatal(err)
	}
	lim := unix.Rlimit{Cur: uint64(len(before) + 10), Max: old.Max}
	if err := unix.Setrlimit(unix.RLIMIT_FSIZE, &lim); err != nil {
		t.Fatal(err)
	}
	err = l.Record("second", Fields{"n": 2})
	if rerr := unix.Setrlimit(unix.RLIMIT_FSIZE, &old); rerr != nil {
		t.Fatal(rerr)
	}
	if err == nil {
		t.Fatal("a record past the limit was not an error")
	}
	after, _ := os.ReadFile(path)
	if !bytes.Equal(after, before) {
		t.Fatalf("the trail holds part of the record:\n%q", after[len(before):])
	}
	if err := l.Record("third", Fields{"n": 3}); err != nil {
		t.Fatal(err)
	}
	f, err := os.Open(path)
	if err != nil {
		t.Fatal(err)
	}
	defer f.Close()
	var events []string
	err = Read(f, func(e Entry) error { events = append(events, e.Event); return nil }, func(le *LineError) {
		t.Errorf("a line that does not decode: %v", le)
	})
	if err != nil || len(events) != 2 || events[1] != "third" {
		t.Fatalf("events %v, %v", events, err)
	}
}

// TestLongLineSkipped: a line longer than Read decodes is reported with
// its number, and every line after it is still read.
func TestLongLineSkipped(t *testing.T) {
	defer func(n int) { maxReadLine = n }(maxReadLine)
	maxReadLine = 1000
	first := `{"time":"2026-12-02T10:00:00Z","event":"first","session":"s","turn":"t"}`
	long := `{"time":"2026-12-02T10:00:01Z","event":"long","session":"s","turn":"t","x":"` + strings.Repeat("a", 200<<10) + `"}`
	last := `{"time":"2026-12-02T10:00:02Z","event":"last","session":"s","turn":"t"}`
	var events []string
	var bad []string
	err := Read(strings.NewReader(first+"\n"+long+"\n"+last+"\n"), func(e Entry) error {
		events = append(events, e.Event)
		return nil
	}, func(le *LineError) { bad = append(bad, le.Error()) })
	if err != nil || strings.Join(events, " ") != "first last" {
		t.Fatalf("events %v, %v", events, err)
	}
	if len(bad) != 1 || !strings.Contains(bad[0], "line 2") || !strings.Contains(bad[0], "longer than 1000 bytes") {
		t.Fatalf("bad lines %q", bad)
	}
}
