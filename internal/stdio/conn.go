package stdio

import (
	"bytes"
	"context"
	"encoding/json"
	"fmt"
	"io"
	"runtime"
	"strconv"
	"sync"

	"github.com/modelcontextprotocol/go-sdk/jsonrpc"
	"github.com/modelcontextprotocol/go-sdk/mcp"
)

// conn is the SDK's connection over the guard. Read hands over the
// messages the guard checked and decoded; Write frames a successful
// response itself instead of through the SDK's encoding.
//
// The SDK marshals a result with encoding/json into the response's
// Result (compact JSON: encoding/json compacts whatever a MarshalJSON
// returns) and then marshals the whole message, which validates and
// compacts Result a second time: a 100-work list_work_items answer is
// ~54 KB, scanned again for nothing. Framing {"jsonrpc":"2.0","id":...,
// "result":...} around Result as it is writes the same bytes
// (TestConnWritesResponsesAsTheSDK holds it to jsonrpc.EncodeMessage).
// Requests, notifications, errors and responses whose id is neither a
// number nor a string are encoded by jsonrpc.EncodeMessage, as the SDK's
// stdio connection does. The guard serialises every line, so lines never
// interleave.
type conn struct {
	in  *inbox
	out io.Writer // the guard
}

var _ mcp.Connection = (*conn)(nil)

// Read implements mcp.Connection: the next message the guard forwarded,
// or the end of the input.
func (c *conn) Read(ctx context.Context) (jsonrpc.Message, error) {
	// As the SDK's: no read once the context is done.
	if err := ctx.Err(); err != nil {
		return nil, err
	}
	select {
	case <-ctx.Done():
		return nil, ctx.Err()
	case m := <-c.in.msgs:
		return m, nil
	case <-c.in.ended:
		return nil, c.in.endErr
	case <-c.in.closed:
		return nil, io.EOF
	}
}

// Close implements mcp.Connection: the SDK takes no more messages (stdin
// stays open; the guard stops at its next line).
func (c *conn) Close() error {
	c.in.close()
	return nil
}

// SessionID implements mcp.Connection: stdio has no session id.
func (c *conn) SessionID() string { return "" }

// Write implements mcp.Connection.
func (c *conn) Write(ctx context.Context, msg jsonrpc.Message) error {
	r, ok := msg.(*jsonrpc.Response)
	if !ok || r.Error != nil || len(r.Result) == 0 {
		return c.encode(ctx, msg)
	}
	var id []byte
	switch v := r.ID.Raw().(type) {
	case int64:
		id = strconv.AppendInt(nil, v, 10)
	case string:
		// As the SDK encodes it: encoding/json without HTML escaping.
		var b bytes.Buffer
		enc := json.NewEncoder(&b)
		enc.SetEscapeHTML(false)
		if err := enc.Encode(v); err != nil {
			return c.encode(ctx, msg)
		}
		id = bytes.TrimSuffix(b.Bytes(), []byte("\n"))
	default:
		return c.encode(ctx, msg)
	}
	// As the SDK's Write: no write once the context is done.
	select {
	case <-ctx.Done():
		return ctx.Err()
	default:
	}
	const head, mid = `{"jsonrpc":"2.0","id":`, `,"result":`
	line := make([]byte, 0, len(head)+len(id)+len(mid)+len(r.Result)+2)
	line = append(line, head...)
	line = append(line, id...)
	line = append(line, mid...)
	line = append(line, r.Result...)
	line = append(line, '}', '\n')
	_, err := c.out.Write(line)
	return err
}

// encode writes msg as the SDK's stdio connection does: its
// jsonrpc.EncodeMessage and a newline, nothing once ctx is done.
func (c *conn) encode(ctx context.Context, msg jsonrpc.Message) error {
	if err := ctx.Err(); err != nil {
		return err
	}
	data, err := jsonrpc.EncodeMessage(msg)
	if err != nil {
		return fmt.Errorf("marshaling message: %w", err)
	}
	_, err = c.out.Write(append(data, '\n'))
	return err
}

// inbox hands the messages the guard decoded to the SDK's reading
// goroutine one at a time: put returns once Read took the message, so the
// guard reads the next line only then (as a pipe would make it), and
// nothing is lost when the input ends after the last put.
type inbox struct {
	msgs chan jsonrpc.Message

	endOnce sync.Once
	ended   chan struct{} // closed when the input ended (stdin's end, or Interrupt)
	endErr  error         // why; set before ended is closed

	closeOnce sync.Once
	closed    chan struct{} // closed when the SDK closed the connection
}

func newInbox() *inbox {
	return &inbox{msgs: make(chan jsonrpc.Message), ended: make(chan struct{}), closed: make(chan struct{})}
}

// put passes m to Read; false when the input ended or the connection was
// closed first.
func (b *inbox) put(m jsonrpc.Message) bool {
	select {
	case b.msgs <- m:
		// The guard's next read of stdin is a blocking system call,
		// which keeps this thread's P until sysmon takes it back (20 µs
		// to 10 ms): let the SDK run the message first.
		runtime.Gosched()
		return true
	case <-b.ended:
		return false
	case <-b.closed:
		return false
	}
}

// end ends the input with err (io.EOF at stdin's end); Read returns err
// from then on. Only the first call counts.
func (b *inbox) end(err error) {
	b.endOnce.Do(func() {
		b.endErr = err
		close(b.ended)
	})
}

// close is the SDK closing the connection.
func (b *inbox) close() { b.closeOnce.Do(func() { close(b.closed) }) }
