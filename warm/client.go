package warm

import (
	"bufio"
	"context"
	"errors"
	"fmt"
	"io"
	"net"
	"os"
	"os/exec"
	"path/filepath"
	"syscall"
	"time"

	"spear/internal/hostwire"
	"spear/internal/procs"
	"spear/mcp"
)

// Files in a session's state directory.
const (
	SocketName = hostwire.SocketName
	LockName   = "host.lock"
)

// DefaultDialTimeout bounds reaching a session's host, starting it
// included; replyGrace is how much longer than the provider's timeout an
// open may wait for its reply.
const (
	DefaultDialTimeout = 3 * time.Second
	replyGrace         = time.Second
)

// Launcher says how to start a session's host: a binary whose main hands
// the arguments after HostArg to HostMain.
type Launcher struct {
	Path  string // the binary
	Argv0 string // its argv[0]
}

// Self is a Launcher that re-executes the running binary.
func Self() *Launcher {
	argv0 := "spear"
	if len(os.Args) > 0 {
		argv0 = os.Args[0]
	}
	return &Launcher{Path: "/proc/self/exe", Argv0: argv0}
}

// Session reaches one session's host over the socket in the session's
// state directory, and starts the host when none answers.
type Session struct {
	// Name is the session's id.
	Name string
	// Dir is the session's state directory
	// (SPEAR_STATE_DIR/sessions/<session>).
	Dir string
	// AuditFile and Idle are what a host started here is given.
	AuditFile string
	Idle      time.Duration
	// Launcher starts the host; nil means one is never started, only
	// reached if it runs.
	Launcher *Launcher
	// DialTimeout bounds reaching the host, starting it included; zero
	// means DefaultDialTimeout.
	DialTimeout time.Duration
}

func (s *Session) dialTimeout() time.Duration {
	if s.DialTimeout > 0 {
		return s.DialTimeout
	}
	return DefaultDialTimeout
}

// Open asks the host for the provider's server, started from entry e, for
// turn. It returns the connection, which then carries the server's MCP
// messages (initialize is answered at once, from the server's first
// answer), and the host's reply. Errors: an *UnreachableError when no host
// could be reached in time, or none would serve (start the server
// yourself); a *FailedError for a provider whose server failed earlier in
// the turn; the mcp error the server's start or initialize met otherwise,
// an *mcp.TimeoutError included when the host does not reply within the
// provider's timeout and a second.
func (s *Session) Open(ctx context.Context, provider string, e Entry, turn string) (net.Conn, *Reply, error) {
	deadline := time.Now().Add(s.dialTimeout())
	req := Request{V: Version, Op: OpOpen, Provider: provider, Entry: &e, Turn: turn}
	for attempt := 0; ; attempt++ {
		conn, err := s.dial(ctx, deadline, s.Launcher)
		if err != nil {
			return nil, nil, &UnreachableError{Why: err.Error()}
		}
		rep, r, err := exchange(ctx, conn, req, time.Now().Add(e.timeout()+replyGrace))
		retry := attempt == 0 && time.Now().Before(deadline)
		switch {
		case err != nil && errors.Is(err, io.EOF) && retry:
			conn.Close() // the host was exiting: start another
			continue
		case err != nil && isTimeout(err):
			conn.Close()
			return nil, nil, &mcp.TimeoutError{Method: "initialize", After: e.timeout()}
		case err != nil:
			conn.Close()
			return nil, nil, &UnreachableError{Why: err.Error()}
		case rep.Error != nil && rep.Error.Kind == KindClosing && retry:
			conn.Close()
			continue
		case rep.Error != nil:
			conn.Close()
			return nil, rep, rep.Error.Err()
		}
		return &bufConn{Conn: conn, r: r}, rep, nil
	}
}

// Stop tells the host that the provider's server pid failed in turn, so
// that it is stopped and the provider stays unavailable for the rest of
// the turn. It starts no host, and waits a second at most.
func (s *Session) Stop(ctx context.Context, provider string, pid int, turn, why, detail string) error {
	deadline := time.Now().Add(time.Second)
	conn, err := s.dial(ctx, deadline, nil)
	if err != nil {
		return err
	}
	defer conn.Close()
	rep, _, err := exchange(ctx, conn, Request{V: Version, Op: OpStop, Provider: provider, Pid: pid, Turn: turn, Why: why, Detail: detail}, deadline)
	if err != nil {
		return err
	}
	if rep.Error != nil {
		return rep.Error.Err()
	}
	return nil
}

// FailedIn returns the providers whose servers failed in turn, with why:
// each is unavailable for the rest of the turn. It starts no host; with
// none running, no server failed.
func (s *Session) FailedIn(ctx context.Context, turn string) (map[string]string, error) {
	addr, d, err := socketAddr(s.Dir)
	if err != nil {
		return nil, nil // no session directory yet: no host
	}
	// One try: a host that is not listening runs no server to have failed.
	conn, err := net.DialUnix("unix", nil, addr)
	if d != nil {
		d.Close()
	}
	if err != nil {
		return nil, nil
	}
	defer conn.Close()
	st, err := statusOf(ctx, conn, Request{V: Version, Op: OpStatus, Turn: turn}, time.Second)
	if err != nil {
		return nil, err
	}
	return st.FailedInTurn, nil
}

func isTimeout(err error) bool {
	var ne net.Error
	return errors.As(err, &ne) && ne.Timeout()
}

// bufConn reads what the reply's reader holds before the connection.
type bufConn struct {
	net.Conn
	r *bufio.Reader
}

func (c *bufConn) Read(b []byte) (int, error) { return c.r.Read(b) }

// exchange writes req and reads the reply, by deadline or the end of ctx.
func exchange(ctx context.Context, conn net.Conn, req Request, deadline time.Time) (*Reply, *bufio.Reader, error) {
	conn.SetDeadline(deadline)
	stop := context.AfterFunc(ctx, func() { conn.SetDeadline(time.Now()) })
	defer stop()
	_, werr := conn.Write(encodeLine(req))
	// A host that refuses the peer replies without reading the request:
	// its reply is read even when the write failed.
	r := bufio.NewReaderSize(conn, 64<<10)
	line, err := mcp.ReadLine(r, maxHeader)
	if err != nil {
		if ctx.Err() != nil {
			return nil, nil, ctx.Err()
		}
		if werr != nil {
			return nil, nil, werr
		}
		return nil, nil, err
	}
	rep, err := DecodeReply(line)
	if err != nil {
		return nil, nil, err
	}
	conn.SetDeadline(time.Time{})
	return rep, r, nil
}

// socketAddr returns the socket's address, and a directory to close once
// it has been used (hostwire.SocketPath).
func socketAddr(dir string) (*net.UnixAddr, *os.File, error) {
	path, d, err := hostwire.SocketPath(dir)
	if err != nil {
		return nil, nil, err
	}
	return &net.UnixAddr{Name: path, Net: "unix"}, d, nil
}

// dial connects to the session's host. When none answers and launch is
// set, it starts one, unless another is running or starting (it holds the
// session's lock): then it waits for that one. It gives up at deadline.
func (s *Session) dial(ctx context.Context, deadline time.Time, launch *Launcher) (*net.UnixConn, error) {
	var exited <-chan struct{} // the host this call started
	wait := 2 * time.Millisecond
	for {
		addr, d, err := socketAddr(s.Dir)
		if err != nil {
			return nil, err
		}
		conn, err := net.DialUnix("unix", nil, addr)
		if d != nil {
			d.Close()
		}
		if err == nil {
			return conn, nil
		}
		if launch != nil && exited == nil {
			started, lerr := s.launch(launch)
			if lerr != nil {
				return nil, lerr
			}
			exited = started
		}
		if exited != nil {
			select {
			case <-exited:
				return nil, errors.New("the session process it started exited at once")
			default:
			}
		}
		if ctx.Err() != nil {
			return nil, ctx.Err()
		}
		if time.Now().Add(wait).After(deadline) {
			return nil, fmt.Errorf("no session process answered within %s (%v)", s.dialTimeout(), err)
		}
		time.Sleep(wait)
		wait = min(2*wait, 50*time.Millisecond)
	}
}

// launch starts the session's host, unless one holds the session's lock.
// The host inherits the lock and holds it for as long as it takes
// connections. It returns a channel closed when the started host exits,
// or nil when another host holds the lock.
func (s *Session) launch(l *Launcher) (<-chan struct{}, error) {
	if err := privateDir(s.Dir); err != nil {
		return nil, err
	}
	lock, err := os.OpenFile(filepath.Join(s.Dir, LockName), os.O_CREATE|os.O_RDWR|syscall.O_CLOEXEC, 0o600)
	if err != nil {
		return nil, err
	}
	defer lock.Close() // the host keeps its own copy
	if err := syscall.Flock(int(lock.Fd()), syscall.LOCK_EX|syscall.LOCK_NB); err != nil {
		if errors.Is(err, syscall.EWOULDBLOCK) {
			return nil, nil
		}
		return nil, fmt.Errorf("locking the session: %w", err)
	}
	// No host holds the lock, so none is alive: a socket left by one that
	// died goes.
	os.Remove(filepath.Join(s.Dir, SocketName))
	idle := s.Idle
	if idle <= 0 {
		idle = 600 * time.Second
	}
	cmd := &exec.Cmd{
		Path: l.Path,
		Args: []string{l.Argv0, HostArg, "-session", s.Name, "-dir", s.Dir, "-audit", s.AuditFile, "-idle", idle.String()},
		// Nothing of the starter's environment: the host needs none,
		// and each server gets its own from the entry it is opened with.
		Env:        []string{},
		Dir:        "/",
		ExtraFiles: []*os.File{lock},
		// A session of its own: no terminal's signals reach it, and it
		// outlives the process that started it.
		SysProcAttr: &syscall.SysProcAttr{Setsid: true},
	}
	if err := cmd.Start(); err != nil {
		return nil, fmt.Errorf("starting the session process: %w", err)
	}
	exited := make(chan struct{})
	go func() {
		cmd.Wait()
		close(exited)
	}()
	return exited, nil
}

// privateDir makes dir if it is missing, and checks that it is a
// directory of this user's that no one else may enter.
func privateDir(dir string) error {
	if err := os.MkdirAll(dir, 0o700); err != nil {
		return err
	}
	fi, err := os.Lstat(dir)
	if err != nil {
		return err
	}
	st, ok := fi.Sys().(*syscall.Stat_t)
	if !fi.IsDir() || !ok || int(st.Uid) != os.Getuid() {
		return fmt.Errorf("%s is not a directory of this user's", dir)
	}
	if fi.Mode().Perm()&0o077 != 0 {
		if err := os.Chmod(dir, 0o700); err != nil {
			return err
		}
	}
	return nil
}

// List asks every session's host under stateDir what it runs. A socket
// that no host answers on is skipped.
func List(ctx context.Context, stateDir string) ([]Status, error) {
	var out []Status
	for _, dir := range sessionDirs(stateDir) {
		st, err := ask(ctx, dir, OpStatus, time.Second)
		if err != nil {
			continue
		}
		out = append(out, *st)
	}
	return out, nil
}

// StopSessions shuts down the host of session, or of every session when
// session is "", stopping their servers, and returns what each stopped.
// It waits for each host to exit, a few seconds at most.
func StopSessions(ctx context.Context, stateDir, session string) ([]Status, error) {
	dirs := sessionDirs(stateDir)
	if session != "" {
		if !validTurn(session) {
			return nil, fmt.Errorf("%q is %w", session, ErrNotSession)
		}
		dirs = []string{hostwire.SessionDir(stateDir, session)}
	}
	var out []Status
	var errs []error
	for _, dir := range dirs {
		st, err := ask(ctx, dir, OpShutdown, 30*time.Second)
		if err != nil {
			if !lockHeld(dir) {
				continue // no host: a socket one that died left behind
			}
			// A host that holds the lock but does not answer (out of
			// descriptors, stopped, hung) is stopped by signal.
			st, err = terminate(ctx, dir, err)
			if err != nil {
				errs = append(errs, err)
				continue
			}
		}
		waitGone(ctx, st.Pid, 3*time.Second)
		out = append(out, *st)
	}
	return out, errors.Join(errs...)
}

// waitGone waits, at most d or until ctx ends, for pid to exit, and
// reports whether it did.
func waitGone(ctx context.Context, pid int, d time.Duration) bool {
	for deadline := time.Now().Add(d); procs.Alive(pid); time.Sleep(10 * time.Millisecond) {
		if time.Now().After(deadline) || ctx.Err() != nil {
			return false
		}
	}
	return true
}

// ErrNotSession is StopSessions' error for a name that is not a session
// id.
var ErrNotSession = errors.New("not a session id")

// lockHeld reports whether a host holds dir's lock: it does for as long
// as it takes connections.
func lockHeld(dir string) bool {
	f, err := os.OpenFile(filepath.Join(dir, LockName), os.O_RDWR|syscall.O_CLOEXEC, 0)
	if err != nil {
		return false
	}
	defer f.Close()
	return errors.Is(syscall.Flock(int(f.Fd()), syscall.LOCK_EX|syscall.LOCK_NB), syscall.EWOULDBLOCK)
}

// terminate stops the host serving dir that did not answer (why) with
// SIGTERM, on which it stops its servers as it would when asked, and
// waits for it to go. The host is the one its pid file names (PidName),
// which only the host writes, in a directory the turn's shell cannot
// reach: a process of the turn's that copies the host's command line is
// never taken for it.
func terminate(ctx context.Context, dir string, why error) (*Status, error) {
	name := filepath.Base(dir)
	pid := hostPid(dir)
	if pid == 0 {
		return nil, fmt.Errorf("session %s: its session process holds the session's lock but did not answer (%v), and its pid file names no running process", name, why)
	}
	if err := syscall.Kill(pid, syscall.SIGTERM); err != nil {
		return nil, fmt.Errorf("session %s: its session process (pid %d) did not answer (%v), and cannot be signalled: %v", name, pid, why, err)
	}
	if !waitGone(ctx, pid, 30*time.Second) {
		return nil, fmt.Errorf("session %s: its session process (pid %d) did not answer (%v), and is still running 30 s after SIGTERM", name, pid, why)
	}
	return &Status{Session: name, Pid: pid, Servers: []ServerStatus{}, Unanswered: why.Error()}, nil
}

// ask sends op to the host in dir and returns the status it replies with.
func ask(ctx context.Context, dir, op string, timeout time.Duration) (*Status, error) {
	s := &Session{Dir: dir}
	conn, err := s.dial(ctx, time.Now().Add(time.Second), nil)
	if err != nil {
		return nil, err
	}
	defer conn.Close()
	return statusOf(ctx, conn, Request{V: Version, Op: op}, timeout)
}

// statusOf sends req on conn and returns the status the host replies with.
func statusOf(ctx context.Context, conn net.Conn, req Request, timeout time.Duration) (*Status, error) {
	rep, _, err := exchange(ctx, conn, req, time.Now().Add(timeout))
	if err != nil {
		return nil, err
	}
	if rep.Error != nil {
		return nil, rep.Error.Err()
	}
	if rep.Status == nil {
		return nil, errors.New("the reply has no status")
	}
	return rep.Status, nil
}

// sessionDirs lists the session directories under stateDir that hold a
// host's socket.
func sessionDirs(stateDir string) []string {
	matches, _ := filepath.Glob(filepath.Join(hostwire.SessionDir(stateDir, "*"), SocketName))
	var dirs []string
	for _, m := range matches {
		if dir := filepath.Dir(m); validTurn(filepath.Base(dir)) {
			dirs = append(dirs, dir)
		}
	}
	return dirs
}
