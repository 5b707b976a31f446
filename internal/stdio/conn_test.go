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
)

// TestConnWritesResponsesAsTheSDK writes responses with random ids
// (numbers, strings with quotes, escapes, HTML characters, invalid UTF-8,
// U+2028) and results as encoding/json makes them (HTML characters
// unescaped, as the SDK marshals), and wants each line to be the SDK's
// jsonrpc.EncodeMessage and a newline; so are errors, requests and
// notifications, which conn encodes as the SDK does.
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
		if got, want := written(t, resp); got != want {
			t.Fatalf("id %#v: wrote %q, want %q", raw, got, want)
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
		if got, want := written(t, msg); got != want {
			t.Errorf("%s: wrote %q, want %q", fmt.Sprintf("%T %+v", msg, msg), got, want)
		}
	}
	ctx, cancel := context.WithCancel(context.Background())
	cancel()
	for _, msg := range []jsonrpc.Message{&jsonrpc.Response{ID: call, Result: json.RawMessage(`{}`)}, req} {
		var out bytes.Buffer
		c := &conn{in: newInbox(), out: &out}
		if err := c.Write(ctx, msg); !errors.Is(err, context.Canceled) || out.Len() != 0 {
			t.Errorf("done context: err %v, wrote %q", err, out.String())
		}
	}
}

// written is the line conn writes for msg, and the SDK's encoding of msg
// with a newline.
func written(t *testing.T, msg jsonrpc.Message) (got, want string) {
	t.Helper()
	var out bytes.Buffer
	c := &conn{in: newInbox(), out: &out}
	if err := c.Write(context.Background(), msg); err != nil {
		t.Fatal(err)
	}
	data, err := jsonrpc.EncodeMessage(msg)
	if err != nil {
		t.Fatal(err)
	}
	return out.String(), string(data) + "\n"
}
