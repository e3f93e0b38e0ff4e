// Package audit appends the gateway's events to the audit trail, one JSON
// object a line, so that lines written by concurrent processes never
// interleave or tear.
package audit

import (
	"bufio"
	"bytes"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"os"
	"path/filepath"
	"sync"
	"syscall"
	"time"

	"spear/internal/lineread"

	"github.com/rs/zerolog"
)

// Event names, as docs/audit.md lists them.
const (
	ProviderRegistered       = "provider_registered"
	ProviderRejected         = "provider_rejected"
	ProviderAdmitted         = "provider_admitted"
	ProviderNotAdmitted      = "provider_not_admitted"
	CapabilityFamilySelected = "capability_family_selected"
	CapabilityIndexExposed   = "capability_index_exposed"
	CapabilityDescribed      = "capability_described"
	CapabilityInvoked        = "capability_invoked"
	CapabilityRefused        = "capability_refused"
	ProviderFailed           = "provider_failed"
	RuntimeWithoutGateway    = "runtime_without_gateway"
	ProviderStarted          = "provider_started"
	ProviderStopped          = "provider_stopped"
)

// Fields are an event's own fields, besides time, event, session and turn.
type Fields map[string]any

// Logger appends events for one session and turn. A nil *Logger records
// nothing and never fails.
type Logger struct {
	mu      sync.Mutex
	path    string
	w       *lockedFile
	zl      zerolog.Logger
	session string
	turn    string
	now     func() time.Time
}

// Open opens (creating it and its directory) the audit file at path for
// appending. now supplies the time of each event; nil means time.Now. A
// trail that cannot be opened, and every event Record cannot write, is
// counted in the trail's failures file (see Failures), whatever the caller
// does with the error.
func Open(path, session, turn string, now func() time.Time) (*Logger, error) {
	if path == "" {
		return nil, errors.New("no audit file is configured (set SPEAR_AUDIT_FILE or SPEAR_STATE_DIR)")
	}
	if err := os.MkdirAll(filepath.Dir(path), 0o700); err != nil {
		err = fmt.Errorf("opening the audit trail: %w", err)
		noteFailure(path, session, turn, "open", err)
		return nil, err
	}
	f, err := os.OpenFile(path, os.O_WRONLY|os.O_APPEND|os.O_CREATE, 0o600)
	if err != nil {
		err = fmt.Errorf("opening the audit trail: %w", err)
		noteFailure(path, session, turn, "open", err)
		return nil, err
	}
	if now == nil {
		now = time.Now
	}
	w := &lockedFile{f: f}
	return &Logger{path: path, w: w, zl: zerolog.New(w), session: session, turn: turn, now: now}, nil
}

// Close closes the audit file.
func (l *Logger) Close() error {
	if l == nil {
		return nil
	}
	return l.w.f.Close()
}

// Record appends one event. An error means the event was not recorded; it
// is counted in the trail's failures file.
func (l *Logger) Record(event string, fields Fields) error {
	if l == nil {
		return nil
	}
	l.mu.Lock()
	defer l.mu.Unlock()
	l.w.err = nil
	e := l.zl.Log().
		Str("time", l.now().UTC().Format(time.RFC3339Nano)).
		Str("event", event).
		Str("session", l.session).
		Str("turn", l.turn)
	if len(fields) > 0 {
		e = e.Fields(map[string]any(fields))
	}
	e.Send()
	if l.w.err != nil {
		err := fmt.Errorf("writing the audit trail: %w", l.w.err)
		noteFailure(l.path, l.session, l.turn, event, err)
		return err
	}
	return nil
}

func init() {
	// A write that fails is Record's error (lockedFile keeps it), said
	// by the caller in its own words: zerolog's own line on stderr would
	// reach the turn's terminal, naming the trail's path.
	zerolog.ErrorHandler = func(error) {}
}

// lockedFile writes each event with one write(2) under an exclusive flock,
// so that appends from many processes stay whole lines.
type lockedFile struct {
	f   *os.File
	err error
}

func (w *lockedFile) Write(p []byte) (int, error) {
	fd := int(w.f.Fd())
	if err := syscall.Flock(fd, syscall.LOCK_EX); err != nil {
		w.err = err
		return 0, err
	}
	defer syscall.Flock(fd, syscall.LOCK_UN)
	var st syscall.Stat_t
	if err := syscall.Fstat(fd, &st); err != nil {
		w.err = err
		return 0, err
	}
	n, err := w.f.Write(p)
	if err == nil && n < len(p) {
		err = io.ErrShortWrite
	}
	if err != nil {
		w.err = err
		if n > 0 {
			// A line cut short (a full disk, a file size limit) would
			// run into the next one: the trail keeps whole lines only.
			// The lock is still held, so nothing came after it.
			w.f.Truncate(st.Size)
		}
	}
	return n, err
}

// Entry is one line of the trail, decoded.
type Entry struct {
	Time    time.Time      `json:"-"`
	Event   string         `json:"event"`
	Session string         `json:"session"`
	Turn    string         `json:"turn"`
	Fields  map[string]any `json:"-"`
	Raw     string         `json:"-"`
}

// LineError is a line of the trail that does not decode.
type LineError struct {
	Line int // its number, counting from 1
	Err  error
}

func (e *LineError) Error() string { return fmt.Sprintf("line %d: %v", e.Line, e.Err) }

func (e *LineError) Unwrap() error { return e.Err }

// Read decodes a trail and calls fn with each entry. A line that does not
// decode is passed to bad, and reading goes on; with a nil bad, Read stops
// there and returns it. Otherwise Read returns the first error of fn or of
// reading.
func Read(r io.Reader, fn func(Entry) error, bad func(*LineError)) error {
	br := bufio.NewReaderSize(r, 64<<10)
	for n := 1; ; n++ {
		line, err := lineread.Read(br, maxReadLine)
		var tl *lineread.TooLongError
		switch {
		case errors.As(err, &tl):
			// Skipped, so that one line nothing can read hides none
			// after it.
			if err := skipLine(br); err != nil {
				return err
			}
			le := &LineError{Line: n, Err: fmt.Errorf("longer than %d bytes: not read", maxReadLine)}
			if bad == nil {
				return le
			}
			bad(le)
			continue
		case errors.Is(err, io.EOF):
			return nil
		case err != nil:
			return err
		}
		if err := decode(n, line, fn, bad); err != nil {
			return err
		}
	}
}

// maxReadLine bounds a line Read decodes; a longer one is a LineError.
// A variable for the tests.
var maxReadLine = 64 << 20

// skipLine reads past the end of the current line.
func skipLine(br *bufio.Reader) error {
	for {
		_, err := br.ReadSlice('\n')
		switch {
		case err == nil, errors.Is(err, io.EOF):
			return nil
		case !errors.Is(err, bufio.ErrBufferFull):
			return err
		}
	}
}

// decode hands line n, its end taken off, to fn when it decodes and to bad
// when it does not; an empty line is neither.
func decode(n int, line []byte, fn func(Entry) error, bad func(*LineError)) error {
	line = bytes.TrimSuffix(bytes.TrimSuffix(line, []byte("\n")), []byte("\r"))
	if len(line) == 0 {
		return nil
	}
	e, err := ParseEntry(line)
	if err != nil {
		le := &LineError{Line: n, Err: err}
		if bad == nil {
			return le
		}
		bad(le)
		return nil
	}
	return fn(e)
}

// ParseEntry decodes one line of the trail.
func ParseEntry(line []byte) (Entry, error) {
	var m map[string]any
	if err := json.Unmarshal(line, &m); err != nil {
		var te *json.UnmarshalTypeError
		if errors.As(err, &te) {
			return Entry{}, fmt.Errorf("not a JSON object but a JSON %s", te.Value)
		}
		return Entry{}, fmt.Errorf("not a JSON object: %w", err)
	}
	e := Entry{Fields: map[string]any{}, Raw: string(line)}
	for k, v := range m {
		s, _ := v.(string)
		switch k {
		case "time":
			t, err := time.Parse(time.RFC3339Nano, s)
			if err != nil {
				return Entry{}, fmt.Errorf("the time %q is not an RFC 3339 time", s)
			}
			e.Time = t
		case "event":
			e.Event = s
		case "session":
			e.Session = s
		case "turn":
			e.Turn = s
		default:
			e.Fields[k] = v
		}
	}
	if e.Event == "" {
		return Entry{}, errors.New(`no "event"`)
	}
	return e, nil
}
