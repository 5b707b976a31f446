package stdio

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"math/rand/v2"
	"strings"
	"testing"

	"github.com/modelcontextprotocol/go-sdk/jsonrpc"
	"github.com/modelcontextprotocol/go-sdk/mcp"
)

// recordingConn is the SDK's side of conn: it records what it is asked
// to write.
type recordingConn struct {
	mcp.Connection
	wrote []jsonrpc.Message
}

func (r *recordingConn) Write(_ context.Context, msg jsonrpc.Message) error {
	r.wrote = append(r.wrote, msg)
	return nil
}

// TestConnWritesResponsesAsTheSDK writes responses with random ids
// (numbers, strings with quotes, escapes, HTML characters, invalid UTF-8,
// U+2028) and results as encoding/json makes them (HTML characters
// unescaped, as the SDK marshals), and wants each line to be the SDK's
// jsonrpc.EncodeMessage and a newline; errors, requests and
// notifications are passed to the SDK's Write.
func TestConnWritesResponsesAsTheSDK(t *testing.T) {
	rng := rand.New(rand.NewPCG(4, 2))
	pieces := []string{"a", "\"", "\\", "<", ">", "&", "\u2028", "\xff", "é", "\n", "\x01", " ", "work_"}
	str := func() string {
		var b strings.Builder
		for range rng.IntN(12) {
			b.WriteString(pieces[rng.IntN(len(pieces))])
		}
		return b.String()
	}
	for i := range 2000 {
		var raw any = float64(rng.Int64N(1<<53) - 1<<52) // as JSON decodes a number
		if i%2 == 1 {
			raw = str()
		}
		id, err := jsonrpc.MakeID(raw)
		if err != nil {
			t.Fatal(err)
		}
		var rb bytes.Buffer
		enc := json.NewEncoder(&rb)
		enc.SetEscapeHTML(false)
		if err := enc.Encode(map[string]any{"content": []any{map[string]any{"type": "text", "text": str()}}, "n": i, "isError": i%3 == 0}); err != nil {
			t.Fatal(err)
		}
		resp := &jsonrpc.Response{ID: id, Result: bytes.TrimSuffix(rb.Bytes(), []byte("\n"))}
		var out bytes.Buffer
		sdk := &recordingConn{}
		c := &conn{Connection: sdk, out: &out}
		if err := c.Write(context.Background(), resp); err != nil {
			t.Fatal(err)
		}
		want, err := jsonrpc.EncodeMessage(resp)
		if err != nil {
			t.Fatal(err)
		}
		if got := out.String(); got != string(want)+"\n" || len(sdk.wrote) != 0 {
			t.Fatalf("id %#v: wrote %q (SDK asked %d times), want %q", raw, got, len(sdk.wrote), want)
		}
	}
	call, _ := jsonrpc.MakeID(float64(7))
	req := &jsonrpc.Request{ID: call, Method: "ping"}
	for _, msg := range []jsonrpc.Message{
		&jsonrpc.Response{ID: call, Error: errors.New("failed")},
		&jsonrpc.Response{ID: call},
		req,
		&jsonrpc.Request{Method: "notifications/progress"},
	} {
		var out bytes.Buffer
		sdk := &recordingConn{}
		c := &conn{Connection: sdk, out: &out}
		if err := c.Write(context.Background(), msg); err != nil {
			t.Fatal(err)
		}
		if out.Len() != 0 || len(sdk.wrote) != 1 || sdk.wrote[0] != msg {
			t.Errorf("%s: wrote %q itself, SDK asked %d times", fmt.Sprintf("%T %+v", msg, msg), out.String(), len(sdk.wrote))
		}
	}
	ctx, cancel := context.WithCancel(context.Background())
	cancel()
	var out bytes.Buffer
	c := &conn{Connection: &recordingConn{}, out: &out}
	if err := c.Write(ctx, &jsonrpc.Response{ID: call, Result: json.RawMessage(`{}`)}); !errors.Is(err, context.Canceled) || out.Len() != 0 {
		t.Errorf("done context: err %v, wrote %q", err, out.String())
	}
}
