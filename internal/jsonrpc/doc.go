// Package jsonrpc is the runtime's one newline-delimited JSON-RPC 2.0
// layer: the line framing every stdio protocol here uses (ReadLine), the
// message codec, and a peer connection (Conn) for the client sides — the
// Codex app-server adapter, the ACP client (Claude Code, Cursor) and the
// benchmark's MCP client. internal/stdio reads the server's own input
// with the same ReadLine.
//
// A Conn is tolerant in what it accepts: a message without the "jsonrpc"
// member is fine (codex app-server never sends it), ids may be numbers or
// strings, and the two directions keep separate id spaces (a peer's
// request with id 0 never collides with a pending call 0). Options.Strict
// turns that off for a client that checks a server (the benchmark).
//
// It is exact about what it reports: a [CallError] says whether the
// request certainly never left (Sent false) or may have reached the peer
// (Sent true), so callers can record an uncertain delivery instead of
// retrying it; [Conn.Exchange] also runs a callback at the instant the
// request was written and stamps when the answer's line was read.
//
// Every inbound line goes through one ordered queue: the reader never
// waits for the handler, and a notification the peer sent before a
// response is handled before that response is delivered (a permission
// request never overtakes the tool_call update sent just before it, and a
// prompt's last chunks arrive before its stopReason). When the input
// ends, everything read before the end is dispatched before the
// connection reports that it ended.
package jsonrpc
