package warm

import (
	"bytes"
	"crypto/sha256"
	"encoding/hex"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"math"
	"strings"
	"time"
	"unicode/utf8"

	"spear/deploy"
	"spear/internal/hostwire"
	"spear/mcp"
)

// The header protocol: a connection to a host begins with one Request line
// from the client and one Reply line from the host. After the Reply to an
// open that succeeded, the connection carries MCP JSON-RPC lines both ways.

// Version is the header protocol's version; a host answers a request of
// another version with a Failure of kind KindVersion.
const Version = hostwire.Version

// Operations a Request names.
const (
	OpOpen     = "open"     // reach a provider's server, starting it if needed
	OpStop     = "stop"     // stop a provider's server that failed
	OpStatus   = "status"   // say what runs
	OpShutdown = "shutdown" // stop every server and exit
	// OpAnswer has the host answer an invocation (hostwire).
	OpAnswer = hostwire.OpAnswer
)

// Why a server stopped, as provider_stopped records it.
const (
	WhyIdle            = "idle"
	WhySessionStopped  = "session stopped"
	WhyRegistryChanged = "registry changed"
	WhyFailed          = "failed"
	WhyCallDone        = "call done"
	// WhyStateRemoved: the session's state directory, or its socket, was
	// removed (a harness deleted a task's state): nothing can reach the
	// host any more, so it stops its servers and exits.
	WhyStateRemoved = "state removed"
)

// Lifetimes a Request's entry names, as the registry spells them.
const (
	LifetimeSession = string(deploy.LifetimeSession)
	LifetimeCall    = string(deploy.LifetimeCall)
)

// Bounds on what a connection carries.
const (
	maxHeader  = 1 << 20               // one Request or Reply line
	maxMessage = mcp.DefaultMaxMessage // one MCP message either way
)

// Entry is a provider's registry entry as a host needs it: what starts the
// server (Command, Env, Dir, Path, Home), how long one request may take,
// and every other key of the entry, which a host uses only to tell one
// entry from another. Its JSON encoding is canonical: the same entry
// always encodes to the same bytes.
type Entry struct {
	Command  []string          `json:"command"`
	Env      map[string]string `json:"env,omitempty"`
	Dir      string            `json:"dir"`
	Path     string            `json:"path"` // the PATH the server is given
	Home     string            `json:"home"` // the HOME the server is given
	Timeout  float64           `json:"timeout"`
	Lifetime string            `json:"lifetime"`
	Scope    string            `json:"scope"`
	Tasks    []string          `json:"tasks"`
	Read     []string          `json:"read"`
	Write    string            `json:"write"`
	Enabled  bool              `json:"enabled"`
	Private  []string          `json:"private,omitempty"`
}

// EntryOf is p's entry, with the PATH and HOME that getenv supplies (those
// the server is started with).
func EntryOf(p *deploy.Provider, getenv func(string) string) Entry {
	tasks := make([]string, len(p.Tasks))
	for i, t := range p.Tasks {
		tasks[i] = string(t)
	}
	read := append([]string{}, p.Read...)
	return Entry{
		Command: append([]string{}, p.Command...), Env: p.Env, Dir: p.Dir,
		Path: getenv("PATH"), Home: getenv("HOME"),
		Timeout: p.Timeout.Seconds(), Lifetime: string(p.Lifetime),
		Scope: p.Scope.String(), Tasks: tasks, Read: read, Write: string(p.Write),
		Enabled: p.Enabled, Private: p.Private,
	}
}

// Hash identifies the entry: two entries have one hash only if every key
// is the same.
func (e Entry) Hash() string {
	data, _ := json.Marshal(e)
	sum := sha256.Sum256(data)
	return hex.EncodeToString(sum[:])
}

// timeout is how long one request to the server may take.
func (e *Entry) timeout() time.Duration {
	return time.Duration(e.Timeout * float64(time.Second))
}

// Request is the first line a client sends on a connection to a host.
type Request struct {
	V  int    `json:"v"`
	Op string `json:"op"`
	// Provider is the provider's id (open, stop).
	Provider string `json:"provider,omitempty"`
	// Entry is the provider's registry entry (open).
	Entry *Entry `json:"entry,omitempty"`
	// Turn is the turn the request is made for (open, stop).
	Turn string `json:"turn,omitempty"`
	// Pid names the server to stop (stop): a server started since, for a
	// new turn or a changed entry, is left alone.
	Pid int `json:"pid,omitempty"`
	// Why the server is stopped, and the full error (stop).
	Why    string `json:"why,omitempty"`
	Detail string `json:"detail,omitempty"`
	// Answer is the invocation to answer (answer).
	Answer *hostwire.AnswerRequest `json:"answer,omitempty"`
}

// Reply is the host's answer to a Request.
type Reply struct {
	OK bool `json:"ok"`
	// Pid is the server's process id (open).
	Pid int `json:"pid,omitempty"`
	// Started says the server was started for this open.
	Started bool `json:"started,omitempty"`
	// Error says why the request failed.
	Error *Failure `json:"error,omitempty"`
	// Status is what runs (status, and shutdown: what it stopped).
	Status *Status `json:"status,omitempty"`
}

// Status is what one host runs.
type Status struct {
	Session string         `json:"session"`
	Pid     int            `json:"pid"` // the host's own
	Servers []ServerStatus `json:"servers"`
	// Answered is how many invocations the host has answered
	// (hostwire.OpAnswer), hand-backs not counted.
	Answered int `json:"answered"`
	// AuditFailures is how many of the session's events the audit trail
	// did not get (audit.Failures): each is in the trail's failures file.
	AuditFailures int `json:"audit_failures"`
	// Panics is how many panics the host recovered from; each is in Log,
	// with its stack.
	Panics int `json:"panics"`
	// FailedInTurn, for a status request that names a turn, is every
	// provider whose server failed in that turn, with why: each stays
	// unavailable for the rest of the turn.
	FailedInTurn map[string]string `json:"failed_in_turn,omitempty"`
	// Log is the host's log, in the session's state directory: its
	// recovered panics and whatever it wrote to its stderr.
	Log string `json:"log,omitempty"`
	// Unanswered, from StopSessions only, says the host did not answer
	// and was stopped by SIGTERM: what it stopped is in the audit trail,
	// not in Servers.
	Unanswered string `json:"unanswered,omitempty"`
}

// ServerStatus is one server a host runs.
type ServerStatus struct {
	Provider string    `json:"provider"`
	Pid      int       `json:"pid"`
	Lifetime string    `json:"lifetime"`
	Started  time.Time `json:"started"`
	Calls    int       `json:"calls"`
	// Idle is how long it has gone without a message, in seconds.
	Idle float64 `json:"idle_s"`
	// Turn is the turn that last opened it.
	Turn string `json:"turn"`
}

// Kinds of Failure.
const (
	KindStart    = "start"    // the server could not be started
	KindTimeout  = "timeout"  // it did not answer Method within After
	KindExit     = "exit"     // its output ended (State says how)
	KindProtocol = "protocol" // it broke the protocol
	KindRPC      = "rpc"      // it answered Method with a JSON-RPC error
	KindFailed   = "failed"   // it failed earlier in this turn
	KindVersion  = "version"  // the request's version is not the host's
	KindRefused  = "refused"  // the host serves no one like the caller
	KindBad      = "bad"      // the request does not decode
	KindClosing  = "closing"  // the host is shutting down
)

// Failure says why a request failed, in a form that becomes the same
// error a client of the server itself would have met (Err).
type Failure struct {
	Kind    string `json:"kind"`
	Message string `json:"message"`
	Method  string `json:"method,omitempty"`
	AfterMs int64  `json:"after_ms,omitempty"`
	State   string `json:"state,omitempty"`
	Code    int    `json:"code,omitempty"`
}

// FailedError is a provider whose warm server failed earlier in the turn:
// it stays unavailable for the rest of the turn.
type FailedError struct {
	Why string
}

func (e *FailedError) Error() string { return "its server failed earlier in this turn: " + e.Why }

// UnreachableError is a host that cannot be reached, or will not serve
// the request, in time: the caller may start the server itself instead.
type UnreachableError struct {
	Why string
}

func (e *UnreachableError) Error() string { return "the session process cannot be reached: " + e.Why }

// Err is the error f stands for: one of mcp's error types for the
// server's own failures, a *FailedError, or an *UnreachableError for the
// host's.
func (f *Failure) Err() error {
	switch f.Kind {
	case KindStart:
		return &mcp.StartError{Command: "the server", Err: errors.New(f.Message)}
	case KindTimeout:
		return &mcp.TimeoutError{Method: f.Method, After: time.Duration(f.AfterMs) * time.Millisecond}
	case KindExit:
		return &mcp.ExitError{State: f.State}
	case KindProtocol:
		return &mcp.ProtocolError{Msg: f.Message}
	case KindRPC:
		return &mcp.RPCError{Method: f.Method, Code: f.Code, Message: f.Message}
	case KindFailed:
		return &FailedError{Why: f.Message}
	}
	return &UnreachableError{Why: f.Kind + ": " + f.Message}
}

// failureOf describes err, from starting or initializing a server, as a
// Failure.
func failureOf(err error) *Failure {
	var (
		se *mcp.StartError
		te *mcp.TimeoutError
		ee *mcp.ExitError
		pe *mcp.ProtocolError
		re *mcp.RPCError
	)
	switch {
	case errors.As(err, &se):
		return &Failure{Kind: KindStart, Message: se.Error()}
	case errors.As(err, &te):
		return &Failure{Kind: KindTimeout, Message: te.Error(), Method: te.Method, AfterMs: te.After.Milliseconds()}
	case errors.As(err, &ee):
		return &Failure{Kind: KindExit, Message: "server closed its output (" + ee.State + ")", State: ee.State}
	case errors.As(err, &pe):
		return &Failure{Kind: KindProtocol, Message: pe.Msg}
	case errors.As(err, &re):
		return &Failure{Kind: KindRPC, Message: re.Message, Method: re.Method, Code: re.Code}
	}
	return &Failure{Kind: KindProtocol, Message: err.Error()}
}

// decodeStrict decodes one JSON object into v: no unknown field, nothing
// after it, at most maxHeader bytes.
func decodeStrict(line []byte, v any) error {
	if len(line) > maxHeader {
		return fmt.Errorf("longer than %d bytes", maxHeader)
	}
	line = bytes.TrimSpace(line)
	if len(line) == 0 || line[0] != '{' {
		return errors.New("not a JSON object")
	}
	if !utf8.Valid(line) {
		return errors.New("not UTF-8")
	}
	dec := json.NewDecoder(bytes.NewReader(line))
	dec.DisallowUnknownFields()
	if err := dec.Decode(v); err != nil {
		return err
	}
	if _, err := dec.Token(); err != io.EOF {
		return errors.New("more than one JSON value")
	}
	return nil
}

// DecodeRequest reads a Request line and checks it: a known version and
// operation, and for open and stop a provider id, a turn, and (open) an
// entry that can start a server.
func DecodeRequest(line []byte) (*Request, error) {
	var r Request
	if err := decodeStrict(line, &r); err != nil {
		return nil, fmt.Errorf("request: %v", err)
	}
	if r.V != Version {
		return nil, &versionError{got: r.V}
	}
	switch r.Op {
	case OpOpen:
		if err := checkProviderTurn(&r); err != nil {
			return nil, err
		}
		if r.Entry == nil {
			return nil, errors.New("request: open needs an entry")
		}
		if err := r.Entry.check(); err != nil {
			return nil, fmt.Errorf("request: entry: %v", err)
		}
	case OpStop:
		if err := checkProviderTurn(&r); err != nil {
			return nil, err
		}
		switch r.Why {
		case WhyFailed, WhyIdle, WhySessionStopped, WhyRegistryChanged, WhyCallDone:
		default:
			return nil, fmt.Errorf("request: %q is not a reason to stop", r.Why)
		}
		if r.Pid < 0 {
			return nil, errors.New("request: a negative pid")
		}
	case OpAnswer:
		if r.Answer == nil {
			return nil, errors.New("request: answer needs an invocation")
		}
		for _, kv := range r.Answer.Env {
			if !strings.Contains(kv, "=") {
				return nil, fmt.Errorf("request: answer: %q is not NAME=VALUE", kv)
			}
		}
	case OpStatus:
		if r.Turn != "" && !validTurn(r.Turn) {
			return nil, fmt.Errorf("request: %q is not a turn id", r.Turn)
		}
	case OpShutdown:
	default:
		return nil, fmt.Errorf("request: %q is not an operation; known are open, stop, status, shutdown, answer", r.Op)
	}
	return &r, nil
}

// versionError is a request of another version of the header protocol.
type versionError struct{ got int }

func (e *versionError) Error() string {
	return fmt.Sprintf("request: version %d, and this session process speaks version %d", e.got, Version)
}

func checkProviderTurn(r *Request) error {
	if !validProvider(r.Provider) {
		return fmt.Errorf("request: %q is not a provider id", r.Provider)
	}
	if !validTurn(r.Turn) {
		return fmt.Errorf("request: %q is not a turn id", r.Turn)
	}
	return nil
}

func (e *Entry) check() error {
	if len(e.Command) == 0 || e.Command[0] == "" {
		return errors.New("no command")
	}
	if math.IsNaN(e.Timeout) || e.Timeout <= 0 || e.Timeout > deploy.MaxTimeout.Seconds() {
		return fmt.Errorf("timeout %v is out of range", e.Timeout)
	}
	if e.Lifetime != LifetimeSession && e.Lifetime != LifetimeCall {
		return fmt.Errorf("%q is not a lifetime", e.Lifetime)
	}
	for _, s := range append(append([]string{e.Dir, e.Path, e.Home}, e.Command...), envStrings(e.Env)...) {
		if bytes.IndexByte([]byte(s), 0) >= 0 {
			return errors.New("a NUL byte in a string")
		}
	}
	return nil
}

func envStrings(env map[string]string) []string {
	var out []string
	for k, v := range env {
		out = append(out, k, v)
	}
	return out
}

// validProvider: 1 to 64 of a-z 0-9 - _, starting with a letter, as the
// registry's ids.
func validProvider(s string) bool {
	if len(s) < 1 || len(s) > 64 || s[0] < 'a' || s[0] > 'z' {
		return false
	}
	for i := 0; i < len(s); i++ {
		c := s[i]
		if !(c >= 'a' && c <= 'z' || c >= '0' && c <= '9' || c == '-' || c == '_') {
			return false
		}
	}
	return true
}

// validTurn: 1 to 128 of A-Z a-z 0-9 . _ -, starting with a letter or a
// digit, as the turn file's session and turn ids.
func validTurn(s string) bool {
	if len(s) < 1 || len(s) > 128 {
		return false
	}
	for i := 0; i < len(s); i++ {
		c := s[i]
		alnum := c >= 'a' && c <= 'z' || c >= 'A' && c <= 'Z' || c >= '0' && c <= '9'
		if !alnum && (i == 0 || c != '.' && c != '_' && c != '-') {
			return false
		}
	}
	return true
}

// DecodeReply reads a Reply line and checks it: ok with no error, or an
// error and not ok.
func DecodeReply(line []byte) (*Reply, error) {
	var r Reply
	if err := decodeStrict(line, &r); err != nil {
		return nil, fmt.Errorf("reply: %v", err)
	}
	if r.OK == (r.Error != nil) {
		return nil, errors.New("reply: says neither ok nor an error, or both")
	}
	if r.Pid < 0 {
		return nil, errors.New("reply: a negative pid")
	}
	if r.Error != nil && r.Error.Kind == "" {
		return nil, errors.New("reply: an error of no kind")
	}
	return &r, nil
}

// encodeLine is v as one line of JSON.
func encodeLine(v any) []byte {
	data, err := json.Marshal(v)
	if err != nil {
		data, _ = json.Marshal(Reply{Error: &Failure{Kind: KindBad, Message: err.Error()}})
	}
	return append(data, '\n')
}
