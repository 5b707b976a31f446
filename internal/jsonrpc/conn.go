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
	"sync"
	"sync/atomic"
	"time"

	"github.com/coder/quartz"
)

// DefaultMaxMessageBytes bounds one incoming line unless Options say
// otherwise.
const DefaultMaxMessageBytes = 64 << 20

// Handler receives the peer's requests and notifications, in arrival order,
// on the connection's dispatch goroutine: it must not block for long (a
// request that takes time is served on a goroutine of its own). Answer a
// request with [Conn.Reply] or [Conn.ReplyError], now or later.
type Handler func(req *Request)

// Direction tells which way a traced line went.
type Direction string

// Trace directions.
const (
	Outbound Direction = "out" // a line this end wrote
	Inbound  Direction = "in"  // a line the peer wrote
)

// Options configure a Conn.
type Options struct {
	// Handler receives incoming requests and notifications. Without one,
	// requests are answered with -32601 and notifications dropped.
	Handler Handler
	// NextID allocates outgoing request ids. Share one across successive
	// connections to the same peer so a late answer to an abandoned call
	// can never match a new one. Default: a per-connection counter from 1.
	NextID func() int64
	// OmitVersion leaves the "jsonrpc":"2.0" member out of sent messages.
	OmitVersion bool
	// MaxMessageBytes bounds one incoming line (default 64 MiB). A longer
	// line ends the connection, or with DropOversize is skipped.
	MaxMessageBytes int
	// DropOversize skips a line over MaxMessageBytes instead of ending the
	// connection.
	DropOversize bool
	// Strict ends the connection, with an error naming the line, on a line
	// that is not a JSON-RPC 2.0 message (without it such a line, a stray
	// log line say, is ignored) and on input that ends inside a line.
	Strict bool
	// Peer names the far end in the reason the connection ended ("agent":
	// "agent closed its output"). Default: "jsonrpc: connection lost: ...".
	Peer string
	// Trace, when set, sees every line written (before it is written) and
	// every line read (before it is dispatched), without its newline.
	Trace func(Direction, []byte)
	// Inspect, when set, sees every inbound line on the dispatch goroutine,
	// in input order, just before it is handled: m is the line decoded, or
	// nil when the line is not a JSON-RPC message (not a JSON object, or
	// one with none of jsonrpc, method, id, result and error), which is
	// then dropped (or, with Strict, ends the connection). A response is
	// delivered to its caller only after Inspect returned. It must not
	// block.
	Inspect func(line []byte, m *Message)
	// OnClose is called once, with the reason, when the connection ends,
	// before calls waiting for an answer return. It must not block.
	OnClose func(err error)
	// Clock stamps when requests were written and answers read (default
	// the wall clock).
	Clock quartz.Clock
}

// Exchange is one request and its answer.
type Exchange struct {
	Result json.RawMessage // the result of a successful answer
	Sent   time.Time       // just before the request was written
	Recv   time.Time       // when the answer's line was read
}

// Latency is the time from writing the request to reading its answer.
func (e Exchange) Latency() time.Duration { return e.Recv.Sub(e.Sent) }

type response struct {
	result json.RawMessage
	err    *Error
	at     time.Time
}

// line is one inbound line, stamped when it was read.
type line struct {
	data []byte
	at   time.Time
}

// Conn is one JSON-RPC connection.
type Conn struct {
	opts   Options
	w      io.Writer
	closer io.Closer // closed when the connection ends; may be nil
	ids    atomic.Int64

	wmu sync.Mutex // serializes writes, so lines never interleave

	mu      sync.Mutex
	pending map[string]chan response
	closed  bool
	err     error
	done    chan struct{}

	qmu     sync.Mutex
	qcond   *sync.Cond
	queue   []line
	eof     bool
	readErr error
}

// NewConn starts a connection over rwc, which it closes when the
// connection ends. Close it with [Conn.Close].
func NewConn(rwc io.ReadWriteCloser, opts Options) *Conn {
	return start(rwc, rwc, rwc, opts)
}

// New starts a connection that reads r and writes w; it closes neither
// (the caller owns them, e.g. a child process's pipes).
func New(r io.Reader, w io.Writer, opts Options) *Conn {
	return start(r, w, nil, opts)
}

func start(r io.Reader, w io.Writer, closer io.Closer, opts Options) *Conn {
	if opts.MaxMessageBytes <= 0 {
		opts.MaxMessageBytes = DefaultMaxMessageBytes
	}
	if opts.Clock == nil {
		opts.Clock = quartz.NewReal()
	}
	c := &Conn{opts: opts, w: w, closer: closer, pending: map[string]chan response{}, done: make(chan struct{})}
	c.qcond = sync.NewCond(&c.qmu)
	go c.read(r)
	go c.dispatchLoop()
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

func (c *Conn) version() string {
	if c.opts.OmitVersion {
		return ""
	}
	return "2.0"
}

// read queues the input's lines until it ends or breaks a rule.
func (c *Conn) read(r io.Reader) {
	br := bufio.NewReaderSize(r, 64<<10)
	for {
		data, tooLong, err := ReadLine(br, c.opts.MaxMessageBytes)
		switch {
		case tooLong && !c.opts.DropOversize:
			c.endInput(fmt.Errorf("jsonrpc: incoming message larger than %d bytes", c.opts.MaxMessageBytes))
			return
		case tooLong:
		case err != nil && c.opts.Strict && len(bytes.TrimSpace(data)) > 0:
			c.endInput(fmt.Errorf("%s output ended inside a line: %q", c.peer(), truncate(data, 200)))
			return
		case len(bytes.TrimSpace(data)) > 0:
			at := c.opts.Clock.Now()
			if c.opts.Trace != nil {
				c.opts.Trace(Inbound, bytes.TrimSpace(data))
			}
			c.qmu.Lock()
			c.queue = append(c.queue, line{data: data, at: at})
			c.qcond.Signal()
			c.qmu.Unlock()
		}
		if err != nil {
			c.endInput(c.lost(err))
			return
		}
	}
}

func (c *Conn) peer() string {
	if c.opts.Peer == "" {
		return "the peer's"
	}
	return c.opts.Peer + "'s"
}

// lost words why the input ended.
func (c *Conn) lost(err error) error {
	switch {
	case c.opts.Peer != "" && errors.Is(err, io.EOF):
		return errors.New(c.opts.Peer + " closed its output")
	case c.opts.Peer != "":
		return fmt.Errorf("reading %s output: %w", c.opts.Peer, err)
	case errors.Is(err, io.EOF):
		err = io.ErrUnexpectedEOF
	}
	return fmt.Errorf("jsonrpc: connection lost: %w", err)
}

// endInput marks the end of the input; the dispatcher ends the connection
// once every line read before it has been dispatched.
func (c *Conn) endInput(cause error) {
	c.qmu.Lock()
	c.eof, c.readErr = true, cause
	c.qcond.Broadcast()
	c.qmu.Unlock()
}

func (c *Conn) dispatchLoop() {
	for {
		c.qmu.Lock()
		for len(c.queue) == 0 && !c.eof {
			c.qcond.Wait()
		}
		if len(c.queue) == 0 {
			cause := c.readErr
			c.qmu.Unlock()
			c.shutdown(cause)
			return
		}
		l := c.queue[0]
		c.queue[0] = line{}
		c.queue = c.queue[1:]
		c.qmu.Unlock()
		select {
		case <-c.done: // closed: what is still queued has nobody to go to
		default:
			c.dispatch(l)
		}
	}
}

func (c *Conn) dispatch(l line) {
	var m Message
	err := json.Unmarshal(l.data, &m)
	if c.opts.Inspect != nil {
		if err == nil && m.isFrame() {
			c.opts.Inspect(l.data, &m)
		} else {
			c.opts.Inspect(l.data, nil)
		}
	}
	if err != nil || (c.opts.Strict && m.JSONRPC != "2.0") {
		if c.opts.Strict {
			_, derr := DecodeMessage(l.data)
			c.shutdown(derr)
		}
		return // not JSON-RPC (a stray log line); nothing to answer
	}
	switch {
	case m.Method != "":
		req := &Request{Method: m.Method, Params: m.Params, Raw: l.data}
		if m.hasID() {
			req.ID = m.ID
		}
		if c.opts.Handler != nil {
			c.opts.Handler(req)
		} else if req.ID != nil {
			_ = c.ReplyError(req.ID, &Error{Code: CodeMethodNotFound, Message: "Method not found: " + m.Method})
		}
	case m.hasID():
		key := idKey(m.ID)
		c.mu.Lock()
		ch, ok := c.pending[key]
		delete(c.pending, key)
		c.mu.Unlock()
		if ok { // else an answer to an abandoned call
			ch <- response{result: m.Result, err: m.Error, at: l.at}
		}
	}
}

// write sends one message; sent reports whether any byte may have left.
func (c *Conn) write(m *outMessage) (sent bool, err error) {
	b, err := json.Marshal(m)
	if err != nil {
		return false, fmt.Errorf("encode %s: %w", m.Method, err)
	}
	c.wmu.Lock()
	defer c.wmu.Unlock()
	select {
	case <-c.done:
		return false, c.closedErr()
	default:
	}
	if c.opts.Trace != nil {
		c.opts.Trace(Outbound, b)
	}
	n, err := c.w.Write(append(b, '\n'))
	if err != nil {
		return n > 0, err
	}
	return true, nil
}

func (c *Conn) closedErr() error {
	if err := c.Err(); err != nil {
		return fmt.Errorf("connection closed: %w", err)
	}
	return ErrClosed
}

// Call sends a request and waits for its answer, decoding the result into
// result (when non-nil). It returns the peer's *Error, or a *CallError when
// no answer came (ctx ended, connection lost). nil params are left out.
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
	ex, err := c.Exchange(ctx, method, params, nil)
	return ex.Result, err
}

// Exchange is CallRaw with the instants: written, when not nil, runs right
// after the request was written and before the answer is awaited (a
// caller records a delivery there); the Exchange says when the request
// was written and when its answer was read.
func (c *Conn) Exchange(ctx context.Context, method string, params any, written func()) (Exchange, error) {
	if err := ctx.Err(); err != nil {
		return Exchange{}, &CallError{Method: method, Err: err}
	}
	id := c.nextID()
	raw := json.RawMessage(strconv.FormatInt(id, 10))
	key := idKey(raw)
	ch := make(chan response, 1)
	c.mu.Lock()
	if c.closed {
		err := c.err
		c.mu.Unlock()
		return Exchange{}, &CallError{Method: method, Err: fmt.Errorf("connection closed: %w", err)}
	}
	c.pending[key] = ch
	c.mu.Unlock()
	forget := func() {
		c.mu.Lock()
		delete(c.pending, key)
		c.mu.Unlock()
	}
	ex := Exchange{Sent: c.opts.Clock.Now()}
	sent, err := c.write(&outMessage{Version: c.version(), ID: raw, Method: method, Params: params})
	if err != nil {
		forget()
		return ex, &CallError{Method: method, Sent: sent, Err: err}
	}
	if written != nil {
		written()
	}
	answer := func(r response) (Exchange, error) {
		ex.Recv = r.at
		if r.err != nil {
			return ex, r.err
		}
		ex.Result = r.result
		return ex, nil
	}
	select {
	case r := <-ch:
		return answer(r)
	case <-ctx.Done():
		forget()
		return ex, &CallError{Method: method, Sent: true, Err: ctx.Err()}
	case <-c.done:
		// The answer may have raced the close.
		select {
		case r := <-ch:
			return answer(r)
		default:
		}
		forget()
		return ex, &CallError{Method: method, Sent: true, Err: c.Err()}
	}
}

// Notify sends a notification. nil params are left out.
func (c *Conn) Notify(method string, params any) error {
	sent, err := c.write(&outMessage{Version: c.version(), Method: method, Params: params})
	if err != nil {
		return &CallError{Method: method, Sent: sent, Err: err}
	}
	return nil
}

// Reply answers an incoming request with a result (nil is sent as {}; a
// json.RawMessage is sent as it is).
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

// shutdown ends the connection once, with reason.
func (c *Conn) shutdown(reason error) {
	c.mu.Lock()
	if c.closed {
		c.mu.Unlock()
		return
	}
	c.closed = true
	c.err = reason
	c.mu.Unlock()
	// OnClose runs before pending calls are released, so it sees them
	// still in flight.
	if c.opts.OnClose != nil {
		c.opts.OnClose(reason)
	}
	close(c.done)
	if c.closer != nil {
		_ = c.closer.Close()
	}
}
