// Package httpserve serves the runtime's MCP server over Streamable HTTP
// (interop-runtime serve --http, or serve-http) under 0.3.x's rules
// (upstream-0.3 §4.13): loopback by default, a bearer token on every /mcp
// request, an Origin allow-list, a per-address rate limit, a 2,000,000-byte
// body limit, GET /healthz, stateful sessions with 0.3.x's error answers,
// and idle sessions closed after 30 minutes. Every HTTP session is served
// by the same MCP server, so by one App: one store, one provider registry
// (one set of provider processes) and one set of event subscriptions.
//
// The request guard itself (Host, Origin, rate, token, body) is package
// httpguard; this package adds the routes and the session table, and
// forwards each admitted request to the go-sdk Streamable HTTP handler.
package httpserve
