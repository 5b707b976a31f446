package stdio

import (
	"bytes"
	"context"
	"encoding/json"
	"io"
	"strconv"

	"github.com/modelcontextprotocol/go-sdk/jsonrpc"
	"github.com/modelcontextprotocol/go-sdk/mcp"
)

// conn is the SDK's connection over the guard with one change: a
// successful response is framed here instead of by the SDK's encoding.
//
// The SDK marshals a result with encoding/json into the response's
// Result (compact JSON: encoding/json compacts whatever a MarshalJSON
// returns) and then marshals the whole message, which validates and
// compacts Result a second time: a 100-work list_work_items answer is
// ~54 KB, scanned again for nothing. Framing {"jsonrpc":"2.0","id":...,
// "result":...} around Result as it is writes the same bytes
// (TestConnWritesResponsesAsTheSDK holds it to jsonrpc.EncodeMessage).
// Requests, notifications, errors and responses whose id is neither a
// number nor a string go through the SDK's Write. The guard serialises
// every line, so a line written here never interleaves with the SDK's.
type conn struct {
	mcp.Connection
	out io.Writer // the guard
}

// Write implements mcp.Connection.
func (c *conn) Write(ctx context.Context, msg jsonrpc.Message) error {
	r, ok := msg.(*jsonrpc.Response)
	if !ok || r.Error != nil || len(r.Result) == 0 {
		return c.Connection.Write(ctx, msg)
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
			return c.Connection.Write(ctx, msg)
		}
		id = bytes.TrimSuffix(b.Bytes(), []byte("\n"))
	default:
		return c.Connection.Write(ctx, msg)
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
