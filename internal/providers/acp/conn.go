package acp

import (
	"bufio"
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"strconv"
	"sync"
)

// maxLine bounds one inbound JSON-RPC line. Lines above it are dropped (and
// reported through the connection's trace) instead of closing the connection.
const maxLine = 64 << 20

// JSON-RPC and ACP error codes used by this package.
const (
	CodeParseError     = -32700
	CodeInvalidRequest = -32600
	CodeMethodNotFound = -32601
	CodeInvalidParams  = -32602
	CodeInternalError  = -32603
	CodeAuthRequired   = -32000 // ACP auth_required
	CodeNotFound       = -32002 // ACP resource_not_found
)

// RPCError is a JSON-RPC error object: either the agent's answer to one of
// our requests, or our answer to one of the agent's.
type RPCError struct {
	Code    int             `json:"code"`
	Message string          `json:"message"`
	Data    json.RawMessage `json:"data,omitempty"`
}

func (e *RPCError) Error() string {
	if len(e.Data) > 0 && string(e.Data) != "null" {
		return fmt.Sprintf("%s (code %d, data %s)", e.Message, e.Code, e.Data)
	}
	return fmt.Sprintf("%s (code %d)", e.Message, e.Code)
}

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

// wireMessage is any JSON-RPC message. The "jsonrpc" member is not required
// on input.
type wireMessage struct {
	JSONRPC string           `json:"jsonrpc,omitempty"`
	ID      *json.RawMessage `json:"id,omitempty"`
	Method  string           `json:"method,omitempty"`
	Params  json.RawMessage  `json:"params,omitempty"`
	Result  json.RawMessage  `json:"result,omitempty"`
	Error   *RPCError        `json:"error,omitempty"`
}

// inboundHandler handles the agent's requests (id != nil) and notifications.
// Requests run on their own goroutine; notifications run in arrival order on
// the dispatch goroutine and must not block.
type inboundHandler interface {
	handleRequest(ctx context.Context, method string, params json.RawMessage) (any, *RPCError)
	handleNotification(method string, params json.RawMessage)
}

type answer struct {
	result json.RawMessage
	err    *RPCError
}

// conn is a newline-delimited JSON-RPC 2.0 connection. Every inbound message
// goes through one ordered dispatch queue, so a notification sent before a
// request or a response is handled before it (a permission request never
// overtakes the tool_call update sent just before it, and a prompt's last
// chunks are delivered before its stopReason).
type conn struct {
	w       io.Writer
	handler inboundHandler
	trace   func(Direction, []byte)

	writeMu sync.Mutex

	mu      sync.Mutex
	nextID  int64
	pending map[string]chan answer
	closed  bool
	cause   error
	done    chan struct{}

	qmu     sync.Mutex
	qcond   *sync.Cond
	queue   []*wireMessage
	eof     bool
	readErr error

	ctx    context.Context // cancelled when the connection ends
	cancel context.CancelFunc
}

func newConn(w io.Writer, r io.Reader, h inboundHandler, trace func(Direction, []byte)) *conn {
	ctx, cancel := context.WithCancel(context.Background())
	c := &conn{
		w:       w,
		handler: h,
		trace:   trace,
		pending: make(map[string]chan answer),
		done:    make(chan struct{}),
		ctx:     ctx,
		cancel:  cancel,
	}
	c.qcond = sync.NewCond(&c.qmu)
	go c.read(r)
	go c.dispatch()
	return c
}

// Done is closed when the connection has ended.
func (c *conn) Done() <-chan struct{} { return c.done }

// Err returns why the connection ended, or nil while it is open.
func (c *conn) Err() error {
	c.mu.Lock()
	defer c.mu.Unlock()
	return c.cause
}

func (c *conn) read(r io.Reader) {
	br := bufio.NewReaderSize(r, 1<<20)
	var cause error
	for {
		line, err := readLine(br)
		if len(bytes.TrimSpace(line)) > 0 {
			c.accept(line)
		}
		if err != nil {
			if errors.Is(err, io.EOF) {
				cause = errors.New("agent closed its output")
			} else {
				cause = fmt.Errorf("reading agent output: %w", err)
			}
			break
		}
	}
	c.qmu.Lock()
	c.eof = true
	c.readErr = cause
	c.qcond.Broadcast()
	c.qmu.Unlock()
}

// readLine reads one line; lines longer than maxLine are skipped whole.
func readLine(br *bufio.Reader) ([]byte, error) {
	var buf []byte
	tooLong := false
	for {
		chunk, err := br.ReadSlice('\n')
		if !tooLong {
			if len(buf)+len(chunk) > maxLine {
				tooLong, buf = true, nil
			} else {
				buf = append(buf, chunk...)
			}
		}
		if errors.Is(err, bufio.ErrBufferFull) {
			continue
		}
		if tooLong {
			return nil, err
		}
		return buf, err
	}
}

func (c *conn) accept(line []byte) {
	if c.trace != nil {
		c.trace(FromAgent, bytes.TrimSpace(line))
	}
	var m wireMessage
	if err := json.Unmarshal(line, &m); err != nil {
		return // not JSON-RPC (a stray log line); nothing to answer
	}
	c.qmu.Lock()
	c.queue = append(c.queue, &m)
	c.qcond.Signal()
	c.qmu.Unlock()
}

func (c *conn) dispatch() {
	for {
		c.qmu.Lock()
		for len(c.queue) == 0 && !c.eof {
			c.qcond.Wait()
		}
		if len(c.queue) == 0 {
			cause := c.readErr
			c.qmu.Unlock()
			// Every message read before the end has been dispatched.
			c.shutdown(cause)
			return
		}
		m := c.queue[0]
		c.queue[0] = nil
		c.queue = c.queue[1:]
		c.qmu.Unlock()

		switch {
		case m.Method == "" && m.ID != nil:
			c.deliver(m)
		case m.Method != "" && m.ID != nil:
			go c.serve(m)
		case m.Method != "":
			c.handler.handleNotification(m.Method, m.Params)
		}
	}
}

func (c *conn) deliver(m *wireMessage) {
	key := idKey(*m.ID)
	c.mu.Lock()
	ch := c.pending[key]
	delete(c.pending, key)
	c.mu.Unlock()
	if ch != nil {
		ch <- answer{result: m.Result, err: m.Error}
	}
}

func (c *conn) serve(m *wireMessage) {
	result, rerr := c.handler.handleRequest(c.ctx, m.Method, m.Params)
	var written chan error
	if a, ok := result.(ackedResult); ok {
		result, written = a.result, a.written
	}
	reply := wireMessage{JSONRPC: "2.0", ID: m.ID}
	if rerr != nil {
		reply.Error = rerr
	} else {
		b, err := json.Marshal(result)
		if err != nil {
			reply.Error = &RPCError{Code: CodeInternalError, Message: "Internal error: " + err.Error()}
		} else {
			reply.Result = b
		}
	}
	err := c.write(&reply) // a dead peer needs no answer
	if written != nil {
		written <- err
	}
}

// idKey canonicalises a JSON-RPC id: numbers by value, strings as quoted.
func idKey(raw json.RawMessage) string {
	raw = bytes.TrimSpace(raw)
	if n, err := strconv.ParseFloat(string(raw), 64); err == nil {
		return strconv.FormatFloat(n, 'g', -1, 64)
	}
	return string(raw)
}

func (c *conn) write(m *wireMessage) error {
	m.JSONRPC = "2.0"
	b, err := json.Marshal(m)
	if err != nil {
		return &NotWrittenError{Err: fmt.Errorf("encoding %s: %w", m.Method, err)}
	}
	c.mu.Lock()
	closed, cause := c.closed, c.cause
	c.mu.Unlock()
	if closed {
		return &NotWrittenError{Err: fmt.Errorf("connection closed: %w", cause)}
	}
	c.writeMu.Lock()
	defer c.writeMu.Unlock()
	if c.trace != nil {
		c.trace(ToAgent, b)
	}
	n, err := c.w.Write(append(b, '\n'))
	if err != nil {
		if n == 0 {
			return &NotWrittenError{Err: fmt.Errorf("writing %s: %w", m.Method, err)}
		}
		return fmt.Errorf("writing %s (partly written): %w", m.Method, err)
	}
	return nil
}

// Call sends a request and waits for its answer. written, if not nil, runs
// right after the request was written and before the answer is awaited.
// Errors: *NotWrittenError when nothing was written; *RPCError when the agent
// answered with an error; ErrConnectionClosed or ErrNoAnswer (wrapped) when
// the request left and no answer came.
func (c *conn) Call(ctx context.Context, method string, params any, written func()) (json.RawMessage, error) {
	if err := ctx.Err(); err != nil {
		return nil, &NotWrittenError{Err: err}
	}
	var raw json.RawMessage
	if params != nil {
		b, err := json.Marshal(params)
		if err != nil {
			return nil, &NotWrittenError{Err: fmt.Errorf("encoding %s params: %w", method, err)}
		}
		raw = b
	}
	ch := make(chan answer, 1)
	c.mu.Lock()
	if c.closed {
		cause := c.cause
		c.mu.Unlock()
		return nil, &NotWrittenError{Err: fmt.Errorf("connection closed: %w", cause)}
	}
	c.nextID++
	id := json.RawMessage(strconv.FormatInt(c.nextID, 10))
	key := idKey(id)
	c.pending[key] = ch
	c.mu.Unlock()

	if err := c.write(&wireMessage{ID: &id, Method: method, Params: raw}); err != nil {
		c.mu.Lock()
		delete(c.pending, key)
		c.mu.Unlock()
		return nil, err
	}
	if written != nil {
		written()
	}
	select {
	case a := <-ch:
		if a.err != nil {
			return nil, a.err
		}
		return a.result, nil
	case <-ctx.Done():
		c.mu.Lock()
		delete(c.pending, key)
		c.mu.Unlock()
		return nil, fmt.Errorf("%s: %w: %w", method, ErrNoAnswer, ctx.Err())
	case <-c.done:
		// An answer may have been delivered just before the close.
		select {
		case a := <-ch:
			if a.err != nil {
				return nil, a.err
			}
			return a.result, nil
		default:
		}
		return nil, fmt.Errorf("%s: %w: %w", method, ErrConnectionClosed, c.Err())
	}
}

// Notify sends a notification.
func (c *conn) Notify(method string, params any) error {
	var raw json.RawMessage
	if params != nil {
		b, err := json.Marshal(params)
		if err != nil {
			return &NotWrittenError{Err: fmt.Errorf("encoding %s params: %w", method, err)}
		}
		raw = b
	}
	return c.write(&wireMessage{Method: method, Params: raw})
}

// shutdown marks the connection closed and fails every waiting call.
func (c *conn) shutdown(cause error) {
	c.mu.Lock()
	if c.closed {
		c.mu.Unlock()
		return
	}
	c.closed = true
	c.cause = cause
	c.mu.Unlock()
	c.cancel()
	close(c.done)
}
