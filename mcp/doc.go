// Package mcp is a client for the tools part of the Model Context Protocol,
// version 2025-06-18, over the stdio transport or any other connection.
//
// Start starts a server as a child process in its own process group, with
// an environment made of PATH, HOME and the variables the caller names, and
// speaks to it over its stdin and stdout; NewClient speaks over a
// connection the caller already has, such as one end of an io.Pipe; and
// StartProcess starts a server the same way with no client, for a caller
// that relays its messages rather than making requests. Either
// way the client speaks newline-delimited JSON-RPC 2.0: initialize,
// tools/list (following its pagination) and tools/call. Every request has
// a deadline; a server that misbehaves is answered with a typed error,
// never a panic, a hang or unbounded memory. Lines that are not JSON at
// all, such as a banner, are skipped and counted, up to a bound
// (SkippedLines); a line that is JSON but not JSON-RPC is a protocol
// error. Close stops the server and every process it started, in whatever
// process group or session, or closes the connection: a started server
// runs under a reaper of its own (procs.StartTree) that keeps its whole
// process tree within reach.
package mcp
