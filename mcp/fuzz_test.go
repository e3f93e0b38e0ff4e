package mcp

import (
	"bufio"
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"io"
	"strings"
	"testing"
	"time"
)

func FuzzDecodeMessage(f *testing.F) {
	for _, s := range []string{
		`{"jsonrpc":"2.0","id":1,"result":{}}`,
		`{"jsonrpc":"2.0","id":"x","method":"ping"}`,
		`{"jsonrpc":"2.0","method":"notifications/message","params":{}}`,
		`{"jsonrpc":"2.0","id":null,"error":{"code":-32700,"message":"x"}}`,
		`[{"jsonrpc":"2.0","id":1,"result":{}}]`,
		`hello`, ``, `{}`, `{"jsonrpc":"1.0"}`, `{"jsonrpc":"2.0","id":0,"result":null}`,
		`No X display available. Running in headless mode.`, `{"jsonrpc":"2.0","id":`, `42`, "\x1b[31mred\x1b[0m",
	} {
		f.Add([]byte(s))
	}
	f.Fuzz(func(t *testing.T, line []byte) {
		m, k, err := decodeMessage(line)
		if err != nil {
			var pe *ProtocolError
			if !errors.As(err, &pe) || m != nil {
				t.Fatalf("error %v is not a protocol error alone", err)
			}
			return
		}
		switch k {
		case kindRequest:
			if m.Method == "" || !m.hasID() {
				t.Fatalf("request without method or id: %q", line)
			}
		case kindNotification:
			if m.Method == "" || m.hasID() {
				t.Fatalf("notification with id or no method: %q", line)
			}
		case kindResponse:
			if m.Method != "" || len(m.ID) == 0 {
				t.Fatalf("response with a method or no id: %q", line)
			}
		}
		// A line that is not JSON at all is skipped; JSON never is.
		var s SkippedLines
		skipped, serr := s.Skip(line)
		if serr != nil || skipped == json.Valid(line) && len(trimSpace(line)) > 0 || skipped && err == nil && !json.Valid(bytes.TrimSpace(line)) {
			t.Fatalf("Skip(%q) = %v, %v; decodeMessage: %v", line, skipped, serr, err)
		}
		checkSkipped(t, s)
		// The line reader never returns more than its bound.
		got, err := ReadLine(bufio.NewReaderSize(bytes.NewReader(line), 16), 64)
		if err == nil && len(got) > 64 {
			t.Fatalf("readLine returned %d bytes", len(got))
		}
	})
}

// serverOutput is a connection that reads what a server wrote, then ends,
// and takes every write.
type serverOutput struct{ io.Reader }

func (serverOutput) Write(b []byte) (int, error) { return len(b), nil }
func (serverOutput) Close() error                { return nil }

// FuzzReadLoop feeds a client whatever a server could write: the
// connection ends with a protocol error or at the end of the output, the
// client never takes in more than its bounds of lines that are not JSON,
// and the first of them is printable.
func FuzzReadLoop(f *testing.F) {
	for _, s := range []string{
		"No X display available. Running in headless mode.\n" + `{"jsonrpc":"2.0","id":0,"result":{}}` + "\n",
		strings.Repeat("banner\n", MaxSkippedLines+1),
		strings.Repeat("x", 300) + "\n\n \r\n" + `{"hello":1}` + "\n",
		"\x1b[31mred\x1b[0m\t\u202e\xff\n[1,2]\n",
		`{"jsonrpc":"2.0","id":"a","method":"ping"}` + "\nlog\n" + `{"jsonrpc":"2.0","method":"x"}`,
	} {
		f.Add([]byte(s))
	}
	f.Fuzz(func(t *testing.T, data []byte) {
		c := NewClient(serverOutput{bytes.NewReader(data)}, Options{Timeout: time.Second, MaxMessage: 512})
		defer c.Close()
		select {
		case <-c.done:
		case <-time.After(5 * time.Second):
			t.Fatal("the connection did not end")
		}
		err := c.Err()
		if !as[*ProtocolError](err) && !as[*ExitError](err) {
			t.Fatalf("ended with %v (%T)", err, err)
		}
		s := c.SkippedLines()
		checkSkipped(t, s)
		if s.Bytes > len(data) || (s.Lines > MaxSkippedLines || s.Bytes > MaxSkippedBytes) && !strings.Contains(err.Error(), "not JSON on its stdout") {
			t.Fatalf("skipped %+v of %d bytes, and ended with %v", s, len(data), err)
		}
		if _, err := c.Initialize(context.Background()); err == nil {
			t.Fatal("a request succeeded on an ended connection")
		}
	})
}
