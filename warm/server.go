package warm

import (
	"bufio"
	"encoding/json"
	"errors"
	"fmt"
	"net"
	"sync"
	"time"

	"spear/audit"
	"spear/internal/version"
	"spear/mcp"
)

// server is one provider's server as a host runs it: the process, the
// callers attached to it, and the requests they have in flight under the
// host's own ids.
type server struct {
	h        *Host
	provider string
	entry    Entry
	hash     string
	timeout  time.Duration

	ready   chan struct{} // closed once initialized, or once it could not be
	spawned chan struct{} // closed once the spawn has returned, started or not
	fail    *Failure      // why it could not be, once ready is closed
	proc    *mcp.Process
	pid     int
	init    json.RawMessage // its answer to initialize
	start   time.Time

	mu       sync.Mutex
	nextID   int64
	routes   map[int64]*route
	callers  map[*caller]bool
	calls    int
	last     time.Time // the last message either way, or the last caller leaving
	turn     string    // the turn that last opened it
	retired  string    // why it is to stop once its callers are done
	stopping bool
	stray    int   // answers under ids no request has
	broke    error // why it failed, when it did
	gone     chan struct{}
	skipped  mcp.SkippedLines // lines of its stdout that are not JSON at all
	started  int              // skipped.Lines when provider_started was recorded
	announce bool             // provider_started is recorded, so provider_stopped will be

	wmu     sync.Mutex    // one write at a time to the server's stdin
	answers chan struct{} // a token for each answer to its own requests not yet written
}

// route is a request in flight: whose it is and the id it came with. The
// host's own requests (initialize) have a channel instead of a caller.
type route struct {
	c   *caller
	id  json.RawMessage
	own chan *rpc
}

func newServer(h *Host, provider string, e Entry, turn string) *server {
	return &server{
		h: h, provider: provider, entry: e, hash: e.Hash(), timeout: e.timeout(),
		ready: make(chan struct{}), spawned: make(chan struct{}),
		routes: map[int64]*route{}, callers: map[*caller]bool{},
		answers: make(chan struct{}, mcp.MaxServerRequests),
		turn:    turn, gone: make(chan struct{}), nextID: 1, last: h.now(),
	}
}

func (s *server) lifetime() string { return s.entry.Lifetime }

// run starts and initializes the server, then closes ready. On failure
// the server is stopped and fail says why. A server stopped while it was
// being spawned is stopped as soon as the spawn returns (stop waits for
// it), and never initialized.
func (s *server) run() {
	defer close(s.ready)
	e := s.entry
	proc, err := s.spawn(e)
	if err != nil {
		s.fail = failureOf(err)
		return
	}
	if proc == nil {
		s.fail = &Failure{Kind: KindClosing, Message: "the server of " + s.provider + " was stopped while it started"}
		return
	}
	go s.readLoop()
	go s.watchExit()
	res, err := s.initialize()
	if err != nil {
		s.fail = failureOf(err)
		s.stop("", "")
		return
	}
	s.init = res
	f := audit.Fields{"provider": s.provider, "pid": s.pid, "lifetime": s.lifetime()}
	s.mu.Lock()
	SkippedFields(f, s.skipped)
	s.started = s.skipped.Lines
	s.announce = true
	s.mu.Unlock()
	s.h.record(s.turn, audit.ProviderStarted, f)
}

// spawn starts the server's process and closes spawned. It returns nil,
// nil when the server was stopped meanwhile: stop, waiting on spawned,
// then stops what was spawned.
func (s *server) spawn(e Entry) (*mcp.Process, error) {
	defer close(s.spawned)
	proc, err := s.h.spawn(mcp.Options{
		Command: e.Command, Env: e.Env, Dir: e.Dir,
		Getenv: func(k string) string {
			switch k {
			case "PATH":
				return e.Path
			case "HOME":
				return e.Home
			}
			return ""
		},
	})
	if err != nil {
		return nil, err
	}
	s.mu.Lock()
	defer s.mu.Unlock()
	s.proc, s.pid, s.start = proc, proc.Pid(), s.h.now()
	s.last = s.start
	if s.stopping {
		return nil, nil
	}
	return proc, nil
}

// initialize sends the host's own initialize and notifications/initialized.
func (s *server) initialize() (json.RawMessage, error) {
	ch := make(chan *rpc, 1)
	s.mu.Lock()
	s.routes[0] = &route{own: ch}
	s.mu.Unlock()
	req := map[string]any{"jsonrpc": "2.0", "id": 0, "method": "initialize", "params": map[string]any{
		"protocolVersion": mcp.ProtocolVersion,
		"capabilities":    struct{}{},
		"clientInfo":      mcp.Implementation{Name: "spear", Version: version.String()},
	}}
	data, _ := json.Marshal(req)
	if err := s.write(append(data, '\n')); err != nil {
		return nil, err
	}
	t := time.NewTimer(s.timeout)
	defer t.Stop()
	var m *rpc
	select {
	case m = <-ch:
	case <-s.gone:
		s.mu.Lock()
		defer s.mu.Unlock()
		if s.broke != nil {
			return nil, s.broke
		}
		return nil, &mcp.ExitError{State: s.proc.State()}
	case <-t.C:
		return nil, &mcp.TimeoutError{Method: "initialize", After: s.timeout}
	}
	if e := m.members["error"]; len(e) > 0 && string(e) != "null" {
		var we struct {
			Code    int    `json:"code"`
			Message string `json:"message"`
		}
		json.Unmarshal(e, &we)
		return nil, &mcp.RPCError{Method: "initialize", Code: we.Code, Message: we.Message}
	}
	res := m.members["result"]
	if len(res) == 0 || res[0] != '{' {
		return nil, &mcp.ProtocolError{Msg: "the answer to initialize has no result object"}
	}
	if err := s.write([]byte(`{"jsonrpc":"2.0","method":"notifications/initialized"}` + "\n")); err != nil {
		return nil, err
	}
	return res, nil
}

// write sends one line to the server. A server that does not read it
// within its timeout has failed, and is stopped; that ends the write.
func (s *server) write(line []byte) error {
	s.wmu.Lock()
	defer s.wmu.Unlock()
	t := time.AfterFunc(s.timeout, func() {
		s.failed(&mcp.ProtocolError{Msg: fmt.Sprintf("server did not read its input within %s", s.timeout)})
	})
	_, err := s.proc.Write(line)
	if !t.Stop() {
		return &mcp.ProtocolError{Msg: fmt.Sprintf("server did not read its input within %s", s.timeout)}
	}
	if err != nil {
		return &mcp.ExitError{State: "its input closed: " + err.Error()}
	}
	return nil
}

// readLoop relays what the server writes: an answer goes to the caller
// whose request it answers, under the caller's own id; the server's own
// requests are answered here (ping with {}, the rest with method not
// found: no capability was declared); notifications are dropped. An answer
// under an id no request has in flight reaches no one. A line that is not
// JSON at all is skipped and counted (mcp.SkippedLines), up to its bound.
func (s *server) readLoop() {
	r := bufio.NewReaderSize(s.proc, 64<<10)
	for {
		line, err := mcp.ReadLine(r, maxMessage)
		if err != nil {
			var tl *mcp.LineTooLongError
			if errors.As(err, &tl) {
				s.failed(&mcp.ProtocolError{Msg: fmt.Sprintf("server sent a message larger than %d bytes", maxMessage)})
			} else {
				s.failed(nil) // its output ended: say how it exited
			}
			return
		}
		if len(trim(line)) == 0 {
			continue
		}
		m, err := parseRPC(line)
		if err != nil {
			// A line that is not JSON at all, such as a banner, is
			// skipped as a client of the server's own skips it, up to
			// the same bound.
			s.mu.Lock()
			skipped, serr := s.skipped.Skip(line)
			s.mu.Unlock()
			if skipped && serr == nil {
				continue
			}
			// Said as a client of the server's own would say it.
			perr := serr
			if perr == nil {
				perr = mcp.CheckMessage(line)
			}
			if perr == nil {
				perr = &mcp.ProtocolError{Msg: "server wrote a message the relay cannot route: " + err.Error()}
			}
			s.failed(perr)
			return
		}
		s.mu.Lock()
		s.skipped.Message()
		s.mu.Unlock()
		switch m.kind {
		case kindRequest:
			answer := response(m.id, json.RawMessage(`{}`), 0, "")
			if m.method != "ping" {
				answer = response(m.id, nil, mcp.CodeMethodNotFound, "method not found: "+m.method)
			}
			// Each answer is written by a goroutine of its own, so that
			// reading never waits for writing; a server that asks more
			// than a client would let it without reading the answers
			// has broken the protocol, as it has for a client.
			select {
			case s.answers <- struct{}{}:
			default:
				s.failed(mcp.TooManyServerRequests())
				return
			}
			go func() {
				defer func() { <-s.answers }()
				s.write(answer)
			}()
		case kindNotification:
		case kindResponse:
			s.deliver(m)
		}
	}
}

// deliver hands an answer to whoever asked.
func (s *server) deliver(m *rpc) {
	id, ok := m.intID()
	s.mu.Lock()
	rt := s.routes[id]
	if !ok || rt == nil {
		s.stray++
		s.mu.Unlock()
		return
	}
	delete(s.routes, id)
	if rt.c != nil {
		delete(rt.c.ids, idKey(rt.id))
	}
	s.last = s.h.now()
	s.mu.Unlock()
	if rt.own != nil {
		rt.own <- m
		return
	}
	rt.c.send(m.withID(rt.id))
}

// watchExit notices a server that exits while its output stays open
// (a child of its own holds it).
func (s *server) watchExit() {
	select {
	case <-s.proc.Exited():
		s.failed(nil)
	case <-s.gone:
	}
}

// failed stops a server that exited (err nil) or broke down (err says how)
// without being asked to: it is unavailable to the turn that last opened
// it, for the rest of that turn.
func (s *server) failed(err error) {
	if err == nil {
		select {
		case <-s.proc.Exited():
		case <-time.After(200 * time.Millisecond):
		}
		err = &mcp.ExitError{State: s.proc.State()}
	}
	s.mu.Lock()
	if s.stopping {
		s.mu.Unlock()
		return
	}
	if s.broke == nil {
		s.broke = err
	}
	turn := s.turn
	s.mu.Unlock()
	why := err.Error()
	select {
	case <-s.ready:
		s.h.markFailed(s.provider, turn, why)
		s.stop(WhyFailed, why)
	default:
		// Still starting: the open that started it says why, and a
		// server that never started is not recorded as stopped.
		s.stop("", "")
	}
}

// stop stops the server, closes its callers' connections and records why,
// once; a second call waits for the first. An empty why records nothing,
// and neither does a server whose start was never recorded: one stopped
// before its process ran or before it answered initialize.
func (s *server) stop(why, detail string) {
	s.mu.Lock()
	if s.stopping {
		s.mu.Unlock()
		<-s.gone
		return
	}
	s.stopping = true
	callers := make([]*caller, 0, len(s.callers))
	for c := range s.callers {
		callers = append(callers, c)
	}
	s.mu.Unlock()
	s.h.forget(s)
	// A server still being spawned is stopped once the spawn returns, so
	// that nothing spawned is left running. The spawn is bounded: it
	// starts a process and returns.
	<-s.spawned
	s.mu.Lock()
	turn, proc, pid, announced := s.turn, s.proc, s.pid, s.announce
	skipped, started := s.skipped, s.started
	s.mu.Unlock()
	for _, c := range callers {
		c.conn.Close()
	}
	if proc != nil {
		proc.Close()
	}
	if why != "" && announced {
		f := audit.Fields{"provider": s.provider, "pid": pid, "lifetime": s.lifetime(), "why": why}
		if detail != "" {
			f["detail"] = detail
		}
		if skipped.Lines > started {
			SkippedFields(f, skipped)
		}
		s.h.record(turn, audit.ProviderStopped, f)
	}
	s.h.gone(s)
	close(s.gone)
}

// retire takes the server out of service: it stops once its callers are
// done, or after its timeout and a second, whichever comes first.
func (s *server) retire(why string) {
	s.mu.Lock()
	if s.retired != "" || s.stopping {
		s.mu.Unlock()
		return
	}
	s.retired = why
	idle := len(s.callers) == 0
	s.mu.Unlock()
	if idle {
		go s.stop(why, "")
		return
	}
	go func() {
		select {
		case <-s.gone:
		case <-time.After(s.timeout + time.Second):
			s.stop(why, "")
		}
	}()
}

// attach adds a caller, unless the server is stopping or retired.
func (s *server) attach(conn net.Conn, turn string) *caller {
	s.mu.Lock()
	defer s.mu.Unlock()
	if s.stopping || s.retired != "" {
		return nil
	}
	c := &caller{s: s, conn: conn, ids: map[string]int64{}}
	s.callers[c] = true
	s.turn = turn
	s.last = s.h.now()
	return c
}

// detach removes a caller whose connection ended; its requests in flight
// are abandoned, and their answers will reach no one. A call server stops
// with its caller.
func (s *server) detach(c *caller) {
	s.mu.Lock()
	delete(s.callers, c)
	abandoned := 0
	for id, rt := range s.routes {
		if rt.c == c {
			delete(s.routes, id)
			abandoned++
		}
	}
	s.last = s.h.now()
	left, retired := len(s.callers), s.retired
	s.mu.Unlock()
	switch {
	case s.lifetime() == LifetimeCall && abandoned > 0:
		go s.stop(WhyFailed, fmt.Sprintf("its caller left before it answered (%d requests)", abandoned))
	case s.lifetime() == LifetimeCall:
		go s.stop(WhyCallDone, "")
	case retired != "" && left == 0:
		go s.stop(retired, "")
	}
}

// pidNow returns the server's pid, or 0 before it has started.
func (s *server) pidNow() int {
	s.mu.Lock()
	defer s.mu.Unlock()
	return s.pid
}

// drained waits until the server has no caller, or for d.
func (s *server) drained(d time.Duration) {
	for deadline := time.Now().Add(d); time.Now().Before(deadline); time.Sleep(5 * time.Millisecond) {
		s.mu.Lock()
		n := len(s.callers)
		s.mu.Unlock()
		if n == 0 {
			return
		}
	}
}

// idleFor says how long the server has gone without a message, and
// whether it is busy: still starting, or with requests in flight. A
// server exists for the idle check only once it is running.
func (s *server) idleFor(now time.Time) (time.Duration, bool) {
	select {
	case <-s.ready:
	default:
		return 0, true
	}
	s.mu.Lock()
	defer s.mu.Unlock()
	return now.Sub(s.last), len(s.routes) > 0
}

func (s *server) status(now time.Time) ServerStatus {
	s.mu.Lock()
	defer s.mu.Unlock()
	return ServerStatus{
		Provider: s.provider, Pid: s.pid, Lifetime: s.lifetime(), Started: s.start.UTC(),
		Calls: s.calls, Idle: now.Sub(s.last).Round(time.Millisecond).Seconds(), Turn: s.turn,
	}
}

// caller is one client connection attached to a server.
type caller struct {
	s    *server
	conn net.Conn
	ids  map[string]int64 // the caller's ids in flight → the host's, under s.mu
	wmu  sync.Mutex
}

// send writes one line to the caller; a caller that does not read it
// within the server's timeout is cut off.
func (c *caller) send(line []byte) {
	c.wmu.Lock()
	defer c.wmu.Unlock()
	c.conn.SetWriteDeadline(time.Now().Add(c.s.timeout))
	if _, err := c.conn.Write(line); err != nil {
		c.conn.Close()
	}
}

// relay passes the caller's messages to the server until the connection
// ends. initialize is answered from the server's own answer to the host's
// initialize, and notifications/initialized goes no further: the server
// was initialized once, by the host. Every request goes on under an id of
// the host's, and a notifications/cancelled names the host's id too.
func (c *caller) relay(r *bufio.Reader) {
	s := c.s
	for {
		line, err := mcp.ReadLine(r, maxMessage)
		if err != nil {
			return
		}
		if len(trim(line)) == 0 {
			continue
		}
		m, err := parseRPC(line)
		if err != nil {
			return
		}
		switch {
		case m.kind == kindRequest && m.method == "initialize":
			c.send(response(m.id, s.init, 0, ""))
		case m.kind == kindRequest:
			s.mu.Lock()
			if _, dup := c.ids[idKey(m.id)]; dup {
				s.mu.Unlock()
				c.send(response(m.id, nil, mcp.CodeInvalidRequest, "an id already in flight"))
				continue
			}
			hid := s.nextID
			s.nextID++
			s.routes[hid] = &route{c: c, id: m.id}
			c.ids[idKey(m.id)] = hid
			if m.method == "tools/call" {
				s.calls++
			}
			s.last = s.h.now()
			s.mu.Unlock()
			if s.write(m.withID(json.RawMessage(fmt.Sprint(hid)))) != nil {
				return
			}
		case m.kind == kindNotification && m.method == "notifications/initialized":
		case m.kind == kindNotification && m.method == "notifications/cancelled":
			id, ok := m.cancelledID()
			if !ok {
				continue
			}
			s.mu.Lock()
			hid, known := c.ids[idKey(id)]
			s.mu.Unlock()
			if known && s.write(m.withCancelledID(json.RawMessage(fmt.Sprint(hid)))) != nil {
				return
			}
		case m.kind == kindNotification:
			if s.write(m.line()) != nil {
				return
			}
		}
		// Answers from the caller answer nothing: the host answers the
		// server's own requests.
	}
}

func trim(b []byte) []byte {
	for len(b) > 0 && (b[0] == ' ' || b[0] == '\t' || b[0] == '\r' || b[0] == '\n') {
		b = b[1:]
	}
	for len(b) > 0 && (b[len(b)-1] == ' ' || b[len(b)-1] == '\t' || b[len(b)-1] == '\r' || b[len(b)-1] == '\n') {
		b = b[:len(b)-1]
	}
	return b
}

// SkippedFields adds to f, the fields of a provider_started or
// provider_stopped, what the server wrote on its stdout that is not JSON at
// all, when it wrote any (docs/audit.md): skipped_lines, skipped_bytes and
// skipped_first.
func SkippedFields(f audit.Fields, s mcp.SkippedLines) {
	if s.Lines == 0 {
		return
	}
	f["skipped_lines"] = s.Lines
	f["skipped_bytes"] = s.Bytes
	f["skipped_first"] = s.First
}
