package audit

import (
	"bytes"
	"context"
	"errors"
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
	if err := Read(bytes.NewReader(data), func(e Entry) error { got = append(got, e); return nil }, nil); err != nil {
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
	if err := Read(f, func(e Entry) error { n++; return nil }, nil); err != nil {
		t.Fatal(err)
	}
	if n != 400 {
		t.Fatalf("%d whole lines, want 400", n)
	}
}

func TestUnwritable(t *testing.T) {
	// A directory where the trail should be: no user, root included, can
	// open it for appending.
	path := filepath.Join(t.TempDir(), "audit.jsonl")
	if err := os.Mkdir(path, 0o700); err != nil {
		t.Fatal(err)
	}
	if _, err := Open(path, "s", "t", nil); err == nil {
		t.Fatal("opened a directory as the audit trail")
	}
}

// TestFailuresCounted: a trail that cannot be opened and an event that
// cannot be written are each counted in the trail's failures file, per
// session, with the latest said.
func TestFailuresCounted(t *testing.T) {
	dir := t.TempDir()
	bad := filepath.Join(dir, "bad.jsonl")
	if err := os.Mkdir(bad, 0o700); err != nil {
		t.Fatal(err)
	}
	Open(bad, "s-1", "t-1", nil)
	n, last, err := Failures(bad, "")
	if err != nil || n != 1 || last.Event != "open" || last.Session != "s-1" || !strings.Contains(last.Error, "opening the audit trail") {
		t.Fatalf("after a failed open: %d %+v %v", n, last, err)
	}

	path := filepath.Join(dir, "audit.jsonl")
	if n, last, err := Failures(path, ""); n != 0 || last != nil || err != nil {
		t.Fatalf("a trail with no failures: %d %+v %v", n, last, err)
	}
	l, err := Open(path, "s-2", "t-1", nil)
	if err != nil {
		t.Fatal(err)
	}
	if err := l.Record(CapabilityInvoked, nil); err != nil {
		t.Fatal(err)
	}
	l.w.f.Close() // every write fails from here on
	for _, ev := range []string{CapabilityRefused, ProviderFailed} {
		if err := l.Record(ev, nil); err == nil {
			t.Fatalf("%s recorded on a closed trail", ev)
		}
	}
	if n, last, err := Failures(path, "s-2"); n != 2 || last.Event != ProviderFailed || last.Turn != "t-1" {
		t.Fatalf("after two failed writes: %d %+v %v", n, last, err)
	}
	if n, _, _ := Failures(path, "s-other"); n != 0 {
		t.Fatalf("another session's failures: %d", n)
	}
}

func TestNilLogger(t *testing.T) {
	var l *Logger
	if err := l.Record(CapabilityInvoked, nil); err != nil {
		t.Fatal(err)
	}
}

// trail has good lines 1, 3 and 6 and lines 2, 4 and 7 that do not decode;
// line 5 is empty.
const trail = `{"time":"2026-12-02T10:00:00Z","event":"a","session":"s","turn":"t"}
not json
{"time":"2026-12-02T10:00:01Z","event":"b","session":"s","turn":"t"}
{"time":"yesterday","event":"c"}

{"time":"2026-12-02T10:00:02Z","event":"d","session":"s","turn":"t"}
{"session":"s"}
`

func TestReadBadLines(t *testing.T) {
	var events, bad []string
	err := Read(strings.NewReader(trail), func(e Entry) error { events = append(events, e.Event); return nil },
		func(le *LineError) { bad = append(bad, le.Error()) })
	if err != nil {
		t.Fatal(err)
	}
	if strings.Join(events, " ") != "a b d" {
		t.Errorf("events %q, want a b d", events)
	}
	want := []string{
		"line 2: not a JSON object: invalid character 'o' in literal null (expecting 'u')",
		`line 4: the time "yesterday" is not an RFC 3339 time`,
		`line 7: no "event"`,
	}
	if strings.Join(bad, "\n") != strings.Join(want, "\n") {
		t.Errorf("bad lines:\n%s\nwant:\n%s", strings.Join(bad, "\n"), strings.Join(want, "\n"))
	}
}

func TestReadStopsWithoutBad(t *testing.T) {
	var events []string
	err := Read(strings.NewReader(trail), func(e Entry) error { events = append(events, e.Event); return nil }, nil)
	var le *LineError
	if !errors.As(err, &le) || le.Line != 2 || strings.Join(events, " ") != "a" {
		t.Fatalf("err %v, events %q; want line 2 after a", err, events)
	}
}

func TestReadEntryError(t *testing.T) {
	stop := errors.New("stop")
	n := 0
	err := Read(strings.NewReader(trail), func(e Entry) error { n++; return stop }, func(*LineError) {})
	if err != stop || n != 1 {
		t.Fatalf("err %v after %d entries; want stop after 1", err, n)
	}
}

func TestFollowBadLines(t *testing.T) {
	path := filepath.Join(t.TempDir(), "audit.jsonl")
	ctx, cancel := context.WithCancel(context.Background())
	defer cancel()
	var mu sync.Mutex
	var events, bad []string
	done := make(chan error, 1)
	go func() {
		done <- Follow(ctx, path, nil, 5*time.Millisecond,
			func(e Entry) error { mu.Lock(); events = append(events, e.Event+" "+e.Raw); mu.Unlock(); return nil },
			func(le *LineError) { mu.Lock(); bad = append(bad, fmt.Sprint(le.Line)); mu.Unlock() })
	}()
	// The file appears, then grows a part of a line at a time.
	time.Sleep(20 * time.Millisecond)
	f, err := os.Create(path)
	if err != nil {
		t.Fatal(err)
	}
	defer f.Close()
	for _, part := range []string{trail[:30], trail[30:100], trail[100:]} {
		f.WriteString(part)
		time.Sleep(20 * time.Millisecond)
	}
	wait := time.Now().Add(5 * time.Second)
	for {
		mu.Lock()
		n := len(events) + len(bad)
		mu.Unlock()
		if n == 6 || time.Now().After(wait) {
			break
		}
		time.Sleep(5 * time.Millisecond)
	}
	cancel()
	if err := <-done; err != nil {
		t.Fatal(err)
	}
	mu.Lock()
	defer mu.Unlock()
	if len(events) != 3 || !strings.HasPrefix(events[0], `a {"time"`) || !strings.HasSuffix(events[2], `"turn":"t"}`) {
		t.Errorf("events %q: want a, b and d, each with its line and no newline", events)
	}
	if strings.Join(bad, " ") != "2 4 7" {
		t.Errorf("bad lines %q, want 2 4 7", bad)
	}
}

func TestFollowStopsWithoutBad(t *testing.T) {
	err := Follow(context.Background(), "", strings.NewReader(trail), time.Millisecond, func(Entry) error { return nil }, nil)
	var le *LineError
	if !errors.As(err, &le) || le.Line != 2 {
		t.Fatalf("err %v, want line 2", err)
	}
}

func TestParseEntryErrors(t *testing.T) {
	for line, want := range map[string]string{
		`[1]`:                         "not a JSON object but a JSON array",
		`"x"`:                         "not a JSON object but a JSON string",
		`{"time":"2026-12-02T10:00:0`: "not a JSON object: unexpected end of JSON input",
		`{"event":"a","time":"noon"}`: `the time "noon" is not an RFC 3339 time`,
		`{"event":""}`:                `no "event"`,
		`null`:                        `no "event"`,
	} {
		if _, err := ParseEntry([]byte(line)); err == nil || err.Error() != want {
			t.Errorf("%s: %v, want %s", line, err, want)
		}
	}
}
