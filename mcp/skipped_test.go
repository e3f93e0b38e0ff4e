package mcp

import (
	"bufio"
	"context"
	"encoding/json"
	"fmt"
	"io"
	"strings"
	"testing"
	"time"
	"unicode/utf8"
)

// scripted is a server over io.Pipe that writes, before its answer to each
// request, the lines its script gives for the request's method, as they
// are (each with its own line ending, or none).
func scripted(t *testing.T, script map[string][]string) io.ReadWriteCloser {
	fromServer, serverOut := io.Pipe()
	serverIn, toServer := io.Pipe()
	answers := map[string]string{
		"initialize": `{"protocolVersion":"` + ProtocolVersion + `","capabilities":{},"serverInfo":{"name":"scripted","version":"1"}}`,
		"tools/list": `{"tools":[{"name":"echo","inputSchema":{"type":"object"}}]}`,
		"tools/call": `{"content":[{"type":"text","text":"done"}]}`,
	}
	go func() {
		defer serverOut.Close()
		r := bufio.NewReader(serverIn)
		for {
			line, err := r.ReadBytes('\n')
			if err != nil {
				return
			}
			var m struct {
				ID     json.RawMessage `json:"id"`
				Method string          `json:"method"`
			}
			if json.Unmarshal(line, &m) != nil || len(m.ID) == 0 {
				continue
			}
			for _, l := range script[m.Method] {
				if _, err := io.WriteString(serverOut, l); err != nil {
					return
				}
			}
			fmt.Fprintf(serverOut, `{"jsonrpc":"2.0","id":%s,"result":%s}`+"\n", m.ID, answers[m.Method])
		}
	}()
	t.Cleanup(func() { serverIn.Close() })
	return halfPipe{fromServer, toServer}
}

// lines returns n copies of line.
func lines(n int, line string) []string {
	out := make([]string, n)
	for i := range out {
		out[i] = line
	}
	return out
}

const banner = "No X display available. Running in headless mode.\n"

// TestSkippedLines: lines that are not JSON at all are skipped and
// counted, wherever they come, up to the bounds; JSON that is not JSON-RPC
// still breaks the protocol.
func TestSkippedLines(t *testing.T) {
	kib40 := strings.Repeat("x", 40<<10) + "\n"
	cases := []struct {
		name       string
		script     map[string][]string
		maxMessage int
		wantErr    string // "" wants initialize, list and call to succeed
		want       SkippedLines
	}{
		{name: "nothing skipped", want: SkippedLines{}},
		{name: "banner before the answer to initialize",
			script: map[string][]string{"initialize": {banner}},
			want:   SkippedLines{Lines: 1, Bytes: len(banner), First: strings.TrimSpace(banner)}},
		{name: "banner between answers",
			script: map[string][]string{"tools/list": {"listing…\n"}, "tools/call": {"calling\r\n", banner}},
			want:   SkippedLines{Lines: 3, Bytes: len("listing…\n") + len("calling\r\n") + len(banner), First: "listing…"}},
		{name: "blank lines are not counted",
			script: map[string][]string{"initialize": {"\n", "  \t\r\n", banner, "\n"}},
			want:   SkippedLines{Lines: 1, Bytes: len(banner), First: strings.TrimSpace(banner)}},
		{name: "100 lines",
			script: map[string][]string{"initialize": lines(60, banner), "tools/call": lines(40, banner)},
			want:   SkippedLines{Lines: 100, Bytes: 100 * len(banner), First: strings.TrimSpace(banner)}},
		{name: "101 lines in a row",
			script:  map[string][]string{"initialize": lines(60, banner), "tools/list": {}, "tools/call": lines(101, banner)},
			wantErr: `server wrote 101 lines that are not JSON on its stdout in a row (5050 bytes; the first it ever wrote: "No X display available. Running in headless mode."), past the 100 lines or 65536 bytes a client skips between two messages`,
			want:    SkippedLines{Lines: 161, Bytes: 161 * len(banner), First: strings.TrimSpace(banner)}},
		{name: "101 lines, with messages between",
			script: map[string][]string{"initialize": lines(100, banner), "tools/list": lines(100, banner), "tools/call": lines(100, banner)},
			want:   SkippedLines{Lines: 300, Bytes: 300 * len(banner), First: strings.TrimSpace(banner)}},
		{name: "64 KiB",
			script: map[string][]string{"initialize": {strings.Repeat("x", 32<<10-1) + "\n", strings.Repeat("y", 32<<10-1) + "\n"}},
			want:   SkippedLines{Lines: 2, Bytes: 64 << 10, First: strings.Repeat("x", MaxSkippedSample-len("…")) + "…"}},
		{name: "past 64 KiB in a row",
			script:  map[string][]string{"tools/list": {kib40, kib40}},
			wantErr: "server wrote 2 lines that are not JSON on its stdout in a row (81922 bytes;",
			want:    SkippedLines{Lines: 2, Bytes: 2 * len(kib40), First: strings.Repeat("x", MaxSkippedSample-len("…")) + "…"}},
		{name: "past 64 KiB, with messages between",
			script: map[string][]string{"initialize": {kib40}, "tools/list": {kib40}, "tools/call": {kib40}},
			want:   SkippedLines{Lines: 3, Bytes: 3 * len(kib40), First: strings.Repeat("x", MaxSkippedSample-len("…")) + "…"}},
		{name: "one line past 64 KiB",
			script:  map[string][]string{"tools/call": {strings.Repeat("z", 64<<10) + "\n"}},
			wantErr: "server wrote 1 line that is not JSON on its stdout in a row (65537 bytes;",
			want:    SkippedLines{Lines: 1, Bytes: 64<<10 + 1, First: strings.Repeat("z", MaxSkippedSample-len("…")) + "…"}},
		{name: "a line longer than a message",
			script:     map[string][]string{"initialize": {strings.Repeat("x", 5000) + "\n"}},
			maxMessage: 4096,
			wantErr:    "server sent a message larger than 4096 bytes"},
		{name: "JSON that is not JSON-RPC: an object",
			script:  map[string][]string{"initialize": {banner, `{"hello":1}` + "\n"}},
			wantErr: `server wrote a line that is not JSON-RPC (its jsonrpc is "", not "2.0"): "{\"hello\":1}"`,
			want:    SkippedLines{Lines: 1, Bytes: len(banner), First: strings.TrimSpace(banner)}},
		{name: "JSON that is not JSON-RPC: an array",
			script:  map[string][]string{"tools/list": {"[1,2]\n"}},
			wantErr: "server sent a JSON array"},
		{name: "JSON that is not JSON-RPC: a string",
			script:  map[string][]string{"tools/call": {`"str"` + "\n"}},
			wantErr: `server wrote a line that is not JSON-RPC: "\"str\""`},
		{name: "JSON that is not JSON-RPC: a number",
			script:  map[string][]string{"initialize": {" 42 \n"}},
			wantErr: `server wrote a line that is not JSON-RPC: "42"`},
		{name: "JSON that is not JSON-RPC: null",
			script:  map[string][]string{"initialize": {"null\n"}},
			wantErr: `server wrote a line that is not JSON-RPC: "null"`},
		{name: "JSON cut short is not JSON",
			script: map[string][]string{"initialize": {`{"jsonrpc":"2.0","id":` + "\n"}},
			want:   SkippedLines{Lines: 1, Bytes: len(`{"jsonrpc":"2.0","id":` + "\n"), First: `{"jsonrpc":"2.0","id":`}},
		{name: "the first line is made printable",
			script: map[string][]string{"initialize": {"\x1b[33mWARN\x1b[0m\tno \x1b]0;title\x07display\u202e here\x00\x85\xff\n", banner}},
			want:   SkippedLines{Lines: 2, Bytes: len("\x1b[33mWARN\x1b[0m\tno \x1b]0;title\x07display\u202e here\x00\x85\xff\n") + len(banner), First: "WARN no display here\ufffd\ufffd"}},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			conn := &watched{ReadWriteCloser: scripted(t, tc.script), closed: make(chan struct{})}
			c := NewClient(conn, Options{Timeout: 5 * time.Second, MaxMessage: tc.maxMessage})
			defer c.Close()
			ctx := context.Background()
			_, err := c.Initialize(ctx)
			if err == nil {
				_, err = c.ListTools(ctx)
			}
			if err == nil {
				_, err = c.CallTool(ctx, "echo", nil)
			}
			switch {
			case tc.wantErr == "" && err != nil:
				t.Fatalf("err = %v", err)
			case tc.wantErr != "" && (!as[*ProtocolError](err) || !strings.Contains(err.Error(), tc.wantErr)):
				t.Fatalf("err = %v, want a protocol error with %q", err, tc.wantErr)
			case tc.wantErr != "":
				select {
				case <-conn.closed:
				case <-time.After(3 * time.Second):
					t.Fatal("the client did not close the connection")
				}
			}
			if got := c.SkippedLines(); got != tc.want {
				t.Errorf("SkippedLines() = %+v, want %+v", got, tc.want)
			}
		})
	}
}

// TestSkip: what Skip counts and what it leaves to the protocol.
func TestSkip(t *testing.T) {
	for _, line := range []string{"", "\n", " \t\r\n", "{}\n", `{"a":1}`, "[1,2]\n", `"s"`, "42", "-1.5e3\n", "true", "false", "null", ` {"jsonrpc":"2.0","id":1,"result":{}} ` + "\n"} {
		var s SkippedLines
		if skipped, err := s.Skip([]byte(line)); skipped || err != nil || s != (SkippedLines{}) {
			t.Errorf("Skip(%q) = %v, %v, %+v: JSON or blank is not skipped", line, skipped, err, s)
		}
	}
	for _, line := range []string{"hello\n", "{hello}", "[INFO] started\n", "nul", "1 2", `{"a":1}{"b":2}`, "'x'", "\x00", "\xff\n"} {
		var s SkippedLines
		if skipped, err := s.Skip([]byte(line)); !skipped || err != nil || s.Lines != 1 || s.Bytes != len(line) {
			t.Errorf("Skip(%q) = %v, %v, %+v: not JSON is skipped", line, skipped, err, s)
		}
	}
}

func TestPrintable(t *testing.T) {
	cases := []struct{ in, want string }{
		{"plain text", "plain text"},
		{"tab\there", "tab here"},
		{"\x1b[1;31mred\x1b[0m", "red"},
		{"\x1b7saved\x1b8", "saved"},
		{"\x1b]0;title\x07osc \x1b]8;;http://x\x1b\\link\x1b]8;;\x1b\\ \x1bPdcs", "osc link "},
		{"bell\x07 and del\x7f", "bell and del"},
		{"c1 \u009b31m csi", "c1 31m csi"},
		{"bidi \u202eevil\u202c zw\u200bsp", "bidi evil zwsp"},
		{"line\u2028sep", "linesep"},
		{"bad \xff\xfe utf8", "bad \ufffd\ufffd utf8"},
		{"esc at end \x1b", "esc at end "},
		{"esc before é: \x1bé", "esc before é: é"},
		{strings.Repeat("é", 150), strings.Repeat("é", 98) + "…"},
	}
	for _, tc := range cases {
		if got := printable([]byte(tc.in), MaxSkippedSample); got != tc.want {
			t.Errorf("printable(%q) = %q, want %q", tc.in, got, tc.want)
		}
	}
}

// checkSkipped fails unless s is within the bounds Skip keeps and its
// First is printable.
func checkSkipped(t *testing.T, s SkippedLines) {
	t.Helper()
	if s.Lines < 0 || s.Lines > MaxSkippedLines+1 || s.Bytes < s.Lines || s.Lines == 0 && (s.Bytes != 0 || s.First != "") {
		t.Fatalf("skipped %+v", s)
	}
	if len(s.First) > MaxSkippedSample || !utf8.ValidString(s.First) {
		t.Fatalf("first %q: %d bytes or not UTF-8", s.First, len(s.First))
	}
	for _, r := range s.First {
		if r < 0x20 || r == 0x7f || (r >= 0x80 && r < 0xa0) || r == 0x1b || r == 0x202e || r == 0x2028 {
			t.Fatalf("first %q holds %U", s.First, r)
		}
	}
}

// TestBannerFromProcess: a started server that prints a banner before it
// reads anything works, and the client says what it skipped; one that
// prints more lines than are skipped is stopped.
func TestBannerFromProcess(t *testing.T) {
	c := connect(t, fake("-banner", "1"))
	if _, err := c.CallTool(context.Background(), "echo", nil); err != nil {
		t.Fatal(err)
	}
	first := "No X display available. Running in headless mode. (1)"
	if got := c.SkippedLines(); got != (SkippedLines{Lines: 1, Bytes: len(first) + 1, First: first}) {
		t.Errorf("SkippedLines() = %+v", got)
	}

	_, err := Connect(context.Background(), fake("-banner", "101"))
	if !as[*ProtocolError](err) || !strings.Contains(err.Error(), `server wrote 101 lines that are not JSON on its stdout`) || !strings.Contains(err.Error(), first) {
		t.Fatalf("err = %v", err)
	}
}
