// Package jsonrpc is a small newline-delimited JSON-RPC 2.0 peer for the
// stdio protocols the provider adapters speak (Codex app-server).
//
// It is tolerant in what it accepts: a message without the "jsonrpc" field
// is fine (codex app-server never sends it), ids may be numbers or strings,
// and the two directions keep separate id spaces (a server request with id 0
// never collides with a pending client call 0). It is exact about what it
// reports: a [CallError] says whether the request certainly never left
// (Sent false) or may have reached the peer (Sent true), so callers can
// record an uncertain delivery instead of retrying it.
package jsonrpc

import (
	"bufio"
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"strconv"
	"strings"
	"sync"
	"sync/atomic"
)

// Standard JSON-RPC error codes.
const (
	CodeParseError     = -32700
	CodeInvalidRequest = -32600
	CodeMethodNotFound = -32601
	CodeInvalidParams  = -32602
	CodeInternalError  = -32603
)

// Error is an error object a peer answered with.
type Error struct {
	Code    int             `json:"code"`
	Message string          `json:"message"`
	Data    json.RawMessage `json:"data,omitempty"`
}

func (e *Error) Error() string {
	return fmt.Sprintf("jsonrpc error %d: %s", e.Code, e.Message)
}

// IsMethodNotSupported reports whether err is a peer's answer meaning "this
// method is not supported": -32601 always, and -32600 (codex app-server
// answers every unknown method with -32600 "Invalid request: unknown
// variant ...") when its message is the generic one or names the method as
// unknown. A -32600 about a parameter ("missing field `threadId`") is not.
func IsMethodNotSupported(err error) bool {
	var e *Error
	if !errors.As(err, &e) {
		return false
	}
	switch e.Code {
	case CodeMethodNotFound:
		return true
	case CodeInvalidRequest:
		m := strings.ToLower(strings.TrimSpace(e.Message))
		return m == "invalid request" || strings.Contains(m, "unknown variant") ||
			strings.Contains(m, "method not found") || strings.Contains(m, "unknown method") ||
			strings.Contains(m, "not supported")
	}
	return false
}

// ErrClosed is returned for calls on a closed connection.
var ErrClosed = errors.New("jsonrpc: connection closed")

// CallError is a call that did not get an answer. Sent reports whether the
// request may have reached the peer: false only when it certainly did not
// (the connection was closed before anything was written).
type CallError struct {
	Method string
	Sent   bool
	Err    error
}

func (e *CallError) Error() string {
	if e.Sent {
		return fmt.Sprintf("%s: no answer after the request was sent: %v", e.Method, e.Err)
	}
	return fmt.Sprintf("%s: not sent: %v", e.Method, e.Err)
}

func (e *CallError) Unwrap() error { return e.Err }

// WasSent reports whether err leaves open that the request reached the peer.
// A peer's error answer counts as sent; a CallError says so itself.
func WasSent(err error) bool {
	if err == nil {
		return true
	}
	var ce *CallError
	if errors.As(err, &ce) {
		return ce.Sent
	}
	return true
}

// ID is a request id as the peer sent it (a JSON number or string).
type ID = json.RawMessage

// Request is an incoming request or notification (ID is nil). Raw is the
// whole message as received (for fields outside JSON-RPC, such as codex's
// "emittedAtMs").
type Request struct {
	ID     ID
	Method string
	Params json.RawMessage
	Raw    []byte
}

// IsNotification reports whether r expects no answer.
func (r *Request) IsNotification() bool { return r.ID == nil }

// Handler receives the peer's requests and notifications, in arrival order,
// on the connection's read goroutine: it must not block for long. Answer a
// request with [Conn.Reply] or [Conn.ReplyError] (now or later).
type Handler func(req *Request)

// Options configure a Conn.
type Options struct {
	// Handler receives incoming requests and notifications. Without one,
	// requests are answered with -32601 and notifications dropped.
	Handler Handler
	// NextID allocates outgoing request ids. Share one across successive
	// connections to the same peer so a late answer to an abandoned call
	// can never match a new one. Default: a per-connection counter from 1.
	NextID func() int64
	// OmitVersion leaves the "jsonrpc":"2.0" field out of sent messages.
	OmitVersion bool
	// MaxMessageBytes bounds one incoming line (default 64 MiB).
	MaxMessageBytes int
	// OnClose is called once, with the reason, when the connection ends,
	// before calls waiting for an answer return. It must not block.
	OnClose func(err error)
}

type response struct {
	result json.RawMessage
	err    *Error
}

// Conn is one JSON-RPC connection.
type Conn struct {
	opts Options
	rwc  io.ReadWriteCloser
	ids  atomic.Int64

	wmu sync.Mutex // serializes writes

	mu      sync.Mutex
	pending map[int64]chan response
	closed  bool
	err     error
	done    chan struct{}
}

// NewConn starts reading rwc. Close it with [Conn.Close].
func NewConn(rwc io.ReadWriteCloser, opts Options) *Conn {
	if opts.MaxMessageBytes <= 0 {
		opts.MaxMessageBytes = 64 << 20
	}
	c := &Conn{opts: opts, rwc: rwc, pending: map[int64]chan response{}, done: make(chan struct{})}
	go c.readLoop()
	return c
}

// Done is closed when the connection has ended.
func (c *Conn) Done() <-chan struct{} { return c.done }

// Err returns why the connection ended (nil while open).
func (c *Conn) Err() error {
	c.mu.Lock()
	defer c.mu.Unlock()
	return c.err
}

// Close ends the connection; pending calls fail with a sent CallError.
func (c *Conn) Close() error {
	c.shutdown(ErrClosed)
	return nil
}

func (c *Conn) nextID() int64 {
	if c.opts.NextID != nil {
		return c.opts.NextID()
	}
	return c.ids.Add(1)
}

type outMessage struct {
	Version string          `json:"jsonrpc,omitempty"`
	ID      json.RawMessage `json:"id,omitempty"`
	Method  string          `json:"method,omitempty"`
	Params  any             `json:"params,omitempty"`
	Result  any             `json:"result,omitempty"`
	Error   *Error          `json:"error,omitempty"`
}

func (c *Conn) version() string {
	if c.opts.OmitVersion {
		return ""
	}
	return "2.0"
}

// write sends one message; sent reports whether any byte may have left.
func (c *Conn) write(m *outMessage) (sent bool, err error) {
	b, err := json.Marshal(m)
	if err != nil {
		return false, fmt.Errorf("encode %s: %w", m.Method, err)
	}
	b = append(b, '\n')
	c.wmu.Lock()
	defer c.wmu.Unlock()
	select {
	case <-c.done:
		return false, ErrClosed
	default:
	}
	n, err := c.rwc.Write(b)
	if err != nil {
		return n > 0, err
	}
	return true, nil
}

// Call sends a request and waits for its answer, decoding the result into
// result (when non-nil). It returns the peer's *Error, or a *CallError when
// no answer came (ctx ended, connection lost).
func (c *Conn) Call(ctx context.Context, method string, params, result any) error {
	raw, err := c.CallRaw(ctx, method, params)
	if err != nil {
		return err
	}
	if result != nil && len(raw) > 0 {
		if err := json.Unmarshal(raw, result); err != nil {
			return fmt.Errorf("decode %s result: %w", method, err)
		}
	}
	return nil
}

// CallRaw is Call returning the raw result.
func (c *Conn) CallRaw(ctx context.Context, method string, params any) (json.RawMessage, error) {
	if err := ctx.Err(); err != nil {
		return nil, &CallError{Method: method, Err: err}
	}
	id := c.nextID()
	ch := make(chan response, 1)
	c.mu.Lock()
	if c.closed {
		err := c.err
		c.mu.Unlock()
		return nil, &CallError{Method: method, Err: err}
	}
	c.pending[id] = ch
	c.mu.Unlock()
	forget := func() {
		c.mu.Lock()
		delete(c.pending, id)
		c.mu.Unlock()
	}
	if params == nil {
		params = struct{}{}
	}
	sent, err := c.write(&outMessage{Version: c.version(), ID: json.RawMessage(strconv.FormatInt(id, 10)), Method: method, Params: params})
	if err != nil {
		forget()
		return nil, &CallError{Method: method, Sent: sent, Err: err}
	}
	select {
	case r := <-ch:
		if r.err != nil {
			return nil, r.err
		}
		return r.result, nil
	case <-ctx.Done():
		forget()
		return nil, &CallError{Method: method, Sent: true, Err: ctx.Err()}
	case <-c.done:
		// The answer may have raced the close.
		select {
		case r := <-ch:
			if r.err != nil {
				return nil, r.err
			}
			return r.result, nil
		default:
		}
		forget()
		return nil, &CallError{Method: method, Sent: true, Err: c.Err()}
	}
}

// Notify sends a notification.
func (c *Conn) Notify(method string, params any) error {
	sent, err := c.write(&outMessage{Version: c.version(), Method: method, Params: params})
	if err != nil {
		return &CallError{Method: method, Sent: sent, Err: err}
	}
	return nil
}

// Reply answers an incoming request with a result.
func (c *Conn) Reply(id ID, result any) error {
	if result == nil {
		result = struct{}{}
	}
	sent, err := c.write(&outMessage{Version: c.version(), ID: id, Result: result})
	if err != nil {
		return &CallError{Method: "reply " + string(id), Sent: sent, Err: err}
	}
	return nil
}

// ReplyError answers an incoming request with an error.
func (c *Conn) ReplyError(id ID, e *Error) error {
	sent, err := c.write(&outMessage{Version: c.version(), ID: id, Error: e})
	if err != nil {
		return &CallError{Method: "reply " + string(id), Sent: sent, Err: err}
	}
	return nil
}

type inMessage struct {
	ID     json.RawMessage `json:"id"`
	Method string          `json:"method"`
	Params json.RawMessage `json:"params"`
	Result json.RawMessage `json:"result"`
	Error  *Error          `json:"error"`
}

func (c *Conn) readLoop() {
	r := bufio.NewReaderSize(c.rwc, 64<<10)
	var line []byte
	for {
		chunk, err := r.ReadSlice('\n')
		line = append(line, chunk...)
		if errors.Is(err, bufio.ErrBufferFull) {
			if len(line) > c.opts.MaxMessageBytes {
				c.shutdown(fmt.Errorf("jsonrpc: incoming message larger than %d bytes", c.opts.MaxMessageBytes))
				return
			}
			continue
		}
		if len(bytes.TrimSpace(line)) > 0 {
			c.dispatch(line)
		}
		line = line[:0]
		if err != nil {
			if errors.Is(err, io.EOF) {
				err = io.ErrUnexpectedEOF
			}
			c.shutdown(fmt.Errorf("jsonrpc: connection lost: %w", err))
			return
		}
	}
}

func (c *Conn) dispatch(line []byte) {
	var m inMessage
	if err := json.Unmarshal(line, &m); err != nil {
		// A line that is not JSON (a stray log line) is ignored.
		return
	}
	hasID := len(m.ID) > 0 && !bytes.Equal(m.ID, []byte("null"))
	switch {
	case m.Method != "":
		req := &Request{Method: m.Method, Params: m.Params, Raw: append([]byte(nil), line...)}
		if hasID {
			req.ID = append(json.RawMessage(nil), m.ID...)
		}
		if c.opts.Handler != nil {
			c.opts.Handler(req)
		} else if hasID {
			_ = c.ReplyError(req.ID, &Error{Code: CodeMethodNotFound, Message: "Method not found: " + m.Method})
		}
	case hasID:
		id, err := strconv.ParseInt(string(bytes.Trim(m.ID, `"`)), 10, 64)
		if err != nil {
			return
		}
		c.mu.Lock()
		ch, ok := c.pending[id]
		delete(c.pending, id)
		c.mu.Unlock()
		if !ok {
			return // an answer to an abandoned call
		}
		if m.Error != nil {
			ch <- response{err: m.Error}
		} else {
			ch <- response{result: m.Result}
		}
	}
}

func (c *Conn) shutdown(reason error) {
	c.mu.Lock()
	if c.closed {
		c.mu.Unlock()
		return
	}
	c.closed = true
	c.err = reason
	c.pending = map[int64]chan response{}
	c.mu.Unlock()
	// OnClose runs before pending calls are released, so it sees them
	// still in flight.
	if c.opts.OnClose != nil {
		c.opts.OnClose(reason)
	}
	close(c.done)
	_ = c.rwc.Close()
}
