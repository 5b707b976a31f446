// Package httpserve serves the runtime's MCP server over Streamable HTTP
// (interop-runtime serve --http, or serve-http) under 0.3.x's rules
// (upstream-0.3 §4.13): loopback by default, a bearer token on every /mcp
// request, an Origin allow-list plus the server's own origin, a rate limit
// per MCP session (every local client shares 127.0.0.1, so 0.3.x's
// per-address limit let one client lock out the others), a 2,000,000-byte
// body limit, GET /healthz, stateful sessions (any session id that is not
// live gets 404, also after a restart), and idle sessions closed after 30
// minutes. Every HTTP session is served
// by the same MCP server, so by one App: one store, one provider registry
// (one set of provider processes) and one set of event subscriptions.
//
// The request guard itself (Host, Origin, token, body, the token buckets)
// is package httpguard; this package adds the routes, the session table and
// the choice of bucket for each request, and
// forwards each admitted request to the go-sdk Streamable HTTP handler.
package httpserve
