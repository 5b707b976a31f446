package bench

import (
	"context"
	"errors"
	"fmt"
	"io"

	"github.com/agent-interop/runtime/internal/jsonrpc"
)

// MaxLineBytes bounds one JSON-RPC line read from a server.
const MaxLineBytes = 16 << 20

// ErrTimeout is returned when no answer arrives before the context's
// deadline.
var ErrTimeout = errors.New("timed out waiting for the answer")

// Exchange is one request and its answer, with when the request was
// written and when the answer's line was read.
type Exchange = jsonrpc.Exchange

// RPCError is a JSON-RPC error answer.
type RPCError = jsonrpc.Error

// Conn is the benchmark's client end of a server's stdio: internal/jsonrpc
// in strict mode (anything on the server's stdout that is not a JSON-RPC
// 2.0 line is an error), the server's own requests ignored, every line
// stamped when it was read so a latency does not include the time the
// caller takes to look at it.
type Conn struct{ rpc *jsonrpc.Conn }

// NewConn starts reading r (the server's stdout) and writing w (its
// stdin). Close stops it without closing either.
func NewConn(w io.Writer, r io.Reader) *Conn {
	return &Conn{rpc: jsonrpc.New(r, w, jsonrpc.Options{
		Strict: true, Peer: "the server", MaxMessageBytes: MaxLineBytes,
		Handler: func(*jsonrpc.Request) {}, // the server's requests and notifications are not measured
	})}
}

// Close ends the connection.
func (c *Conn) Close() { _ = c.rpc.Close() }

// Notify sends a notification.
func (c *Conn) Notify(method string, params any) error {
	if err := c.rpc.Notify(method, params); err != nil {
		return fmt.Errorf("send %s: %w", method, err)
	}
	return nil
}

// Call sends a request and waits for its answer until ctx ends. A JSON-RPC
// error answer is returned as an *RPCError, a passed deadline as
// ErrTimeout.
func (c *Conn) Call(ctx context.Context, method string, params any) (Exchange, error) {
	ex, err := c.rpc.Exchange(ctx, method, params, nil)
	var ce *jsonrpc.CallError
	switch {
	case err == nil:
		return ex, nil
	case errors.As(err, &ce) && errors.Is(ce.Err, context.DeadlineExceeded):
		return ex, fmt.Errorf("%s: %w", method, ErrTimeout)
	case errors.As(err, &ce) && ce.Err != nil:
		return ex, fmt.Errorf("%s: %w", method, ce.Err)
	}
	return ex, fmt.Errorf("%s: %w", method, err)
}

// Drain discards the server's output until it ends (nil) or ctx ends.
func (c *Conn) Drain(ctx context.Context) error {
	select {
	case <-c.rpc.Done():
		return nil
	case <-ctx.Done():
		if errors.Is(ctx.Err(), context.DeadlineExceeded) {
			return ErrTimeout
		}
		return ctx.Err()
	}
}

func truncate(b []byte, n int) string {
	if len(b) <= n {
		return string(b)
	}
	return string(b[:n]) + "…"
}
