package mcp

import (
	"bufio"
	"bytes"
	"errors"
	"testing"
)

func FuzzDecodeMessage(f *testing.F) {
	for _, s := range []string{
		`{"jsonrpc":"2.0","id":1,"result":{}}`,
		`{"jsonrpc":"2.0","id":"x","method":"ping"}`,
		`{"jsonrpc":"2.0","method":"notifications/message","params":{}}`,
		`{"jsonrpc":"2.0","id":null,"error":{"code":-32700,"message":"x"}}`,
		`[{"jsonrpc":"2.0","id":1,"result":{}}]`,
		`hello`, ``, `{}`, `{"jsonrpc":"1.0"}`, `{"jsonrpc":"2.0","id":0,"result":null}`,
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
		// The line reader never returns more than its bound.
		got, err := ReadLine(bufio.NewReaderSize(bytes.NewReader(line), 16), 64)
		if err == nil && len(got) > 64 {
			t.Fatalf("readLine returned %d bytes", len(got))
		}
	})
}
