package bench

import (
	"bufio"
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"strconv"
	"time"
)

// MaxLineBytes bounds one JSON-RPC line read from a server.
const MaxLineBytes = 16 << 20

// ErrTimeout is returned when no answer arrives before the context's
// deadline.
var ErrTimeout = errors.New("timed out waiting for the answer")

// Message is one JSON-RPC 2.0 message as read from a server: a response
// (ID with Result or Error) or, when Method is set, a notification or a
// request from the server.
type Message struct {
	JSONRPC string          `json:"jsonrpc"`
	ID      json.RawMessage `json:"id,omitempty"`
	Method  string          `json:"method,omitempty"`
	Result  json.RawMessage `json:"result,omitempty"`
	Error   *RPCError       `json:"error,omitempty"`
}

// RPCError is a JSON-RPC error object.
type RPCError struct {
	Code    int64           `json:"code"`
	Message string          `json:"message"`
	Data    json.RawMessage `json:"data,omitempty"`
}

func (e *RPCError) Error() string { return fmt.Sprintf("JSON-RPC error %d: %s", e.Code, e.Message) }

// EncodeRequest frames a request (id ≥ 0) or, for id < 0, a notification as
// one newline-terminated line of compact JSON, as the stdio transport
// expects. params may be nil.
func EncodeRequest(id int64, method string, params any) ([]byte, error) {
	type request struct {
		JSONRPC string `json:"jsonrpc"`
		ID      *int64 `json:"id,omitempty"`
		Method  string `json:"method"`
		Params  any    `json:"params,omitempty"`
	}
	r := request{JSONRPC: "2.0", Method: method, Params: params}
	if id >= 0 {
		r.ID = &id
	}
	b, err := json.Marshal(r)
	if err != nil {
		return nil, fmt.Errorf("encode %s: %w", method, err)
	}
	// json.Marshal never emits a raw newline (it escapes them inside
	// strings), so one message is exactly one line.
	return append(b, '\n'), nil
}

// DecodeMessage parses one line read from a server.
func DecodeMessage(line []byte) (*Message, error) {
	var m Message
	if err := json.Unmarshal(line, &m); err != nil {
		return nil, fmt.Errorf("not a JSON-RPC message: %w (line %q)", err, truncate(line, 200))
	}
	if m.JSONRPC != "2.0" {
		return nil, fmt.Errorf("not a JSON-RPC 2.0 message (line %q)", truncate(line, 200))
	}
	return &m, nil
}

// IsResponseTo reports whether m answers the request with this id.
func (m *Message) IsResponseTo(id int64) bool {
	if m.Method != "" || len(m.ID) == 0 {
		return false
	}
	n, err := strconv.ParseInt(string(bytes.TrimSpace(m.ID)), 10, 64)
	return err == nil && n == id
}

// line is one line read from the server, stamped when it was read.
type line struct {
	data []byte
	at   time.Time
	err  error
}

// Conn is the client end of a newline-delimited JSON-RPC stream. A goroutine
// reads lines as they arrive and stamps each with its arrival time, so a
// latency does not include the time the caller takes to look at it.
type Conn struct {
	w      io.Writer
	lines  chan line
	done   chan struct{}
	nextID int64
	ended  error // set once the reader reported the end of the stream
}

// NewConn starts reading r. Close stops the reader once r is closed or
// returns an error; it never blocks on r itself.
func NewConn(w io.Writer, r io.Reader) *Conn {
	c := &Conn{w: w, lines: make(chan line, 16), done: make(chan struct{}), nextID: 1}
	go c.read(r)
	return c
}

func (c *Conn) read(r io.Reader) {
	br := bufio.NewReaderSize(r, 64<<10)
	for {
		data, err := readLine(br)
		l := line{data: data, at: time.Now(), err: err}
		select {
		case c.lines <- l:
		case <-c.done:
			return
		}
		if err != nil {
			return
		}
	}
}

// readLine reads one line without its terminator, refusing lines longer
// than MaxLineBytes. Blank lines are skipped.
func readLine(br *bufio.Reader) ([]byte, error) {
	var buf []byte
	for {
		chunk, err := br.ReadSlice('\n')
		if len(buf)+len(chunk) > MaxLineBytes {
			return nil, fmt.Errorf("a line from the server is longer than %d bytes", MaxLineBytes)
		}
		buf = append(buf, chunk...)
		switch {
		case err == bufio.ErrBufferFull:
			continue
		case err == io.EOF && len(buf) > 0:
			return nil, fmt.Errorf("server output ended inside a line: %q", truncate(buf, 200))
		case err != nil:
			return nil, err
		}
		if t := bytes.TrimSpace(buf); len(t) > 0 {
			return t, nil
		}
		buf = buf[:0]
	}
}

// Close stops the reader goroutine.
func (c *Conn) Close() {
	select {
	case <-c.done:
	default:
		close(c.done)
	}
}

// Notify sends a notification.
func (c *Conn) Notify(method string, params any) error {
	b, err := EncodeRequest(-1, method, params)
	if err != nil {
		return err
	}
	if _, err := c.w.Write(b); err != nil {
		return fmt.Errorf("send %s: %w", method, err)
	}
	return nil
}

// Exchange is one request and its answer.
type Exchange struct {
	Result json.RawMessage // the result of a successful answer
	Sent   time.Time       // just before the request was written
	Recv   time.Time       // when the answer's line was read
}

// Latency is the time from writing the request to reading its answer.
func (e Exchange) Latency() time.Duration { return e.Recv.Sub(e.Sent) }

// Call sends a request and waits for its answer until ctx ends, skipping
// notifications and requests from the server. A JSON-RPC error answer is
// returned as an *RPCError, a passed deadline as ErrTimeout.
func (c *Conn) Call(ctx context.Context, method string, params any) (Exchange, error) {
	id := c.nextID
	c.nextID++
	b, err := EncodeRequest(id, method, params)
	if err != nil {
		return Exchange{}, err
	}
	ex := Exchange{Sent: time.Now()}
	if _, err := c.w.Write(b); err != nil {
		return ex, fmt.Errorf("send %s: %w", method, err)
	}
	m, at, err := c.await(ctx, id)
	if err != nil {
		return ex, fmt.Errorf("%s: %w", method, err)
	}
	ex.Recv = at
	if m.Error != nil {
		return ex, fmt.Errorf("%s: %w", method, m.Error)
	}
	ex.Result = m.Result
	return ex, nil
}

// await reads lines until the answer to id arrives, the stream ends or ctx
// ends.
func (c *Conn) await(ctx context.Context, id int64) (*Message, time.Time, error) {
	if c.ended != nil {
		return nil, time.Now(), c.ended
	}
	for {
		select {
		case l := <-c.lines:
			if l.err != nil {
				c.ended = fmt.Errorf("read server output: %w", l.err)
				if errors.Is(l.err, io.EOF) {
					c.ended = errors.New("the server closed its output before answering")
				}
				return nil, l.at, c.ended
			}
			m, err := DecodeMessage(l.data)
			if err != nil {
				return nil, l.at, err
			}
			if m.IsResponseTo(id) {
				return m, l.at, nil
			}
		case <-ctx.Done():
			return nil, time.Now(), ctxErr(ctx)
		}
	}
}

// Drain discards the server's output until it ends (nil) or ctx ends.
func (c *Conn) Drain(ctx context.Context) error {
	if c.ended != nil {
		return nil
	}
	for {
		select {
		case l := <-c.lines:
			if l.err != nil {
				c.ended = errors.New("the server output has ended")
				if errors.Is(l.err, io.EOF) {
					return nil
				}
				return fmt.Errorf("read server output: %w", l.err)
			}
		case <-ctx.Done():
			return ctxErr(ctx)
		}
	}
}

func ctxErr(ctx context.Context) error {
	if errors.Is(ctx.Err(), context.DeadlineExceeded) {
		return ErrTimeout
	}
	return ctx.Err()
}

func truncate(b []byte, n int) string {
	if len(b) <= n {
		return string(b)
	}
	return string(b[:n]) + "…"
}
