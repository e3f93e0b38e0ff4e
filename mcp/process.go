package mcp

import (
	"errors"
	"os"
	"os/exec"
	"path/filepath"
	"sort"
	"strings"
	"sync"
	"time"

	"spear/internal/procs"
)

// process is a started server: its pipes, its process tree and its state.
// As an io.ReadWriteCloser it is the stdio transport: it reads the
// server's stdout, writes its stdin, and Close stops it.
type process struct {
	tree   *procs.Tree
	stdin  *os.File // our end of the server's stdin
	stdout *os.File // our end of the server's stdout
	stderr *os.File // our end of the server's stderr
	tail   *tailBuffer
	pgid   int
	grace  time.Duration // how long Close waits for each step

	waited  <-chan struct{} // closed once the server and its tree are gone
	drained chan struct{}   // closed once stderr reached EOF or was closed
}

// serverEnv builds a server's environment: PATH and HOME from getenv, then
// the extra variables, sorted by name so the order is stable.
func serverEnv(getenv func(string) string, extra map[string]string) []string {
	vars := map[string]string{"PATH": getenv("PATH"), "HOME": getenv("HOME")}
	for k, v := range extra {
		vars[k] = v
	}
	names := make([]string, 0, len(vars))
	for k := range vars {
		names = append(names, k)
	}
	sort.Strings(names)
	env := make([]string, 0, len(names))
	for _, k := range names {
		env = append(env, k+"="+vars[k])
	}
	return env
}

// startProcess starts the server named by opts in a process group of its
// own, under a reaper that keeps its whole process tree within reach
// (procs.StartTree).
func startProcess(opts *Options) (*process, error) {
	if len(opts.Command) == 0 || opts.Command[0] == "" {
		return nil, &StartError{Command: "(empty command)", Err: errors.New("the command is empty")}
	}
	name := opts.Command[0]
	path, err := opts.Program()
	if err != nil {
		return nil, &StartError{Command: name, Err: err}
	}

	inR, inW, err := os.Pipe()
	if err != nil {
		return nil, &StartError{Command: name, Err: err}
	}
	outR, outW, err := os.Pipe()
	if err != nil {
		closeAll(inR, inW)
		return nil, &StartError{Command: name, Err: err}
	}
	errR, errW, err := os.Pipe()
	if err != nil {
		closeAll(inR, inW, outR, outW)
		return nil, &StartError{Command: name, Err: err}
	}
	tree, err := procs.StartTree(procs.Program{
		Path: path, Args: opts.Command, Env: serverEnv(opts.getenv(), opts.Env), Dir: opts.Dir,
		Stdin: inR, Stdout: outW, Stderr: errW,
	})
	closeAll(inR, outW, errW) // the server holds its own copies
	if err != nil {
		closeAll(inW, outR, errR)
		return nil, &StartError{Command: name, Err: err}
	}

	p := &process{
		tree: tree, stdin: inW, stdout: outR, stderr: errR,
		tail:    newTailBuffer(opts.stderrTail()),
		pgid:    tree.Pid(),
		grace:   opts.CloseGrace,
		waited:  tree.Exited(),
		drained: make(chan struct{}),
	}
	go p.drainStderr(opts.Stderr)
	return p, nil
}

// Read reads what the server writes to its stdout.
func (p *process) Read(b []byte) (int, error) { return p.stdout.Read(b) }

// Write writes to the server's stdin.
func (p *process) Write(b []byte) (int, error) { return p.stdin.Write(b) }

// Close stops the server (see stop) and returns nil.
func (p *process) Close() error {
	p.stop(p.grace)
	return nil
}

// Program returns the program StartProcess runs for o: the command's first
// word when it names a path, or else the first match in the absolute
// directories of the server's own PATH (the one it is given, not ours:
// Env's when Env names PATH).
func (o Options) Program() (string, error) {
	if len(o.Command) == 0 || o.Command[0] == "" {
		return "", errors.New("the command is empty")
	}
	name := o.Command[0]
	if strings.Contains(name, "/") {
		return name, nil
	}
	return lookPath(name, o.Path())
}

// Path is the PATH the server is given: Env's when Env names PATH, else
// the one Getenv supplies.
func (o Options) Path() string {
	if path, ok := o.Env["PATH"]; ok {
		return path
	}
	return o.getenv()("PATH")
}

// lookPath finds name in the absolute directories of path; empty and
// relative entries, which a shell would search from its working
// directory, are skipped.
func lookPath(name, path string) (string, error) {
	for _, dir := range strings.Split(path, ":") {
		if !filepath.IsAbs(dir) {
			// An empty or relative entry would find the command from
			// whatever directory the server starts in: never.
			continue
		}
		candidate := dir + "/" + name
		if fi, err := os.Stat(candidate); err == nil && !fi.IsDir() && fi.Mode()&0o111 != 0 {
			return candidate, nil
		}
	}
	return "", &exec.Error{Name: name, Err: exec.ErrNotFound}
}

func closeAll(files ...*os.File) {
	for _, f := range files {
		f.Close()
	}
}

// drainStderr reads the server's stderr until EOF, always, keeping a bounded
// tail for diagnostics and copying it to extra when that is set.
func (p *process) drainStderr(extra interface{ Write([]byte) (int, error) }) {
	defer close(p.drained)
	buf := make([]byte, 32*1024)
	for {
		n, err := p.stderr.Read(buf)
		if n > 0 {
			p.tail.Write(buf[:n])
			if extra != nil {
				extra.Write(buf[:n])
			}
		}
		if err != nil {
			return
		}
	}
}

// state says how the process ended, or that it is still running.
func (p *process) state() string {
	select {
	case <-p.waited:
	default:
		return "still running"
	}
	err := p.tree.Err()
	if err == nil {
		return "exit status 0"
	}
	var ee *exec.ExitError
	if errors.As(err, &ee) {
		return ee.ProcessState.String()
	}
	return err.Error()
}

// exitedWithin reports whether the server has been reaped within d.
func (p *process) exitedWithin(d time.Duration) bool {
	t := time.NewTimer(d)
	defer t.Stop()
	select {
	case <-p.waited:
		return true
	case <-t.C:
		return false
	}
}

// stop ends the server as the stdio transport says: "the client SHOULD
// initiate shutdown by first closing the input stream to the child process,
// waiting for the server to exit, or sending SIGTERM if the server does not
// exit within a reasonable time; and then SIGKILL if the server does not
// exit within a reasonable time after SIGTERM." Signals go to the server's
// whole process tree, whatever process group or session its processes
// moved to, and whatever the server left behind is killed once it has
// exited (procs.Tree.Stop). stop never blocks for more than about 2×grace
// plus a second.
func (p *process) stop(grace time.Duration) {
	p.tree.Stop(p.stdin, grace)
	// Let stderr drain what the tree wrote, then close our ends so no
	// reader can stay blocked on a pipe a stray process still holds.
	select {
	case <-p.drained:
	case <-time.After(100 * time.Millisecond):
	}
	p.stdout.Close()
	p.stderr.Close()
}

// tailBuffer keeps the last max bytes written to it.
type tailBuffer struct {
	mu    sync.Mutex
	max   int
	buf   []byte
	total int64
}

func newTailBuffer(max int) *tailBuffer { return &tailBuffer{max: max} }

func (t *tailBuffer) Write(b []byte) (int, error) {
	t.mu.Lock()
	defer t.mu.Unlock()
	t.total += int64(len(b))
	if len(b) >= t.max {
		t.buf = append(t.buf[:0], b[len(b)-t.max:]...)
		return len(b), nil
	}
	if over := len(t.buf) + len(b) - t.max; over > 0 {
		t.buf = append(t.buf[:0], t.buf[over:]...)
	}
	t.buf = append(t.buf, b...)
	return len(b), nil
}

// String returns the tail as text, trimmed of surrounding white space.
func (t *tailBuffer) String() string {
	t.mu.Lock()
	defer t.mu.Unlock()
	return strings.TrimSpace(string(t.buf))
}

// Process is a server started as a child process in a process group of its
// own, with no client speaking to it: the stdio transport on its own, for a
// caller that relays the server's messages rather than making requests.
// Read reads the server's stdout, Write writes its stdin, and Close stops
// it as Client.Close would: stdin closed, then SIGTERM, then SIGKILL, to its
// whole process tree.
type Process struct {
	p       *process
	once    sync.Once
	stopped chan struct{} // closed once Close has stopped the server
}

// StartProcess starts the server that opts names (Command, Env, Dir,
// StderrTail, Stderr, CloseGrace and Getenv count) as Start does, and
// returns it without a client.
func StartProcess(opts Options) (*Process, error) {
	o := opts.withDefaults()
	p, err := startProcess(&o)
	if err != nil {
		return nil, err
	}
	return &Process{p: p, stopped: make(chan struct{})}, nil
}

// Read reads what the server writes to its stdout.
func (p *Process) Read(b []byte) (int, error) { return p.p.Read(b) }

// Write writes to the server's stdin.
func (p *Process) Write(b []byte) (int, error) { return p.p.Write(b) }

// Close stops the server and every process it started, and reaps the
// server; it never blocks for more than about 2×CloseGrace plus a second.
// It is safe to call more than once, from any goroutine: later calls wait
// for the first. It returns nil.
func (p *Process) Close() error {
	p.once.Do(func() {
		p.p.Close()
		close(p.stopped)
	})
	<-p.stopped
	return nil
}

// Pid returns the server's process id, which is also its process group id.
func (p *Process) Pid() int { return p.p.pgid }

// Exited is closed once the server has exited and been reaped, and
// whatever it left behind has been killed.
func (p *Process) Exited() <-chan struct{} { return p.p.waited }

// State says how the server ended, such as "exit status 1" or "signal:
// killed", or "still running".
func (p *Process) State() string { return p.p.state() }

// Stderr returns the bounded tail of what the server wrote to its stderr.
func (p *Process) Stderr() string { return p.p.tail.String() }
