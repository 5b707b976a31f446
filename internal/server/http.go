package server

import (
	"net/http"

	"github.com/modelcontextprotocol/go-sdk/mcp"
)

// StreamableHTTPHandler returns the SDK's Streamable HTTP handler over
// this one server: every HTTP session it opens shares the server's
// handlers, and so the App (store, provider registry and processes, event
// subscriptions) behind them. The caller puts its own guard in front
// (internal/httpserve).
func (s *Server) StreamableHTTPHandler(opts *mcp.StreamableHTTPOptions) http.Handler {
	return mcp.NewStreamableHTTPHandler(func(*http.Request) *mcp.Server { return s.mcp }, opts)
}
