package acp

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"

	"github.com/agent-interop/runtime/internal/jsonrpc"
)

// maxLine bounds one inbound JSON-RPC line. Lines above it are dropped
// instead of closing the connection.
const maxLine = jsonrpc.DefaultMaxMessageBytes

// JSON-RPC and ACP error codes used by this package.
const (
	CodeParseError     = jsonrpc.CodeParseError
	CodeInvalidRequest = jsonrpc.CodeInvalidRequest
	CodeMethodNotFound = jsonrpc.CodeMethodNotFound
	CodeInvalidParams  = jsonrpc.CodeInvalidParams
	CodeInternalError  = jsonrpc.CodeInternalError
	CodeAuthRequired   = -32000 // ACP auth_required
	CodeNotFound       = -32002 // ACP resource_not_found
)

// RPCError is a JSON-RPC error object: either the agent's answer to one of
// our requests, or our answer to one of the agent's.
type RPCError = jsonrpc.Error

// methodNotFound builds the -32601 answer in the form ACP agents use.
func methodNotFound(method string) *RPCError {
	data, _ := json.Marshal(map[string]string{"method": method})
	return &RPCError{Code: CodeMethodNotFound, Message: fmt.Sprintf("%q: %s", "Method not found", method), Data: data}
}

// invalidParams builds a -32602 answer carrying message as data.message.
func invalidParams(message string) *RPCError {
	data, _ := json.Marshal(map[string]string{"message": message})
	return &RPCError{Code: CodeInvalidParams, Message: "Invalid params", Data: data}
}

// NotWrittenError says a request was certainly not written to the agent.
type NotWrittenError struct{ Err error }

func (e *NotWrittenError) Error() string { return "request not written: " + e.Err.Error() }
func (e *NotWrittenError) Unwrap() error { return e.Err }

// ErrConnectionClosed is returned (wrapped) when the connection ended after a
// request was written and before its answer arrived: the outcome is unknown.
var ErrConnectionClosed = errors.New("agent connection closed before the answer arrived")

// ErrNoAnswer is returned (wrapped) when the caller's context ended after the
// request was written and before its answer arrived.
var ErrNoAnswer = errors.New("stopped waiting for the agent's answer")

// Direction tells which way a traced message went.
type Direction string

// Trace directions.
const (
	ToAgent   Direction = "client->agent"
	FromAgent Direction = "agent->client"
)

// inboundHandler handles the agent's requests (id != nil) and notifications.
// Requests run on their own goroutine; notifications run in arrival order on
// the dispatch goroutine and must not block.
type inboundHandler interface {
	handleRequest(ctx context.Context, method string, params json.RawMessage) (any, *RPCError)
	handleNotification(method string, params json.RawMessage)
}

// conn is the client's JSON-RPC connection to the agent: internal/jsonrpc's
// (one ordered inbound queue, oversized lines dropped), with its errors
// mapped onto the delivery contract: *NotWrittenError, ErrNoAnswer,
// ErrConnectionClosed.
//
// A line that is not a JSON-RPC message (a banner, a usage text, an HTML
// page, a JSON log record) read before the agent's first answer goes to
// stray, once: it is how a program that is not in its ACP mode is told
// from a slow one without waiting for the handshake bound. Such lines
// after the first answer are dropped as they always were (a stray log
// line of a working agent breaks nothing; Trace still sees it).
//
// An error response whose id is null (or absent) read before the first
// answer goes to nullErr, once: JSON-RPC answers so a request it could
// not read (a parse error, an invalid request), and before the first
// answer the only request out is initialize, so the handshake fails at
// once with the agent's words instead of waiting for its bound.
type conn struct {
	rpc     *jsonrpc.Conn
	handler inboundHandler

	ctx    context.Context // cancelled when the connection ends
	cancel context.CancelFunc

	// answered and strayed are only touched on the dispatch goroutine
	// (jsonrpc.Options.Inspect), in input order.
	answered, strayed bool
}

func newConn(w io.Writer, r io.Reader, h inboundHandler, trace func(Direction, []byte), stray func(line []byte), nullErr func(*RPCError)) *conn {
	ctx, cancel := context.WithCancel(context.Background())
	c := &conn{handler: h, ctx: ctx, cancel: cancel}
	opts := jsonrpc.Options{
		Handler: c.handle, MaxMessageBytes: maxLine, DropOversize: true, Peer: "agent",
		OnClose: func(error) { cancel() },
	}
	if stray != nil || nullErr != nil {
		// Inspect runs before a response reaches its caller, so a stray
		// line read before the first answer is reported before that
		// answer is returned: the outcome does not depend on scheduling.
		opts.Inspect = func(line []byte, m *jsonrpc.Message) {
			switch {
			case c.answered || c.strayed:
			case m == nil:
				c.strayed = true
				if stray != nil {
					stray(line)
				}
			case m.Method == "" && m.Error != nil && (len(m.ID) == 0 || string(m.ID) == "null"):
				c.answered = true
				if nullErr != nil {
					nullErr(m.Error)
				}
			case m.Method == "" && (len(m.ID) > 0 || len(m.Result) > 0 || m.Error != nil):
				c.answered = true
			}
		}
	}
	if trace != nil {
		opts.Trace = func(d jsonrpc.Direction, line []byte) {
			if d == jsonrpc.Outbound {
				trace(ToAgent, line)
			} else {
				trace(FromAgent, line)
			}
		}
	}
	c.rpc = jsonrpc.New(r, w, opts)
	return c
}

// Done is closed when the connection has ended.
func (c *conn) Done() <-chan struct{} { return c.rpc.Done() }

// Err returns why the connection ended, or nil while it is open.
func (c *conn) Err() error { return c.rpc.Err() }

func (c *conn) handle(req *jsonrpc.Request) {
	if req.IsNotification() {
		c.handler.handleNotification(req.Method, req.Params)
		return
	}
	go c.serve(req)
}

func (c *conn) serve(req *jsonrpc.Request) {
	result, rerr := c.handler.handleRequest(c.ctx, req.Method, req.Params)
	var written chan error
	if a, ok := result.(ackedResult); ok {
		result, written = a.result, a.written
	}
	var err error
	if rerr == nil {
		var b []byte
		if b, err = json.Marshal(result); err != nil {
			rerr = &RPCError{Code: CodeInternalError, Message: "Internal error: " + err.Error()}
		} else {
			err = c.rpc.Reply(req.ID, json.RawMessage(b))
		}
	}
	if rerr != nil {
		err = c.rpc.ReplyError(req.ID, rerr)
	}
	if written != nil { // a dead peer needs no answer, but a waiting Respond does
		written <- writeError(err)
	}
}

// writeError maps a failed write onto NotWrittenError when nothing left.
func writeError(err error) error {
	var ce *jsonrpc.CallError
	if errors.As(err, &ce) && !ce.Sent {
		return &NotWrittenError{Err: ce.Err}
	}
	if err != nil {
		return fmt.Errorf("writing (partly written): %w", err)
	}
	return nil
}

// Call sends a request and waits for its answer. written, if not nil, runs
// right after the request was written and before the answer is awaited.
// Errors: *NotWrittenError when nothing was written; *RPCError when the agent
// answered with an error; ErrConnectionClosed or ErrNoAnswer (wrapped) when
// the request left and no answer came.
func (c *conn) Call(ctx context.Context, method string, params any, written func()) (json.RawMessage, error) {
	ex, err := c.rpc.Exchange(ctx, method, params, written)
	var ce *jsonrpc.CallError
	switch {
	case err == nil:
		return ex.Result, nil
	case !errors.As(err, &ce):
		return nil, err // the agent's *RPCError
	case !ce.Sent:
		return nil, &NotWrittenError{Err: ce.Err}
	case ctx.Err() != nil && errors.Is(ce.Err, ctx.Err()):
		return nil, fmt.Errorf("%s: %w: %w", method, ErrNoAnswer, ce.Err)
	default: // the connection ended (or broke mid-write) after the request left
		return nil, fmt.Errorf("%s: %w: %w", method, ErrConnectionClosed, ce.Err)
	}
}

// Notify sends a notification.
func (c *conn) Notify(method string, params any) error {
	return writeError(c.rpc.Notify(method, params))
}
