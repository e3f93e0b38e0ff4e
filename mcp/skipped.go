package mcp

import (
	"encoding/json"
	"fmt"
	"spear/internal/termesc"
	"strconv"
	"strings"
	"unicode/utf8"
)

// Bounds on the lines that are not JSON at all which a connection skips
// (see SkippedLines).
const (
	// MaxSkippedLines is how many such lines a connection skips between
	// two messages (or before the first); one more ends it.
	MaxSkippedLines = 100
	// MaxSkippedBytes is how many bytes of such lines, line endings
	// included, a connection skips between two messages; one more ends
	// it.
	MaxSkippedBytes = 64 << 10
	// MaxSkippedSample bounds SkippedLines.First, in bytes.
	MaxSkippedSample = 200
)

// SkippedLines counts the lines a server wrote on its stdout that are not
// JSON at all, such as a banner ("No X display available. Running in
// headless mode."), which the client skips as most hosts do. A line that is
// JSON but not a JSON-RPC 2.0 message ({"hello":1}, [1,2], "text", 42) is
// not skipped: it breaks the protocol. Blank lines are skipped and not
// counted.
type SkippedLines struct {
	// Lines is how many lines were skipped, in all.
	Lines int
	// Bytes is how long they were in all, line endings included.
	Bytes int
	// First is the first of them, made safe to show and to record: on
	// one line, without escape sequences or control and format
	// characters, invalid UTF-8 as U+FFFD, at most MaxSkippedSample bytes
	// long; "" while none was skipped.
	First string

	runLines, runBytes int // since the last message: what the bounds apply to
}

// Message notes that a message came: the bounds apply afresh to the lines
// after it. A server that writes a stray line with each answer (a log
// line on the wrong stream) is served for as long as it runs; one that
// writes nothing but such lines is not.
func (s *SkippedLines) Message() { s.runLines, s.runBytes = 0, 0 }

// Totals returns the counts without what the bounds apply to, to show or
// to compare.
func (s SkippedLines) Totals() SkippedLines {
	return SkippedLines{Lines: s.Lines, Bytes: s.Bytes, First: s.First}
}

// Skip counts line, read from a server, when it is not JSON at all, and
// says whether it did. Once more than MaxSkippedLines lines or
// MaxSkippedBytes bytes have been counted since the last message (see
// Message), it returns a *ProtocolError,
// with which the connection ends. A client calls it only for a line that
// is not a JSON-RPC message; the session process's relay shares it.
func (s *SkippedLines) Skip(line []byte) (bool, error) {
	if len(trimSpace(line)) == 0 || json.Valid(line) {
		return false, nil
	}
	if s.Lines == 0 {
		s.First = printable(trimSpace(line), MaxSkippedSample)
	}
	s.Lines++
	s.Bytes += len(line)
	s.runLines++
	s.runBytes += len(line)
	if s.runLines > MaxSkippedLines || s.runBytes > MaxSkippedBytes {
		lines := fmt.Sprintf("%d lines that are", s.runLines)
		if s.runLines == 1 {
			lines = "1 line that is"
		}
		return true, &ProtocolError{Msg: fmt.Sprintf(
			"server wrote %s not JSON on its stdout in a row (%d bytes; the first it ever wrote: %q), past the %d lines or %d bytes a client skips between two messages; "+
				"a server writes only JSON-RPC messages on its stdout, and its logs on its stderr",
			lines, s.runBytes, s.First, MaxSkippedLines, MaxSkippedBytes)}
	}
	return true, nil
}

// printable returns the server's text b as one line that is safe to show
// and to record, at most max bytes long (cut with "…", which counts):
// terminal escape sequences (see termesc.Len) are removed whole, tabs become
// spaces, every other character that strconv.IsPrint rejects (control and
// format characters, line and paragraph separators) is removed, and
// invalid UTF-8 becomes U+FFFD. present cleans text for the same reasons;
// mcp cannot use it, for present uses mcp.
func printable(b []byte, max int) string {
	const ellipsis = "…"
	var out strings.Builder
	for i := 0; i < len(b); {
		r, size := utf8.DecodeRune(b[i:])
		switch {
		case r == 0x1b:
			i += termesc.Len(b[i:])
			continue
		case r == '\t':
			r = ' '
		case r == utf8.RuneError && size == 1:
		case !strconv.IsPrint(r):
			i += size
			continue
		}
		if out.Len()+utf8.RuneLen(r) > max {
			return cut(out.String(), max-len(ellipsis)) + ellipsis
		}
		out.WriteRune(r)
		i += size
	}
	return out.String()
}

// cut returns s cut to at most n bytes, on a character boundary.
func cut(s string, n int) string {
	if len(s) <= n {
		return s
	}
	for n > 0 && !utf8.RuneStart(s[n]) {
		n--
	}
	return s[:n]
}
