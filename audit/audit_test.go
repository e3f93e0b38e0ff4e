package audit

import (
	"bytes"
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"sync"
	"testing"
	"time"
)

func TestRecordAndRead(t *testing.T) {
	path := filepath.Join(t.TempDir(), "sub", "audit.jsonl")
	clock := func() time.Time { return time.Date(2026, 12, 2, 10, 0, 0, 0, time.UTC) }
	l, err := Open(path, "s-1", "t-1", clock)
	if err != nil {
		t.Fatal(err)
	}
	if err := l.Record(CapabilityInvoked, Fields{"capability": "notes/read", "duration_ms": 12}); err != nil {
		t.Fatal(err)
	}
	l.Close()
	data, _ := os.ReadFile(path)
	want := `{"time":"2026-12-02T10:00:00Z","event":"capability_invoked","session":"s-1","turn":"t-1","capability":"notes/read","duration_ms":12}` + "\n"
	if string(data) != want {
		t.Fatalf("got  %s\nwant %s", data, want)
	}
	var got []Entry
	if err := Read(bytes.NewReader(data), func(e Entry) error { got = append(got, e); return nil }); err != nil {
		t.Fatal(err)
	}
	if len(got) != 1 || got[0].Event != CapabilityInvoked || got[0].Fields["capability"] != "notes/read" || !got[0].Time.Equal(clock()) {
		t.Fatalf("read %+v", got)
	}
}

func TestConcurrentAppendsStayWhole(t *testing.T) {
	path := filepath.Join(t.TempDir(), "audit.jsonl")
	var wg sync.WaitGroup
	big := strings.Repeat("x", 100_000) // far past PIPE_BUF
	for i := 0; i < 8; i++ {
		wg.Add(1)
		go func(i int) {
			defer wg.Done()
			l, err := Open(path, "s", fmt.Sprint(i), nil)
			if err != nil {
				t.Error(err)
				return
			}
			defer l.Close()
			for j := 0; j < 50; j++ {
				if err := l.Record(CapabilityInvoked, Fields{"n": j, "pad": big}); err != nil {
					t.Error(err)
				}
			}
		}(i)
	}
	wg.Wait()
	f, _ := os.Open(path)
	defer f.Close()
	n := 0
	if err := Read(f, func(e Entry) error { n++; return nil }); err != nil {
		t.Fatal(err)
	}
	if n != 400 {
		t.Fatalf("%d whole lines, want 400", n)
	}
}

func TestUnwritable(t *testing.T) {
	if os.Geteuid() == 0 {
		// root writes anywhere; a full device stands in for a read-only file
		l, err := Open("/dev/full", "s", "t", nil)
		if err != nil {
			t.Skip(err)
		}
		if err := l.Record(CapabilityInvoked, nil); err == nil {
			t.Fatal("writing to /dev/full succeeded")
		}
		return
	}
	dir := t.TempDir()
	os.Chmod(dir, 0o500)
	if _, err := Open(filepath.Join(dir, "x", "audit.jsonl"), "s", "t", nil); err == nil {
		t.Fatal("opened an audit file in a read-only directory")
	}
}

func TestNilLogger(t *testing.T) {
	var l *Logger
	if err := l.Record(CapabilityInvoked, nil); err != nil {
		t.Fatal(err)
	}
}
