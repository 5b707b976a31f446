package server

import (
	"bytes"
	"context"
	"encoding/json"
	"fmt"
	"math/rand/v2"
	"strings"
	"testing"

	"github.com/modelcontextprotocol/go-sdk/jsonrpc"
	"github.com/modelcontextprotocol/go-sdk/mcp"

	"github.com/agent-interop/runtime/catalogs"
)

// TestWireResultEncodesAsTheSDK holds wireResult to the bytes go-sdk's own
// encoding writes, for the results this server builds (HTML characters,
// line and paragraph separators, invalid UTF-8, escapes and non-ASCII in
// both the text and structuredContent; tool errors; no structuredContent)
// and for shapes it leaves to the SDK. Both are encoded as go-sdk's
// JSON-RPC layer encodes a result (HTML characters left as they are, as
// marshal does), so what the result writes itself shows.
func TestWireResultEncodesAsTheSDK(t *testing.T) {
	tricky := "a <b> & \"q\" \\ \u2028\u2029 é \n\t\x01 \xff end"
	structured, err := json.Marshal(map[string]any{"text": tricky, "n": 1, "list": []string{"<", ">", "&"}})
	if err != nil {
		t.Fatal(err)
	}
	var unescaped bytes.Buffer // as the server's encoder writes it: HTML characters unescaped
	enc := json.NewEncoder(&unescaped)
	enc.SetEscapeHTML(false)
	if err := enc.Encode(map[string]any{"text": tricky, "n": 1}); err != nil {
		t.Fatal(err)
	}
	raw := json.RawMessage(bytes.TrimSuffix(unescaped.Bytes(), []byte("\n")))
	text := func(s string) []mcp.Content { return []mcp.Content{&mcp.TextContent{Text: s}} }
	for i, res := range []*mcp.CallToolResult{
		{Content: text(string(raw)), StructuredContent: raw},
		{Content: text(string(structured)), StructuredContent: json.RawMessage(structured)},
		{Content: text(tricky)},
		{Content: text(""), StructuredContent: json.RawMessage(`{}`)},
		{Content: text("failed: <x>"), IsError: true},
		// Left to the SDK:
		{Content: text("x"), StructuredContent: map[string]any{"a": "<"}},
		{Content: text("x"), Meta: mcp.Meta{"k": "v"}},
		{Content: []mcp.Content{&mcp.TextContent{Text: "a"}, &mcp.TextContent{Text: "b"}}},
		{Content: []mcp.Content{&mcp.TextContent{Text: "a", Annotations: &mcp.Annotations{Priority: 1}}}},
		{Content: []mcp.Content{}},
	} {
		want, err := marshal(res)
		if err != nil {
			t.Fatal(err)
		}
		got, err := marshal(wireResult{res})
		if err != nil {
			t.Fatalf("%d: %v", i, err)
		}
		if !bytes.Equal(got, want) {
			t.Errorf("%d: wireResult wrote\n%s\nthe SDK writes\n%s", i, got, want)
		}
	}
}

// TestInitializedSessionsGetWireResults checks that the answers of a
// session opened with initialize are wireResults or plainResults (an
// outer middleware sees
// what the server returns) and reach the client intact.
func TestInitializedSessionsGetWireResults(t *testing.T) {
	p, ok := catalogs.LookupProfile("full")
	if !ok {
		t.Fatal("no profile full")
	}
	s := New(Options{Profile: p, Version: "test", Handlers: &fakeHandlers{}})
	seen := make(chan string, 4)
	s.mcp.AddReceivingMiddleware(func(next mcp.MethodHandler) mcp.MethodHandler {
		return func(ctx context.Context, method string, req mcp.Request) (mcp.Result, error) {
			res, err := next(ctx, method, req)
			if method == "tools/call" {
				seen <- fmt.Sprintf("%T", res)
			}
			return res, err
		}
	})
	st, ct := mcp.NewInMemoryTransports()
	ctx, cancel := context.WithCancel(context.Background())
	defer cancel()
	go func() { _ = s.Run(ctx, st) }()
	conn, err := ct.Connect(ctx)
	if err != nil {
		t.Fatal(err)
	}
	defer conn.Close()
	send := func(line string) {
		t.Helper()
		msg, err := jsonrpc.DecodeMessage([]byte(line))
		if err != nil {
			t.Fatal(err)
		}
		if err := conn.Write(ctx, msg); err != nil {
			t.Fatal(err)
		}
	}
	read := func() *jsonrpc.Response {
		t.Helper()
		msg, err := conn.Read(ctx)
		if err != nil {
			t.Fatal(err)
		}
		resp, ok := msg.(*jsonrpc.Response)
		if !ok || resp.Error != nil {
			t.Fatalf("want a result, got %#v", msg)
		}
		return resp
	}
	send(`{"jsonrpc":"2.0","id":1,"method":"initialize","params":{"protocolVersion":"2025-06-18","capabilities":{},"clientInfo":{"name":"t","version":"1"}}}`)
	read()
	send(`{"jsonrpc":"2.0","method":"notifications/initialized","params":{}}`)
	send(`{"jsonrpc":"2.0","id":2,"method":"tools/call","params":{"name":"get_runtime_status","arguments":{}}}`)
	resp := read()
	if got := <-seen; got != fmt.Sprintf("%T", wireResult{}) && got != fmt.Sprintf("%T", plainResult{}) {
		t.Fatalf("the server returned a %s, want a wireResult or a plainResult", got)
	}
	var res struct {
		Content []struct {
			Type, Text string
		} `json:"content"`
		StructuredContent json.RawMessage `json:"structuredContent"`
	}
	if err := json.Unmarshal(resp.Result, &res); err != nil {
		t.Fatalf("answer %s: %v", resp.Result, err)
	}
	var fromText, fromStructured catalogs.GetRuntimeStatusOutput
	if len(res.Content) != 1 || res.Content[0].Type != "text" {
		t.Fatalf("answer %s: want one text content", resp.Result)
	}
	if err := json.Unmarshal([]byte(res.Content[0].Text), &fromText); err != nil {
		t.Fatal(err)
	}
	if err := json.Unmarshal(res.StructuredContent, &fromStructured); err != nil {
		t.Fatal(err)
	}
	if fromText.ToolsetProfileDescription != "a <b> & c" || fromStructured.ToolsetProfileDescription != "a <b> & c" {
		t.Fatalf("answer %s: the description did not arrive intact", resp.Result)
	}
}

// TestPlainResultEncodesAsTheSDK holds plainResult to the bytes go-sdk's
// own encoding writes (encoded as the JSON-RPC layer encodes a result),
// for results with escapes, control characters, invalid UTF-8 and
// non-ASCII but none of the characters it leaves to wireResult, with and
// without structuredContent and as tool errors; the results with an HTML
// character or a line or paragraph separator, anywhere, and the shapes
// left to the SDK are refused. plainResult must not be a json.Marshaler.
func TestPlainResultEncodesAsTheSDK(t *testing.T) {
	if _, ok := any(plainResult{}).(json.Marshaler); ok {
		t.Fatal("plainResult is a json.Marshaler: its output would be compacted again")
	}
	if _, ok := any(plainResult{}).(mcp.Result); !ok {
		t.Fatal("plainResult is no mcp.Result")
	}
	rng := rand.New(rand.NewPCG(7, 7))
	pieces := []string{"a", "\"", "\\", "é", "\n", "\t", "\x01", "\x7f", "\xff", "\xe2", "\xe2\x80", "\u2027", "\u202f", " ", "{", "works"}
	unsafePieces := []string{"<", ">", "&", "\u2028", "\u2029"}
	text := func(s string) []mcp.Content { return []mcp.Content{&mcp.TextContent{Text: s}} }
	encode := func(v any) json.RawMessage {
		b, err := marshal(v)
		if err != nil {
			t.Fatal(err)
		}
		return b
	}
	for i := range 3000 {
		var b strings.Builder
		for range rng.IntN(20) {
			b.WriteString(pieces[rng.IntN(len(pieces))])
		}
		refused := i%4 == 3
		if refused {
			b.WriteString(unsafePieces[rng.IntN(len(unsafePieces))])
		}
		s := b.String()
		body := encode(map[string]any{"s": s, "n": i})
		var res *mcp.CallToolResult
		switch i % 3 {
		case 0: // an answer: the text is its structuredContent
			res = &mcp.CallToolResult{Content: text(string(body)), StructuredContent: body}
		case 1: // a text alone, or an error
			res = &mcp.CallToolResult{Content: text(s), IsError: i%2 == 0}
		case 2: // a legacy answer: text and structuredContent differ
			res = &mcp.CallToolResult{Content: text(s), StructuredContent: encode(map[string]any{"x": s[:len(s)/2]})}
		}
		raw, _ := res.StructuredContent.(json.RawMessage)
		// What the result holds (a body escapes the separators itself).
		refused = strings.ContainsAny(res.Content[0].(*mcp.TextContent).Text+string(raw), "<>&\u2028\u2029")
		p, ok := asPlainResult(res)
		if ok == refused {
			t.Fatalf("%d: %q: asPlainResult ok = %v", i, s, ok)
		}
		if !ok {
			continue
		}
		if got, want := encode(p), encode(res); !bytes.Equal(got, want) {
			t.Fatalf("%d: plainResult wrote\n%s\nthe SDK writes\n%s", i, got, want)
		}
	}
	for i, res := range []*mcp.CallToolResult{
		{Content: text("x"), StructuredContent: map[string]any{"a": "b"}},
		{Content: text("x"), Meta: mcp.Meta{"k": "v"}},
		{Content: []mcp.Content{&mcp.TextContent{Text: "a"}, &mcp.TextContent{Text: "b"}}},
		{Content: []mcp.Content{}},
		{Content: text("x"), StructuredContent: json.RawMessage(`{"a":"<"}`)},
	} {
		if _, ok := asPlainResult(res); ok {
			t.Errorf("%d: asPlainResult took a result it must leave", i)
		}
	}
}
