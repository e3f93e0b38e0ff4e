package warm

import (
	"bufio"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"net"
	"os"
	"runtime/debug"
	"sort"
	"sync"
	"syscall"
	"time"

	"spear/audit"
	"spear/internal/hostwire"
	"spear/mcp"
)

// Defaults for a Host's zero fields.
const (
	DefaultLinger = 5 * time.Second
)

// Host is a session's host: it starts providers' servers, relays the
// messages of the clients that open them, and stops them. It holds no
// policy of its own: what a turn may call is decided by a gateway, on the
// other end of a connection or, for an answer, the one Answer runs. Its
// zero value is not usable: set Session and Idle.
type Host struct {
	// Session is the session the host serves, for the audit trail.
	Session string
	// AuditFile is where the host records the servers it starts and
	// stops; empty records nothing.
	AuditFile string
	// Idle is how long a session server may go without a message
	// before it is stopped.
	Idle time.Duration
	// Linger is how long the host stays with no server and no
	// connection before Serve returns; zero means DefaultLinger.
	Linger time.Duration
	// Now is the clock; nil means time.Now.
	Now func() time.Time
	// Spawn starts a server; nil means mcp.StartProcess.
	Spawn func(mcp.Options) (*mcp.Process, error)
	// Peer checks each connection's other end; nil means SamePeer.
	Peer func(*net.UnixConn) error
	// Answer answers invocations (hostwire.OpAnswer); nil means the host
	// answers none, and its clients answer them themselves.
	Answer Answerer
	// Reachable, when set, is asked at each of the janitor's ticks whether
	// clients can still reach the host; once it says no (its socket or
	// the session's directory was removed), the host shuts down with
	// WhyStateRemoved.
	Reachable func() bool
	// Log is where the host writes what it recovered from (a panic in
	// Answer, with its stack); empty writes it nowhere, but it is still
	// counted in Status.
	Log string
	// OnClose runs once the host takes no more connections (its socket
	// removed, its listener closed), before its servers are stopped:
	// HostMain releases the session's lock there, so that a new host
	// may start while this one stops its servers.
	OnClose func()

	mu       sync.Mutex
	servers  map[string]*server // session servers, by provider
	calls    map[*server]bool   // call servers
	stopping map[*server]bool   // servers forgotten but not yet gone
	failedIn map[string]failure // provider → the turn in which its server failed, and why
	conns    int
	answered int
	panics   int
	busy     time.Time // when the host last had a connection or a server
	closing  bool
	ln       *net.UnixListener
	done     chan struct{}
	ready    sync.Once // setup
	once     sync.Once // closing done
	wg       sync.WaitGroup
}

// setup makes the host's tables, once, whichever of Serve and Shutdown
// comes first.
func (h *Host) setup() {
	h.ready.Do(func() {
		h.mu.Lock()
		defer h.mu.Unlock()
		h.servers, h.calls, h.stopping, h.failedIn = map[string]*server{}, map[*server]bool{}, map[*server]bool{}, map[string]failure{}
		h.done = make(chan struct{})
	})
}

func (h *Host) now() time.Time {
	if h.Now != nil {
		return h.Now()
	}
	return time.Now()
}

func (h *Host) spawn(o mcp.Options) (*mcp.Process, error) {
	if h.Spawn != nil {
		return h.Spawn(o)
	}
	return mcp.StartProcess(o)
}

// record appends an event to the audit trail, for the turn given.
func (h *Host) record(turn, event string, f audit.Fields) {
	if h.AuditFile == "" {
		return
	}
	l, err := audit.Open(h.AuditFile, h.Session, turn, h.Now)
	if err != nil {
		return
	}
	defer l.Close()
	l.Record(event, f)
}

// Serve accepts connections on ln until the host shuts down or has had
// no server and no connection for Linger. It stops every server before it
// returns, and removes ln's socket file.
func (h *Host) Serve(ln *net.UnixListener) error {
	ln.SetUnlinkOnClose(false) // closeListener unlinks first, then closes
	h.setup()
	h.mu.Lock()
	h.ln, h.busy = ln, h.now()
	closing := h.closing
	h.mu.Unlock()
	if closing { // shut down before it began
		os.Remove(ln.Addr().String())
		ln.Close()
		return nil
	}
	go h.janitor()
	for {
		conn, err := ln.AcceptUnix()
		if err != nil {
			if errors.Is(err, net.ErrClosed) {
				break
			}
			time.Sleep(10 * time.Millisecond) // EMFILE and the like: wait, then go on
			continue
		}
		h.mu.Lock()
		if h.closing {
			h.mu.Unlock()
			conn.Close()
			continue
		}
		h.conns++
		h.wg.Add(1)
		h.mu.Unlock()
		go func() {
			defer h.wg.Done()
			h.handle(conn)
			conn.Close()
			h.mu.Lock()
			h.conns--
			h.busy = h.now()
			h.mu.Unlock()
		}()
	}
	<-h.done
	h.wg.Wait()
	return nil
}

// closeListener takes no more connections: the socket file goes first, so
// that a client that finds none starts a new host rather than reaching
// this one, then the listener.
func (h *Host) closeListener() {
	h.mu.Lock()
	if h.closing {
		h.mu.Unlock()
		return
	}
	h.closing = true
	ln := h.ln
	h.mu.Unlock()
	if ln == nil { // Serve has not begun: it returns at once
		if h.OnClose != nil {
			h.OnClose()
		}
		return
	}
	// A socket that is no longer this host's (its directory removed and
	// made anew, another host's socket there) is left alone.
	ln.SetUnlinkOnClose(false)
	if addr, ok := ln.Addr().(*net.UnixAddr); ok && addr.Name != "" && (h.Reachable == nil || h.Reachable()) {
		os.Remove(addr.Name)
	}
	ln.Close()
	if h.OnClose != nil {
		h.OnClose()
	}
}

// Shutdown stops the host: no more connections, every server stopped
// (recorded with why), then Serve returns. It returns what was stopped.
func (h *Host) Shutdown(why string) []ServerStatus {
	h.setup()
	h.closeListener()
	all := h.allServers()
	now := h.now()
	stopped := []ServerStatus{}
	var wg sync.WaitGroup
	for _, s := range all {
		select {
		case <-s.ready:
			if s.fail == nil {
				stopped = append(stopped, s.status(now))
			}
		case <-time.After(s.timeout + time.Second):
		}
		wg.Add(1)
		go func(s *server) {
			defer wg.Done()
			s.stop(why, "")
		}(s)
	}
	wg.Wait()
	h.waitStopping()
	h.once.Do(func() { close(h.done) })
	return stopped
}

// waitStopping waits for every server already stopping (one that idled
// out, say) to be gone and recorded, so that the host never exits in the
// middle of a stop.
func (h *Host) waitStopping() {
	for {
		h.mu.Lock()
		var s *server
		for s = range h.stopping {
			break
		}
		h.mu.Unlock()
		if s == nil {
			return
		}
		<-s.gone
	}
}

// janitor stops servers that have idled out, and the host once it has
// had nothing to do for Linger.
func (h *Host) janitor() {
	linger := h.Linger
	if linger <= 0 {
		linger = DefaultLinger
	}
	tick := min(max(min(h.Idle, linger)/4, 20*time.Millisecond), time.Second)
	t := time.NewTicker(tick)
	defer t.Stop()
	for {
		select {
		case <-h.done:
			return
		case <-t.C:
		}
		now := h.now()
		h.mu.Lock()
		var idle []*server
		for _, s := range h.servers {
			if d, inFlight := s.idleFor(now); !inFlight && d >= h.Idle {
				idle = append(idle, s)
			}
		}
		if len(h.servers)+len(h.calls)+len(h.stopping)+h.conns > 0 {
			h.busy = now
		}
		quiet := now.Sub(h.busy) >= linger && !h.closing
		closing := h.closing
		h.mu.Unlock()
		if h.Reachable != nil && !closing && !h.Reachable() {
			go h.Shutdown(WhyStateRemoved)
			continue
		}
		for _, s := range idle {
			go s.stop(WhyIdle, "")
		}
		if quiet {
			go h.Shutdown(WhyIdle)
		}
	}
}

// forget takes a stopping server out of the host's tables; the host
// counts it as stopping until gone is called.
func (h *Host) forget(s *server) {
	h.mu.Lock()
	defer h.mu.Unlock()
	h.dropLocked(s)
	h.stopping[s] = true
}

// drop takes a server that never started out of the host's tables.
func (h *Host) drop(s *server) {
	h.mu.Lock()
	defer h.mu.Unlock()
	h.dropLocked(s)
}

func (h *Host) dropLocked(s *server) {
	if h.servers[s.provider] == s {
		delete(h.servers, s.provider)
	}
	delete(h.calls, s)
	h.busy = h.now()
}

// gone says a stopping server has stopped and its stop is recorded.
func (h *Host) gone(s *server) {
	h.mu.Lock()
	defer h.mu.Unlock()
	delete(h.stopping, s)
	h.busy = h.now()
}

// failure is a provider's server that failed: in which turn, and why.
type failure struct{ turn, why string }

// markFailed keeps a provider whose server failed out of the rest of turn.
func (h *Host) markFailed(provider, turn, why string) {
	h.mu.Lock()
	defer h.mu.Unlock()
	h.failedIn[provider] = failure{turn, why}
}

// reply writes one Reply line.
func reply(conn net.Conn, r Reply) error {
	conn.SetWriteDeadline(time.Now().Add(5 * time.Second))
	_, err := conn.Write(encodeLine(r))
	conn.SetWriteDeadline(time.Time{})
	return err
}

func failReply(conn net.Conn, kind, format string, args ...any) {
	reply(conn, Reply{Error: &Failure{Kind: kind, Message: fmt.Sprintf(format, args...)}})
}

// handle serves one connection: its Request, then, for an open, the relay.
func (h *Host) handle(conn *net.UnixConn) {
	check := h.Peer
	if check == nil {
		check = SamePeer
	}
	if err := check(conn); err != nil {
		failReply(conn, KindRefused, "%v", err)
		return
	}
	conn.SetReadDeadline(time.Now().Add(5 * time.Second))
	r := bufio.NewReaderSize(conn, 64<<10)
	line, err := mcp.ReadLine(r, maxHeader)
	if err != nil {
		return
	}
	req, err := DecodeRequest(line)
	if err != nil {
		var ve *versionError
		if errors.As(err, &ve) {
			failReply(conn, KindVersion, "%v", err)
		} else {
			failReply(conn, KindBad, "%v", err)
		}
		return
	}
	conn.SetReadDeadline(time.Time{})
	switch req.Op {
	case OpOpen:
		h.open(conn, r, req)
	case OpStop:
		h.stopFailed(req)
		reply(conn, Reply{OK: true})
	case OpStatus:
		reply(conn, Reply{OK: true, Status: h.status(req.Turn)})
	case OpAnswer:
		h.answer(conn, r, req)
	case OpShutdown:
		stopped := h.Shutdown(WhySessionStopped)
		reply(conn, Reply{OK: true, Status: &Status{Session: h.Session, Pid: os.Getpid(), Servers: stopped}})
	}
}

// allServers returns every server the host holds: session servers and
// call servers alike.
func (h *Host) allServers() []*server {
	h.mu.Lock()
	defer h.mu.Unlock()
	var all []*server
	for _, s := range h.servers {
		all = append(all, s)
	}
	for s := range h.calls {
		all = append(all, s)
	}
	return all
}

// status says what the host runs, and, given a turn, which providers'
// servers failed in it.
func (h *Host) status(turn string) *Status {
	all := h.allServers()
	now := h.now()
	st := &Status{Session: h.Session, Pid: os.Getpid(), Servers: []ServerStatus{}}
	for _, s := range all {
		select {
		case <-s.ready:
			if s.fail == nil {
				st.Servers = append(st.Servers, s.status(now))
			}
		default: // still starting
		}
	}
	sortServers(st.Servers)
	h.mu.Lock()
	st.Answered, st.Panics, st.Log = h.answered, h.panics, h.Log
	for provider, f := range h.failedIn {
		if turn != "" && f.turn == turn {
			if st.FailedInTurn == nil {
				st.FailedInTurn = map[string]string{}
			}
			st.FailedInTurn[provider] = f.why
		}
	}
	h.mu.Unlock()
	if h.AuditFile != "" {
		st.AuditFailures, _, _ = audit.Failures(h.AuditFile, h.Session)
	}
	return st
}

// sortServers orders servers by provider, then pid.
func sortServers(ss []ServerStatus) {
	sort.Slice(ss, func(i, j int) bool {
		if ss[i].Provider != ss[j].Provider {
			return ss[i].Provider < ss[j].Provider
		}
		return ss[i].Pid < ss[j].Pid
	})
}

// stopFailed stops the server a gateway found failed, if it is still the
// one the gateway used, and keeps the provider out of the rest of the turn.
func (h *Host) stopFailed(req *Request) {
	h.markFailed(req.Provider, req.Turn, req.Detail)
	h.mu.Lock()
	s := h.servers[req.Provider]
	h.mu.Unlock()
	if s != nil && (req.Pid == 0 || s.pidNow() == req.Pid) {
		go func() {
			// The gateway's own connection is closing as it asks: let
			// what it sent last (its notifications/cancelled) through.
			s.drained(500 * time.Millisecond)
			s.stop(WhyFailed, req.Detail)
		}()
	}
}

// open finds or starts the provider's server, replies, and relays the
// connection's messages until it ends.
func (h *Host) open(conn *net.UnixConn, r *bufio.Reader, req *Request) {
	s, started, f := h.serverFor(req)
	if f != nil {
		reply(conn, Reply{Error: f})
		return
	}
	c := s.attach(conn, req.Turn)
	if c == nil {
		// Stopped between being found and being attached to: the
		// client may try again.
		failReply(conn, KindClosing, "the server of %s is stopping", req.Provider)
		return
	}
	defer s.detach(c)
	if reply(conn, Reply{OK: true, Pid: s.pid, Started: started}) != nil {
		return
	}
	c.relay(r)
}

// serverFor returns the provider's server for req: the running one when
// it was started from the same entry, else a new one (a running one from
// another entry is retired: registry changed). A call server is always
// new. It waits for a new server to be initialized.
func (h *Host) serverFor(req *Request) (*server, bool, *Failure) {
	e := *req.Entry
	h.mu.Lock()
	if h.closing {
		h.mu.Unlock()
		return nil, false, &Failure{Kind: KindClosing, Message: "the session process is shutting down"}
	}
	var s *server
	started := false
	if e.Lifetime == LifetimeCall {
		s = newServer(h, req.Provider, e, req.Turn)
		h.calls[s] = true
		started = true
	} else {
		old := h.servers[req.Provider]
		if old != nil && old.hash != e.Hash() {
			delete(h.servers, req.Provider)
			go old.retire(WhyRegistryChanged)
			old = nil
		}
		if old == nil {
			if f, failed := h.failedIn[req.Provider]; failed && f.turn == req.Turn {
				h.mu.Unlock()
				return nil, false, &Failure{Kind: KindFailed, Message: "the server of " + req.Provider + " failed earlier in this turn"}
			}
			delete(h.failedIn, req.Provider)
			s = newServer(h, req.Provider, e, req.Turn)
			h.servers[req.Provider] = s
			started = true
		} else {
			s = old
		}
	}
	h.mu.Unlock()
	if started {
		s.run()
		if s.fail != nil {
			h.drop(s) // a server that failed to start has no stop to wait for
			return nil, false, s.fail
		}
		return s, true, nil
	}
	<-s.ready // bounded: initialize has the entry's timeout
	if s.fail != nil {
		return nil, false, s.fail
	}
	return s, false, nil
}

// SamePeer accepts a connection from a process of this user in this
// process's mount namespace, and refuses every other: a turn's confined
// shell has a mount namespace of its own.
func SamePeer(conn *net.UnixConn) error {
	raw, err := conn.SyscallConn()
	if err != nil {
		return err
	}
	var cred *syscall.Ucred
	var cerr error
	if err := raw.Control(func(fd uintptr) {
		cred, cerr = syscall.GetsockoptUcred(int(fd), syscall.SOL_SOCKET, syscall.SO_PEERCRED)
	}); err != nil {
		return err
	}
	if cerr != nil {
		return fmt.Errorf("reading the peer's credentials: %v", cerr)
	}
	if int(cred.Uid) != os.Getuid() {
		return fmt.Errorf("the peer runs as uid %d, and this session process serves uid %d only", cred.Uid, os.Getuid())
	}
	theirs, err := os.Readlink(fmt.Sprintf("/proc/%d/ns/mnt", cred.Pid))
	if err != nil {
		return fmt.Errorf("reading the peer's mount namespace: %v", err)
	}
	ours, err := os.Readlink("/proc/self/ns/mnt")
	if err != nil {
		return fmt.Errorf("reading this process's mount namespace: %v", err)
	}
	if theirs != ours {
		return errors.New("the peer runs in another mount namespace")
	}
	return nil
}

// Answerer answers one invocation, given ctx, which ends when the client
// goes. It runs in the host, for a client in the same mount namespace and
// of the same user (Peer).
type Answerer func(ctx context.Context, req *hostwire.AnswerRequest) Answered

// Answered is how an invocation was answered.
type Answered struct {
	Status   int
	HandBack bool // left to the client, which shows the output first
	// Output is what the answer wrote, in order.
	Output hostwire.Output
	// Release, when set, runs once the answer has been sent: it ends the
	// call's use of its provider's server.
	Release func()
}

// answer serves an answer request (hostwire): it accepts it, waits for the
// client to commit, answers, and sends the answer. Nothing runs unless the
// client commits; after it has, the client's end closing ends ctx, and a
// panic in Answer ends the connection without an answer, which the client
// reports as a call that may have run.
func (h *Host) answer(conn *net.UnixConn, r *bufio.Reader, req *Request) {
	if h.Answer == nil {
		failReply(conn, KindBad, "this session process answers no invocation")
		return
	}
	if reply(conn, Reply{OK: true}) != nil {
		return
	}
	conn.SetReadDeadline(time.Now().Add(5 * time.Second))
	if b, err := r.ReadByte(); err != nil || b != hostwire.Commit {
		return
	}
	conn.SetReadDeadline(time.Time{})
	ctx, cancel := context.WithCancel(context.Background())
	defer cancel()
	go func() {
		io.Copy(io.Discard, r)
		cancel()
	}()
	a, ok := h.runAnswer(ctx, req.Answer)
	if !ok {
		return
	}
	if !a.HandBack {
		h.mu.Lock()
		h.answered++
		h.mu.Unlock()
	}
	if a.Release != nil {
		defer a.Release()
	}
	parts := a.Output.Parts()
	if parts == nil {
		parts = []hostwire.Part{}
	}
	head, _ := json.Marshal(hostwire.Answer{Status: a.Status, HandBack: a.HandBack, Parts: parts})
	buf := append(append(head, '\n'), a.Output.Bytes()...)
	conn.Write(buf)
}

// runAnswer runs h.Answer; ok is false when it panicked. A panic is
// counted and written, with its stack, to the host's log.
func (h *Host) runAnswer(ctx context.Context, req *hostwire.AnswerRequest) (a Answered, ok bool) {
	defer func() {
		if p := recover(); p != nil {
			ok = false
			h.recovered("answering an invocation", p, debug.Stack())
		}
	}()
	return h.Answer(ctx, req), true
}

// recovered counts a panic the host recovered from and writes it, with
// its stack, to the host's log.
func (h *Host) recovered(doing string, p any, stack []byte) {
	h.mu.Lock()
	h.panics++
	h.mu.Unlock()
	if h.Log == "" {
		return
	}
	f, err := os.OpenFile(h.Log, os.O_WRONLY|os.O_APPEND|os.O_CREATE, 0o600)
	if err != nil {
		return
	}
	defer f.Close()
	fmt.Fprintf(f, "%s session %s: panic %s (recovered): %v\n%s\n", h.now().UTC().Format(time.RFC3339Nano), h.Session, doing, p, stack)
}
