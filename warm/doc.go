// Package warm keeps providers' servers running for a session and relays
// their messages.
//
// Each session has at most one host: a process of its own, started by the
// first gateway that needs it (a re-execution of the running binary, whose
// main hands HostArg to HostMain), detached from the terminal, holding the
// session's lock and serving a unix socket in the session's state
// directory (SPEAR_STATE_DIR/sessions/<session>/host.sock, mode 0700). It
// answers only processes of the same user in the same mount namespace.
//
// A connection begins with one Request line and one Reply line. After an
// open that succeeded it carries the server's MCP JSON-RPC lines: the host
// answers initialize from the answer the server gave its own initialize,
// swallows notifications/initialized, and relays everything else under ids
// of its own, restoring each caller's id on the way back, so that many
// callers share one server. A session server is reused only for the very
// registry entry it was started from; a call server serves one connection
// and stops after it. Servers stop when idle, on shutdown, on failure, or
// (a changed entry) once their callers are done; every stop closes stdin,
// then sends SIGTERM, then SIGKILL to the server's whole process tree, and
// is recorded in the audit trail with why.
//
// The host holds no policy of its own: admission, schemas, write policy,
// framing and the audit of calls stay in the gateway, on the other end of
// the socket for an open, or, for an answer (hostwire.OpAnswer, from
// spear-term's quick entry point), in a gateway the host runs for that one
// invocation, configured from the invoking process's environment alone
// (Host.Answer). A command that would ask a person for confirmation is
// handed back to the invoking process untouched.
package warm
