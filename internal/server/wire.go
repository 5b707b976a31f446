package server

import (
	"bytes"
	"encoding/json"

	"github.com/modelcontextprotocol/go-sdk/mcp"
)

// wireResult is a tools/call result of this server encoded in one pass.
// go-sdk's CallToolResult.MarshalJSON marshals its text content and its
// structuredContent through nested MarshalJSON calls, and encoding/json
// validates and compacts each nested output again, so a 26 KB answer was
// scanned five times before the JSON-RPC layer scanned it twice more.
// MarshalJSON here writes the same bytes directly for the shape every
// answer and tool error of this server has (one text content,
// structuredContent raw JSON or absent); any other shape, or anything the
// SDK set on the result (_meta), is left to the SDK's own encoding.
//
// The embedded result keeps every method the SDK calls on a result
// (metadata, result type), so the SDK sees the result it always saw; only
// results of sessions opened with initialize are wrapped, since on later
// protocol revisions the SDK sets a result type that only its own
// encoding writes.
type wireResult struct {
	*mcp.CallToolResult
}

// MarshalJSON writes {"content":[{"type":"text","text":...}],
// "structuredContent":...,"isError":true} as the SDK does: strings and
// structuredContent with HTML characters escaped (the SDK encodes both
// with json.Marshal), fields in the SDK's order, empty ones left out.
func (r wireResult) MarshalJSON() ([]byte, error) {
	res := r.CallToolResult
	text, ok := plainText(res)
	if !ok {
		return res.MarshalJSON()
	}
	var structured json.RawMessage
	if res.StructuredContent != nil {
		raw, isRaw := res.StructuredContent.(json.RawMessage)
		if !isRaw || len(raw) == 0 {
			return res.MarshalJSON()
		}
		structured = raw
	}
	var b bytes.Buffer
	b.Grow(len(text) + len(text)/8 + len(structured) + 80)
	b.WriteString(`{"content":[{"type":"text","text":`)
	// The quoted text is written into b, as json.Marshal writes it
	// (HTML characters escaped), without a copy of its own; Encode ends
	// it with a newline, dropped.
	if err := json.NewEncoder(&b).Encode(text); err != nil {
		return nil, err
	}
	b.Truncate(b.Len() - 1)
	b.WriteString(`}]`)
	if structured != nil {
		b.WriteString(`,"structuredContent":`)
		json.HTMLEscape(&b, structured)
	}
	if res.IsError {
		b.WriteString(`,"isError":true`)
	}
	b.WriteByte('}')
	return b.Bytes(), nil
}

// plainText returns the text of a result that holds one text content and
// nothing MarshalJSON does not write.
func plainText(res *mcp.CallToolResult) (string, bool) {
	if res == nil || res.Meta != nil || len(res.Content) != 1 || res.InputRequests != nil || res.RequestState != "" || res.NeedsInput() {
		return "", false
	}
	t, ok := res.Content[0].(*mcp.TextContent)
	if !ok || t == nil || t.Meta != nil || t.Annotations != nil {
		return "", false
	}
	return t.Text, true
}

// wrapResult wraps a tools/call result of a session opened with
// initialize (see wireResult); others are returned as they are.
func wrapResult(req *mcp.CallToolRequest, res *mcp.CallToolResult) mcp.Result {
	if res == nil || req.Session == nil || req.Session.InitializeParams() == nil {
		return res
	}
	return wireResult{res}
}
