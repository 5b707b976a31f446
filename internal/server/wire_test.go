package server

import (
	"bytes"
	"context"
	"encoding/json"
	"fmt"
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
// session opened with initialize are wireResults (an outer middleware sees
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
	if got := <-seen; got != fmt.Sprintf("%T", wireResult{}) {
		t.Fatalf("the server returned a %s, want a wireResult", got)
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
