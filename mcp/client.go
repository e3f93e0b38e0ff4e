package mcp

import (
	"bufio"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"os"
	"sync"
	"time"

	"spear/internal/lineread"
)

// Defaults for the zero Options.
const (
	DefaultTimeout    = 10 * time.Second
	DefaultMaxMessage = 32 << 20
	DefaultStderrTail = 4 << 10
	DefaultCloseGrace = time.Second
	DefaultMaxPages   = 1000
	DefaultMaxTools   = 10000
)

// Options says which server to start and how to talk to it. The zero value
// of every field but Command is usable. A client over a connection of the
// caller's (NewClient) starts nothing and uses only Timeout, MaxMessage,
// MaxPages, MaxTools and ClientInfo.
type Options struct {
	// Command is the server's argument list; a bare name is looked up in
	// the PATH the server is given.
	Command []string
	// Env holds the variables the server gets besides PATH and HOME.
	Env map[string]string
	// Dir is the server's working directory; empty means ours.
	Dir string
	// Timeout bounds every request; zero means DefaultTimeout.
	Timeout time.Duration
	// MaxMessage bounds one message from the server, in bytes; zero means
	// DefaultMaxMessage.
	MaxMessage int
	// StderrTail is how many bytes of the server's stderr are kept for
	// diagnostics; zero means DefaultStderrTail.
	StderrTail int
	// Stderr, when set, also receives everything the server writes to its
	// stderr.
	Stderr io.Writer
	// CloseGrace is how long Close waits after closing stdin and again
	// after SIGTERM; zero means DefaultCloseGrace.
	CloseGrace time.Duration
	// MaxPages and MaxTools bound tools/list; zero means the defaults.
	MaxPages, MaxTools int
	// ClientInfo is sent in initialize; zero means spear.
	ClientInfo Implementation
	// Getenv supplies PATH and HOME; nil means os.Getenv.
	Getenv func(string) string
}

func (o *Options) getenv() func(string) string {
	if o.Getenv != nil {
		return o.Getenv
	}
	return os.Getenv
}

func (o *Options) stderrTail() int {
	if o.StderrTail > 0 {
		return o.StderrTail
	}
	return DefaultStderrTail
}

func (o *Options) withDefaults() Options {
	c := *o
	if c.Timeout <= 0 {
		c.Timeout = DefaultTimeout
	}
	if c.MaxMessage <= 0 {
		c.MaxMessage = DefaultMaxMessage
	}
	if c.CloseGrace <= 0 {
		c.CloseGrace = DefaultCloseGrace
	}
	if c.MaxPages <= 0 {
		c.MaxPages = DefaultMaxPages
	}
	if c.MaxTools <= 0 {
		c.MaxTools = DefaultMaxTools
	}
	if c.ClientInfo.Name == "" {
		c.ClientInfo = Implementation{Name: "spear", Version: "0.1.0"}
	}
	return c
}

// MaxServerRequests bounds the answers to the server's own requests that
// wait to be written: a server that keeps asking without reading the
// answers breaks the protocol. The session process's relay keeps the same
// bound.
const MaxServerRequests = 64

// TooManyServerRequests is the error of a server that sent more than
// MaxServerRequests requests without reading the answers.
func TooManyServerRequests() *ProtocolError {
	return &ProtocolError{Msg: fmt.Sprintf("server sent more than %d requests without reading the answers", MaxServerRequests)}
}

// Client is a connection to one server. Its methods are safe for
// concurrent use.
//
// A request that gets no answer within Options.Timeout fails with a
// *TimeoutError. One whose ctx ends first fails with an error that wraps
// ctx.Err(), so that errors.Is(err, context.Canceled) or
// errors.Is(err, context.DeadlineExceeded) holds, and never with a
// *TimeoutError: the ctx and its deadline are the caller's and say nothing
// about the server. Either way the server is sent notifications/cancelled
// (except for initialize), and the connection ends with that error and is
// closed. A ctx that has ended before the request is sent ends nothing.
//
// Once the connection has ended, every request fails: after Close with
// ErrClosed, otherwise with Err, the reason it ended.
//
// Lines the server writes that are not JSON at all, such as a banner, are
// skipped, up to MaxSkippedLines lines or MaxSkippedBytes bytes, after
// which the connection ends with a *ProtocolError; SkippedLines says how
// many there were.
type Client struct {
	opts Options
	conn io.ReadWriteCloser // what the messages go over
	proc *process           // the server behind conn, when Start started it

	queueMu   sync.Mutex
	lastWrite chan struct{} // closed once the last queued write is done
	answers   chan struct{} // one token per answer to the server waiting to be written

	mu      sync.Mutex
	nextID  int64
	pending map[int64]chan *message
	done    chan struct{} // closed when the connection ends
	err     error         // why it ended
	closed  bool          // Close has been called

	closeOnce sync.Once
	readDone  chan struct{}
	init      *InitializeResult
	skipped   SkippedLines // under mu
}

// Start starts the server as a child process and speaks to it over its
// stdin and stdout. It does not initialize it; see Connect.
func Start(opts Options) (*Client, error) {
	o := opts.withDefaults()
	p, err := startProcess(&o)
	if err != nil {
		return nil, err
	}
	c := newClient(p, p, o)
	go c.watchExit()
	return c, nil
}

// Connect starts the server and initializes it. On any error the server has
// been stopped.
func Connect(ctx context.Context, opts Options) (*Client, error) {
	c, err := Start(opts)
	if err != nil {
		return nil, err
	}
	return initialized(ctx, c)
}

// NewClient returns a client that speaks to a server over conn, one
// message per line each way, and owns conn from then on: Close, and any
// error that ends the connection, close it. conn's Close must end a Read or
// Write in progress, as io.Pipe's and net.Conn's do. NewClient does not
// initialize the server; see ConnectConn.
func NewClient(conn io.ReadWriteCloser, opts Options) *Client {
	return newClient(conn, nil, opts.withDefaults())
}

// ConnectConn is NewClient followed by Initialize. On any error conn has
// been closed.
func ConnectConn(ctx context.Context, conn io.ReadWriteCloser, opts Options) (*Client, error) {
	return initialized(ctx, NewClient(conn, opts))
}

func newClient(conn io.ReadWriteCloser, proc *process, opts Options) *Client {
	c := &Client{
		opts: opts, conn: conn, proc: proc,
		lastWrite: make(chan struct{}),
		answers:   make(chan struct{}, MaxServerRequests),
		pending:   map[int64]chan *message{},
		done:      make(chan struct{}),
		readDone:  make(chan struct{}),
	}
	close(c.lastWrite) // nothing to wait for before the first write
	go c.readLoop()
	return c
}

// initialized initializes c, or closes it and returns why it could not.
func initialized(ctx context.Context, c *Client) (*Client, error) {
	if _, err := c.Initialize(ctx); err != nil {
		c.Close()
		return nil, err
	}
	return c, nil
}

// Stderr returns the bounded tail of what the server wrote to its stderr,
// or "" for a client over a connection (NewClient).
func (c *Client) Stderr() string {
	if c.proc == nil {
		return ""
	}
	return c.proc.tail.String()
}

// Pid returns the server's process id, which is also its process group id,
// or 0 for a client over a connection (NewClient).
func (c *Client) Pid() int {
	if c.proc == nil {
		return 0
	}
	return c.proc.pgid
}

// InitializeResult returns the server's answer to initialize, or nil.
func (c *Client) InitializeResult() *InitializeResult {
	c.mu.Lock()
	defer c.mu.Unlock()
	return c.init
}

// SkippedLines says how many lines that are not JSON at all the server
// has written so far, which the client skipped, and the first of them.
func (c *Client) SkippedLines() SkippedLines {
	c.mu.Lock()
	defer c.mu.Unlock()
	return c.skipped.Totals()
}

// fail ends the connection with err, unless it has already ended.
func (c *Client) fail(err error) {
	c.mu.Lock()
	defer c.mu.Unlock()
	if c.err != nil {
		return
	}
	c.err = err
	close(c.done)
}

// Err returns why the connection ended, or nil while it is open.
func (c *Client) Err() error {
	c.mu.Lock()
	defer c.mu.Unlock()
	return c.err
}

// endError says why the server's output ended, given the error that ended
// reading or writing: for a process, how it exited (waiting a moment for
// it); for a connection, how the connection ended.
func (c *Client) endError(err error) error {
	if c.proc != nil {
		c.proc.exitedWithin(500 * time.Millisecond)
		return &ExitError{State: c.proc.state(), Stderr: c.proc.tail.String()}
	}
	if err == nil || errors.Is(err, io.EOF) {
		return &ExitError{State: "connection closed"}
	}
	return &ExitError{State: err.Error()}
}

// watchExit ends the connection when the server exits, once the reader
// has had a moment to take in what it wrote last.
func (c *Client) watchExit() {
	<-c.proc.waited
	select {
	case <-c.readDone:
	case <-time.After(200 * time.Millisecond):
	}
	c.fail(c.endError(nil))
}

func (c *Client) readLoop() {
	defer close(c.readDone)
	r := bufio.NewReaderSize(c.conn, 64<<10)
	for {
		line, err := ReadLine(r, c.opts.MaxMessage)
		var tl *LineTooLongError
		if errors.As(err, &tl) {
			err = &ProtocolError{Msg: fmt.Sprintf("server sent a message larger than %d bytes", tl.Max)}
		}
		if err != nil {
			var pe *ProtocolError
			if errors.As(err, &pe) {
				c.fail(pe)
				c.stop()
				return
			}
			// End of output: say how the server or the connection ended.
			c.fail(c.endError(err))
			return
		}
		if len(trimSpace(line)) == 0 {
			continue
		}
		m, k, err := decodeMessage(line)
		if err != nil {
			// A line that is not JSON at all, such as a banner, is
			// skipped, up to a bound.
			c.mu.Lock()
			skipped, serr := c.skipped.Skip(line)
			c.mu.Unlock()
			if skipped && serr == nil {
				continue
			}
			if serr != nil {
				err = serr
			}
			c.fail(err)
			c.stop()
			return
		}
		c.mu.Lock()
		c.skipped.Message()
		c.mu.Unlock()
		switch k {
		case kindResponse:
			id, ok := m.intID()
			if !ok {
				continue // null, string or unknown ids answer nothing we sent
			}
			c.mu.Lock()
			ch := c.pending[id]
			delete(c.pending, id)
			c.mu.Unlock()
			if ch != nil {
				ch <- m
			}
		case kindRequest:
			c.answerServerRequest(m)
		case kindNotification:
			// Notifications may come at any time; a tools-only client
			// ignores them.
		}
	}
}

// answerServerRequest answers ping with {} and every other request the
// server makes with method-not-found: this client declares no capability.
//
// The answer takes its place in the queue of writes at once, ahead of
// anything written after this message was read, but a goroutine of its own
// writes it, so that reading never waits for writing: over a connection
// without a buffer, such as io.Pipe, a server that writes several requests
// before it reads again would otherwise wait for a reader that waits for it.
func (c *Client) answerServerRequest(m *message) {
	reply := map[string]any{"jsonrpc": "2.0", "id": m.ID}
	if m.Method == "ping" {
		reply["result"] = struct{}{}
	} else {
		reply["error"] = wireError{Code: CodeMethodNotFound, Message: "method not found: " + m.Method}
	}
	data, err := encode(reply)
	if err != nil {
		return
	}
	select {
	case c.answers <- struct{}{}:
	default:
		c.fail(TooManyServerRequests())
		c.stop()
		return
	}
	prev, mine := c.queue()
	go func() {
		defer func() { <-c.answers }()
		c.writeInTurn(prev, mine, data)
	}()
}

// ReadLine reads one newline-terminated line of at most max bytes from r;
// a last line without a newline counts. A longer line is a
// *LineTooLongError. The stdio transport and the session process share it.
func ReadLine(r *bufio.Reader, max int) ([]byte, error) { return lineread.Read(r, max) }

// LineTooLongError is a line longer than the bound ReadLine was given.
type LineTooLongError = lineread.TooLongError

func trimSpace(b []byte) []byte {
	for len(b) > 0 && (b[0] == ' ' || b[0] == '\t' || b[0] == '\r' || b[0] == '\n') {
		b = b[1:]
	}
	for len(b) > 0 && (b[len(b)-1] == ' ' || b[len(b)-1] == '\t' || b[len(b)-1] == '\r' || b[len(b)-1] == '\n') {
		b = b[:len(b)-1]
	}
	return b
}

// notReading is why the connection ends when a write outlasts the timeout.
func (c *Client) notReading() error {
	return &ProtocolError{Msg: fmt.Sprintf("server did not read its input within %s", c.opts.Timeout)}
}

// encode makes v one line of JSON.
func encode(v any) ([]byte, error) {
	data, err := json.Marshal(v)
	if err != nil {
		return nil, fmt.Errorf("encoding message: %w", err)
	}
	return append(data, '\n'), nil
}

// write sends one message as one line, after the writes queued before it.
func (c *Client) write(v any) error {
	data, err := encode(v)
	if err != nil {
		return err
	}
	prev, mine := c.queue()
	return c.writeInTurn(prev, mine, data)
}

// queue takes the next place in the queue of writes: the write waits for
// prev to close, and closes mine when done.
func (c *Client) queue() (prev, mine chan struct{}) {
	c.queueMu.Lock()
	defer c.queueMu.Unlock()
	prev, mine = c.lastWrite, make(chan struct{})
	c.lastWrite = mine
	return prev, mine
}

// writeInTurn writes data once prev is closed, and then closes mine. A
// server that stops reading its input makes the write fail after the
// request timeout instead of hanging: the connection ends with a
// *ProtocolError and is closed, which ends the write.
func (c *Client) writeInTurn(prev, mine chan struct{}, data []byte) error {
	defer close(mine)
	<-prev
	if err := c.Err(); err != nil {
		return err
	}
	timer := time.AfterFunc(c.opts.Timeout, func() {
		c.fail(c.notReading())
		c.stop()
	})
	_, err := c.conn.Write(data)
	if !timer.Stop() {
		c.fail(c.notReading()) // unless the connection had already ended otherwise
		return c.Err()
	}
	if err == nil {
		return nil
	}
	if e := c.Err(); e != nil {
		return e
	}
	return c.endError(err)
}

func (c *Client) notify(method string, params any) error {
	msg := map[string]any{"jsonrpc": "2.0", "method": method}
	if params != nil {
		msg["params"] = params
	}
	return c.write(msg)
}

// call sends a request and waits for its answer, the request's timeout,
// the end of ctx or the end of the connection, whichever comes first; the
// Client's doc says what each of these returns.
func (c *Client) call(ctx context.Context, method string, params any, out any) error {
	c.mu.Lock()
	if c.closed {
		c.mu.Unlock()
		return ErrClosed
	}
	if c.err != nil {
		err := c.err
		c.mu.Unlock()
		return err
	}
	if err := ctx.Err(); err != nil {
		c.mu.Unlock()
		return fmt.Errorf("%s: %w", method, err)
	}
	id := c.nextID
	c.nextID++
	ch := make(chan *message, 1)
	c.pending[id] = ch
	c.mu.Unlock()
	defer func() {
		c.mu.Lock()
		delete(c.pending, id)
		c.mu.Unlock()
	}()

	req := map[string]any{"jsonrpc": "2.0", "id": id, "method": method}
	if params != nil {
		req["params"] = params
	}
	if err := c.write(req); err != nil {
		c.fail(err)
		c.stop()
		return err
	}
	timer := time.NewTimer(c.opts.Timeout)
	defer timer.Stop()

	var m *message
	select {
	case m = <-ch:
	case <-c.done:
		select {
		case m = <-ch: // an answer that came just before the end still counts
		default:
			return c.Err()
		}
	case <-timer.C:
		err := &TimeoutError{Method: method, After: c.opts.Timeout}
		c.abandon(id, method, fmt.Sprintf("timed out after %s", c.opts.Timeout), err)
		return err
	case <-ctx.Done():
		err := fmt.Errorf("%s: %w", method, ctx.Err())
		c.abandon(id, method, "cancelled by the client", err)
		return err
	}
	if m.Error != nil {
		return &RPCError{Method: method, Code: m.Error.Code, Message: m.Error.Message}
	}
	if len(m.Result) == 0 {
		return &ProtocolError{Msg: fmt.Sprintf("the answer to %s has neither result nor error", method)}
	}
	if err := json.Unmarshal(m.Result, out); err != nil {
		return &ProtocolError{Msg: fmt.Sprintf("the answer to %s does not decode: %v", method, err)}
	}
	return nil
}

// abandon gives up on a request: it tells the server (initialize is never
// cancelled), ends the connection with err and closes it.
func (c *Client) abandon(id int64, method, reason string, err error) {
	if method != "initialize" {
		c.notify("notifications/cancelled", map[string]any{"requestId": id, "reason": reason})
	}
	c.fail(err)
	c.stop()
}

// Initialize performs the initialize handshake and sends
// notifications/initialized. A server that answers any protocol version but
// ProtocolVersion is stopped and a *VersionError returned.
func (c *Client) Initialize(ctx context.Context) (*InitializeResult, error) {
	params := map[string]any{
		"protocolVersion": ProtocolVersion,
		"capabilities":    struct{}{},
		"clientInfo":      c.opts.ClientInfo,
	}
	var res InitializeResult
	if err := c.call(ctx, "initialize", params, &res); err != nil {
		return nil, err
	}
	if res.ProtocolVersion != ProtocolVersion {
		err := &VersionError{Got: res.ProtocolVersion}
		c.fail(err)
		c.stop()
		return nil, err
	}
	if err := c.notify("notifications/initialized", nil); err != nil {
		return nil, err
	}
	c.mu.Lock()
	c.init = &res
	c.mu.Unlock()
	return &res, nil
}

// ListTools lists every tool, following nextCursor until it is absent. A
// cursor that repeats, more than MaxPages pages, more than MaxTools tools,
// two tools of one name, or a tool without a name or an object inputSchema
// is a *ProtocolError.
func (c *Client) ListTools(ctx context.Context) ([]Tool, error) {
	var tools []Tool
	names := map[string]bool{}
	cursors := map[string]bool{}
	cursor := ""
	for page := 0; ; page++ {
		if page >= c.opts.MaxPages {
			return nil, &ProtocolError{Msg: fmt.Sprintf("tools/list did not end within %d pages", c.opts.MaxPages)}
		}
		params := map[string]any{}
		if page > 0 {
			params["cursor"] = cursor
		}
		var res struct {
			Tools      []json.RawMessage `json:"tools"`
			NextCursor *string           `json:"nextCursor"`
		}
		if err := c.call(ctx, "tools/list", params, &res); err != nil {
			return nil, err
		}
		if len(tools)+len(res.Tools) > c.opts.MaxTools {
			return nil, &ProtocolError{Msg: fmt.Sprintf("tools/list returned more than %d tools", c.opts.MaxTools)}
		}
		for i, raw := range res.Tools {
			t, err := decodeTool(raw)
			if err != nil {
				return nil, &ProtocolError{Msg: fmt.Sprintf("tools/list page %d, tool %d: %v", page+1, i+1, err)}
			}
			if names[t.Name] {
				return nil, &ProtocolError{Msg: fmt.Sprintf("tools/list returned the tool %q twice", t.Name)}
			}
			names[t.Name] = true
			tools = append(tools, t)
		}
		if res.NextCursor == nil || *res.NextCursor == "" {
			return tools, nil
		}
		cursor = *res.NextCursor
		if cursors[cursor] {
			return nil, &ProtocolError{Msg: fmt.Sprintf("tools/list repeated the cursor %q", cursor)}
		}
		cursors[cursor] = true
	}
}

func decodeTool(raw json.RawMessage) (Tool, error) {
	var t Tool
	if err := json.Unmarshal(raw, &t); err != nil {
		return t, fmt.Errorf("does not decode: %v", err)
	}
	if t.Name == "" {
		return t, errors.New("has no name")
	}
	s := trimSpace(t.InputSchema)
	if len(s) == 0 || s[0] != '{' {
		return t, fmt.Errorf("%q has no inputSchema object", t.Name)
	}
	if s := trimSpace(t.OutputSchema); len(s) > 0 && string(s) != "null" && s[0] != '{' {
		return t, fmt.Errorf("%q has an outputSchema that is not an object", t.Name)
	}
	return t, nil
}

// CallTool calls the tool name with args, a JSON object (nil sends none).
// A tool that fails answers a result with IsError set, not an error.
func (c *Client) CallTool(ctx context.Context, name string, args json.RawMessage) (*CallToolResult, error) {
	params := map[string]any{"name": name}
	if len(args) > 0 {
		params["arguments"] = args
	}
	var res CallToolResult
	if err := c.call(ctx, "tools/call", params, &res); err != nil {
		return nil, err
	}
	return &res, nil
}

// Close ends the connection: it stops a started server and every process
// it started, and reaps it, or closes the connection given to
// NewClient. Requests in progress and later ones fail with ErrClosed.
// Close is safe to call more than once, never blocks for long and returns
// nil.
func (c *Client) Close() error {
	c.mu.Lock()
	c.closed = true
	c.mu.Unlock()
	c.fail(ErrClosed)
	c.stop()
	return nil
}

// stop closes the connection, once.
func (c *Client) stop() {
	c.closeOnce.Do(func() { c.conn.Close() })
}
