package mcp

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"os"
	"regexp"
	"strings"
	"sync"
	"testing"
	"time"

	"spear/internal/fakemcp"
)

// watched is a connection that says when the client closed it.
type watched struct {
	io.ReadWriteCloser
	once   sync.Once
	closed chan struct{}
}

func (w *watched) Close() error {
	w.once.Do(func() { close(w.closed) })
	return w.ReadWriteCloser.Close()
}

func (w *watched) isClosed() bool {
	select {
	case <-w.closed:
		return true
	default:
		return false
	}
}

// pipe runs the fake server in this process and returns the client's end.
func pipe(args ...string) *watched {
	return &watched{ReadWriteCloser: fakemcp.Pipe(args...), closed: make(chan struct{})}
}

// as reports whether err is or wraps a T.
func as[T error](err error) bool {
	var t T
	return errors.As(err, &t)
}

// afterInit runs f after a successful Initialize.
func afterInit(f func(context.Context, *Client) error) func(context.Context, *Client) error {
	return func(ctx context.Context, c *Client) error {
		if _, err := c.Initialize(ctx); err != nil {
			return fmt.Errorf("initialize: %w", err)
		}
		return f(ctx, c)
	}
}

func initialize(ctx context.Context, c *Client) error {
	res, err := c.Initialize(ctx)
	if err == nil && (res.ProtocolVersion != ProtocolVersion || res.ServerInfo.Name != "fake-mcp" || c.InitializeResult() != res) {
		err = fmt.Errorf("initialize result %+v", res)
	}
	return err
}

func listTools(n int) func(context.Context, *Client) error {
	return afterInit(func(ctx context.Context, c *Client) error {
		tools, err := c.ListTools(ctx)
		if err == nil && len(tools) != n {
			err = fmt.Errorf("listed %d tools, want %d", len(tools), n)
		}
		return err
	})
}

func callTool(name, args, want string) func(context.Context, *Client) error {
	return afterInit(func(ctx context.Context, c *Client) error {
		res, err := c.CallTool(ctx, name, json.RawMessage(args))
		if err == nil && (len(res.Content) == 0 || res.Content[0].Text != want) {
			err = fmt.Errorf("result %+v", res)
		}
		return err
	})
}

// cancelAfter calls the tool with a ctx cancelled after d.
func cancelAfter(d time.Duration) func(context.Context, *Client) error {
	return afterInit(func(ctx context.Context, c *Client) error {
		ctx, cancel := context.WithCancel(ctx)
		time.AfterFunc(d, cancel)
		_, err := c.CallTool(ctx, "echo", nil)
		return err
	})
}

// TestConn runs the client over a fake server in this process, through
// io.Pipe: no process, the same protocol.
func TestConn(t *testing.T) {
	cases := []struct {
		name string
		args []string
		opts func(*Options)
		run  func(context.Context, *Client) error
		// want says whether err is the expected one; nil wants no error.
		want     func(error) bool
		wantText string
		// closes says the client closes the connection by itself.
		closes bool
		// recorded are patterns the server's record of what it received
		// must each match; unrecorded is one it must not match.
		recorded   []string
		unrecorded string
	}{
		{name: "initialize", run: initialize, recorded: []string{`"method":"notifications/initialized"`}},
		{name: "version refused", args: []string{"-version", "2025-03-26"}, run: initialize,
			want: as[*VersionError], wantText: `"2025-03-26"`, closes: true},
		{name: "error answer to initialize", args: []string{"-behave", "error-init"}, run: initialize,
			want: as[*RPCError], wantText: "server error -32603"},
		{name: "batch", args: []string{"-behave", "batch"}, run: initialize,
			want: as[*ProtocolError], wantText: "JSON array", closes: true},
		{name: "garbage", args: []string{"-behave", "garbage"}, run: initialize,
			want: as[*ProtocolError], wantText: "not JSON-RPC", closes: true},
		{name: "notifications before the answer", args: []string{"-behave", "notify-before-init"}, run: listTools(6)},
		{name: "weird ids", args: []string{"-behave", "weird-ids"}, run: listTools(6)},
		{name: "server requests answered", args: []string{"-behave", "ping-before-init"}, run: listTools(6),
			recorded: []string{`\{"id":"srv-1","jsonrpc":"2.0","result":\{\}\}`, `"code":-32601,"message":"method not found: sampling/createMessage"\},"id":99`, `"id":"srv-2"`}},
		{name: "pagination", args: []string{"-tools", "25", "-page", "7"}, run: listTools(31),
			recorded: []string{`"cursor":"at-28"`}},
		{name: "repeated cursor", args: []string{"-behave", "repeat-cursor"}, run: listTools(0),
			want: as[*ProtocolError], wantText: `repeated the cursor "same"`},
		{name: "endless pages", args: []string{"-behave", "endless"}, opts: func(o *Options) { o.MaxPages = 50 }, run: listTools(0),
			want: as[*ProtocolError], wantText: "within 50 pages"},
		{name: "too many tools", args: []string{"-tools", "30", "-page", "10"}, opts: func(o *Options) { o.MaxTools = 20 }, run: listTools(0),
			want: as[*ProtocolError], wantText: "more than 20 tools"},
		{name: "message too large", args: []string{"-huge", "4096"}, opts: func(o *Options) { o.MaxMessage = 2048 }, run: listTools(0),
			want: as[*ProtocolError], wantText: "larger than 2048 bytes", closes: true},
		{name: "tool call", run: callTool("echo", `{"text":"hi"}`, `echo called with {"text":"hi"}`),
			recorded: []string{`"method":"tools/call","params":\{"arguments":\{"text":"hi"\},"name":"echo"\}`}},
		{name: "failing tool", run: callTool("fail", `{}`, "it failed")},
		{name: "unknown tool", run: callTool("nosuch", `{}`, ""),
			want: func(err error) bool { var re *RPCError; return errors.As(err, &re) && re.Code == CodeInvalidParams }},
		{name: "timeout", args: []string{"-hang-at", "tools/call"}, opts: func(o *Options) { o.Timeout = 300 * time.Millisecond },
			run:  callTool("echo", `{}`, ""),
			want: func(err error) bool { var te *TimeoutError; return errors.As(err, &te) && te.Method == "tools/call" }, closes: true,
			recorded: []string{`"method":"notifications/cancelled","params":\{"reason":"timed out after 300ms","requestId":1\}`}},
		{name: "initialize timeout", args: []string{"-hang-at", "initialize"}, opts: func(o *Options) { o.Timeout = 200 * time.Millisecond },
			run: initialize, want: as[*TimeoutError], closes: true, unrecorded: "cancelled"},
		{name: "line without end", args: []string{"-behave", "no-newline"}, opts: func(o *Options) { o.Timeout = 200 * time.Millisecond },
			run: initialize, want: as[*TimeoutError], closes: true},
		{name: "server not reading", args: []string{"-start-delay", "1m"}, opts: func(o *Options) { o.Timeout = 200 * time.Millisecond },
			run: initialize, want: as[*ProtocolError], wantText: "did not read its input within 200ms", closes: true},
		{name: "cancel", args: []string{"-hang-at", "tools/call"}, run: cancelAfter(100 * time.Millisecond),
			want:     func(err error) bool { return errors.Is(err, context.Canceled) && !as[*TimeoutError](err) },
			wantText: "tools/call: context canceled", closes: true,
			recorded: []string{`"method":"notifications/cancelled","params":\{"reason":"cancelled by the client","requestId":1\}`}},
		{name: "ctx deadline", args: []string{"-hang-at", "tools/call"},
			run: afterInit(func(ctx context.Context, c *Client) error {
				ctx, cancel := context.WithTimeout(ctx, 100*time.Millisecond)
				defer cancel()
				_, err := c.CallTool(ctx, "echo", nil)
				return err
			}),
			want: func(err error) bool { return errors.Is(err, context.DeadlineExceeded) && !as[*TimeoutError](err) }, closes: true,
			recorded: []string{`"method":"notifications/cancelled"`}},
		{name: "ctx ended before the request", run: afterInit(func(ctx context.Context, c *Client) error {
			done, cancel := context.WithCancel(ctx)
			cancel()
			if _, err := c.CallTool(done, "echo", nil); !errors.Is(err, context.Canceled) {
				return fmt.Errorf("call with a cancelled ctx: %v", err)
			}
			_, err := c.CallTool(ctx, "echo", nil) // nothing was sent, nothing ended
			return err
		}), unrecorded: "cancelled"},
		{name: "server ends at initialize", args: []string{"-exit-at", "initialize"}, run: initialize,
			want: as[*ExitError], wantText: "server closed its output (fake-mcp ended with status 3)"},
		{name: "server ends mid-request", args: []string{"-exit-at", "tools/call"}, run: callTool("echo", `{}`, ""),
			want: as[*ExitError], wantText: "status 3"},
		{name: "closed", run: afterInit(func(ctx context.Context, c *Client) error {
			c.Close()
			_, err := c.ListTools(ctx)
			return err
		}), want: func(err error) bool { return errors.Is(err, ErrClosed) && !as[*ProtocolError](err) }, closes: true},
		{name: "closed mid-request", args: []string{"-hang-at", "tools/call"}, run: afterInit(func(ctx context.Context, c *Client) error {
			time.AfterFunc(100*time.Millisecond, func() { c.Close() })
			_, err := c.CallTool(ctx, "echo", nil)
			return err
		}), want: func(err error) bool { return errors.Is(err, ErrClosed) }, closes: true},
		{name: "closed after the server ended", args: []string{"-exit-at", "tools/list"}, run: afterInit(func(ctx context.Context, c *Client) error {
			if _, err := c.ListTools(ctx); !as[*ExitError](err) {
				return fmt.Errorf("list: %v", err)
			}
			c.Close()
			_, err := c.CallTool(ctx, "echo", nil)
			return err
		}), want: func(err error) bool { return errors.Is(err, ErrClosed) }, closes: true},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			rec := t.TempDir() + "/rec"
			conn := pipe(append(tc.args, "-record", rec)...)
			opts := Options{Timeout: 5 * time.Second}
			if tc.opts != nil {
				tc.opts(&opts)
			}
			c := NewClient(conn, opts)
			defer c.Close()
			if c.Pid() != 0 || c.Stderr() != "" {
				t.Errorf("pid %d, stderr %q over a connection", c.Pid(), c.Stderr())
			}
			err := tc.run(context.Background(), c)
			switch {
			case tc.want == nil && err != nil:
				t.Fatalf("err = %v", err)
			case tc.want != nil && (err == nil || !tc.want(err)):
				t.Fatalf("err = %v (%T)", err, err)
			case !strings.Contains(fmt.Sprint(err), tc.wantText):
				t.Fatalf("err = %v, want %q in it", err, tc.wantText)
			}
			if tc.closes {
				select {
				case <-conn.closed:
				case <-time.After(3 * time.Second):
					t.Fatal("the client did not close the connection")
				}
			}
			c.Close()
			data, _ := os.ReadFile(rec)
			for _, re := range tc.recorded {
				if !regexp.MustCompile(re).Match(data) {
					t.Errorf("server did not receive %s; got\n%s", re, data)
				}
			}
			if tc.unrecorded != "" && regexp.MustCompile(tc.unrecorded).Match(data) {
				t.Errorf("server received %s:\n%s", tc.unrecorded, data)
			}
		})
	}
}

func TestConnectConn(t *testing.T) {
	conn := pipe()
	c, err := ConnectConn(context.Background(), conn, Options{})
	if err != nil {
		t.Fatal(err)
	}
	if c.InitializeResult().ServerInfo.Name != "fake-mcp" {
		t.Fatalf("initialize result %+v", c.InitializeResult())
	}
	c.Close()
	if !conn.isClosed() {
		t.Fatal("Close did not close the connection")
	}
	if err := c.Err(); !errors.Is(err, ErrClosed) {
		t.Fatalf("Err() = %v", err)
	}

	conn = pipe("-version", "2024-11-05")
	if _, err := ConnectConn(context.Background(), conn, Options{}); !as[*VersionError](err) {
		t.Fatalf("err = %v", err)
	}
	if !conn.isClosed() {
		t.Fatal("a refused connection was left open")
	}
}

func TestConnConcurrentCalls(t *testing.T) {
	c, err := ConnectConn(context.Background(), pipe("-call-delay", "20ms"), Options{})
	if err != nil {
		t.Fatal(err)
	}
	defer c.Close()
	errs := make(chan error, 20)
	for i := 0; i < 20; i++ {
		go func(i int) {
			res, err := c.CallTool(context.Background(), "echo", json.RawMessage(fmt.Sprintf(`{"n":%d}`, i)))
			if err == nil && res.Content[0].Text != fmt.Sprintf(`echo called with {"n":%d}`, i) {
				err = fmt.Errorf("call %d got %q", i, res.Content[0].Text)
			}
			errs <- err
		}(i)
	}
	for i := 0; i < 20; i++ {
		if err := <-errs; err != nil {
			t.Error(err)
		}
	}
}

// halfPipe is a connection whose two directions the test holds the other
// ends of.
type halfPipe struct {
	*io.PipeReader
	*io.PipeWriter
}

func (h halfPipe) Close() error {
	h.PipeReader.Close()
	return h.PipeWriter.Close()
}

func TestServerRequestsWithoutReading(t *testing.T) {
	fromServer, serverOut := io.Pipe()
	serverIn, toServer := io.Pipe() // nobody reads what the client writes
	defer serverIn.Close()
	c := NewClient(halfPipe{fromServer, toServer}, Options{})
	defer c.Close()
	for i := 0; i <= MaxServerRequests+1; i++ {
		if _, err := fmt.Fprintf(serverOut, `{"jsonrpc":"2.0","id":%d,"method":"ping"}`+"\n", i); err != nil {
			break // the client has given up and closed its end
		}
	}
	select {
	case <-c.done:
	case <-time.After(3 * time.Second):
		t.Fatal("the connection did not end")
	}
	if err := c.Err(); !as[*ProtocolError](err) || !strings.Contains(err.Error(), "without reading the answers") {
		t.Fatalf("Err() = %v", err)
	}
}

func TestCloseStartedClient(t *testing.T) {
	c, err := Start(fake())
	if err != nil {
		t.Fatal(err)
	}
	c.Close()
	if _, err := c.Initialize(context.Background()); !errors.Is(err, ErrClosed) {
		t.Fatalf("err = %v", err)
	}
	assertGone(t, c.Pid())
}

func TestCancelStartedClient(t *testing.T) {
	rec := t.TempDir() + "/rec"
	c := connect(t, fake("-hang-at", "tools/call", "-record", rec))
	ctx, cancel := context.WithCancel(context.Background())
	time.AfterFunc(100*time.Millisecond, cancel)
	_, err := c.CallTool(ctx, "echo", nil)
	if !errors.Is(err, context.Canceled) || as[*TimeoutError](err) {
		t.Fatalf("err = %v", err)
	}
	assertGone(t, c.Pid())
	data, _ := os.ReadFile(rec)
	if !strings.Contains(string(data), `"reason":"cancelled by the client"`) {
		t.Fatalf("no cancellation recorded:\n%s", data)
	}
	if err := c.Err(); !errors.Is(err, context.Canceled) {
		t.Fatalf("Err() = %v", err)
	}
}
