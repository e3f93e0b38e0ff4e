package audit

import (
	"bufio"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"io/fs"
	"os"
	"sort"
	"strings"
	"time"
)

// Filter selects entries; empty fields match everything.
type Filter struct {
	Session, Turn, Event string
	Since                time.Time
}

// Match reports whether e passes the filter.
func (f Filter) Match(e Entry) bool {
	return (f.Session == "" || e.Session == f.Session) &&
		(f.Turn == "" || e.Turn == f.Turn) &&
		(f.Event == "" || e.Event == f.Event) &&
		(f.Since.IsZero() || !e.Time.Before(f.Since))
}

// ParseSince reads a duration before now (30m, 2h) or an RFC 3339 time.
func ParseSince(s string, now time.Time) (time.Time, error) {
	if d, err := time.ParseDuration(s); err == nil {
		return now.Add(-d), nil
	}
	if t, err := time.Parse(time.RFC3339, s); err == nil {
		return t, nil
	}
	return time.Time{}, fmt.Errorf("--since %q is neither a duration (30m, 2h) nor an RFC 3339 time (2026-12-02T10:00:00Z)", s)
}

// Format renders an entry on one line: time, session/turn, event, fields.
func Format(e Entry) string {
	keys := make([]string, 0, len(e.Fields))
	for k := range e.Fields {
		keys = append(keys, k)
	}
	sort.Strings(keys)
	var b strings.Builder
	fmt.Fprintf(&b, "%s  %s/%s  %s", e.Time.UTC().Format("2006-01-02T15:04:05.000Z"), orDash(e.Session), orDash(e.Turn), e.Event)
	for _, k := range keys {
		v := e.Fields[k]
		var s string
		if str, ok := v.(string); ok {
			s = str
			if strings.ContainsAny(s, " \t\"=") || s == "" {
				s = fmt.Sprintf("%q", s)
			}
		} else {
			data, _ := json.Marshal(v)
			s = string(data)
		}
		fmt.Fprintf(&b, " %s=%s", k, s)
	}
	return strings.Map(func(r rune) rune {
		if r < 0x20 || r == 0x7f || (r >= 0x80 && r < 0xa0) {
			return '?'
		}
		return r
	}, b.String())
}

func orDash(s string) string {
	if s == "" {
		return "-"
	}
	return s
}

// Follow prints what r holds, then waits for the file at path to grow (or
// appear) and prints each new whole line, until ctx is done. Lines are
// numbered from the start of r, or of the file when r is nil, and one that
// does not decode goes to bad, as in Read.
func Follow(ctx context.Context, path string, r io.Reader, poll time.Duration, fn func(Entry) error, bad func(*LineError)) error {
	var f *os.File
	if r == nil {
		for {
			var err error
			f, err = os.Open(path)
			if err == nil {
				break
			}
			if !errors.Is(err, fs.ErrNotExist) {
				return err
			}
			select {
			case <-ctx.Done():
				return nil
			case <-time.After(poll):
			}
		}
		defer f.Close()
		r = f
	}
	br := bufio.NewReader(r)
	var partial []byte
	for n := 1; ; {
		line, err := br.ReadBytes('\n')
		partial = append(partial, line...)
		if err == nil {
			if err := decode(n, partial, fn, bad); err != nil {
				return err
			}
			partial = partial[:0]
			n++
			continue
		}
		if !errors.Is(err, io.EOF) {
			return err
		}
		select {
		case <-ctx.Done():
			return nil
		case <-time.After(poll):
		}
	}
}
