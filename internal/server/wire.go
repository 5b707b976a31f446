package server

import (
	"bytes"
	"encoding/json"
	"unsafe"

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
// initialize: a plainResult when it is one, else a wireResult; others are
// returned as they are.
func wrapResult(req *mcp.CallToolRequest, res *mcp.CallToolResult) mcp.Result {
	if res == nil || req.Session == nil || req.Session.InitializeParams() == nil {
		return res
	}
	if p, ok := asPlainResult(res); ok {
		return p
	}
	return wireResult{res}
}

// plainResult is a wireResult whose text and structuredContent hold no
// byte the SDK's encoding of a result escapes and the JSON-RPC layer's
// does not: no HTML character ('<', '>', '&') and no U+2028 or U+2029.
// For such a result the escaping of HTML characters changes nothing, so
// encoding/json writes the same bytes from plain fields, under the
// JSON-RPC layer's own encoding, as wireResult's MarshalJSON does: the
// text quoted as a string, structuredContent as its raw JSON. It is not a
// json.Marshaler, so its ~54 KB of output (a 100-work list_work_items
// page) is not compacted again after it is written; only the raw
// structuredContent is (TestPlainResultEncodesAsTheSDK).
type plainResult struct {
	// The SDK's result, for the methods the SDK calls on a result.
	*mcp.CallToolResult `json:"-"`
	// MarshalJSON is a field so that the embedded result's MarshalJSON
	// is not promoted: a plainResult is encoded from its fields.
	MarshalJSON struct{} `json:"-"`

	Content           []plainContent  `json:"content"`
	StructuredContent json.RawMessage `json:"structuredContent,omitempty"`
	IsError           bool            `json:"isError,omitempty"`
}

// plainContent is a text content.
type plainContent struct {
	Type string `json:"type"`
	Text string `json:"text"`
}

// asPlainResult is res as a plainResult, when it has the shape
// wireResult writes itself and nothing an HTML or line-separator escape
// would change.
func asPlainResult(res *mcp.CallToolResult) (plainResult, bool) {
	text, ok := plainText(res)
	if !ok {
		return plainResult{}, false
	}
	var structured json.RawMessage
	if res.StructuredContent != nil {
		raw, isRaw := res.StructuredContent.(json.RawMessage)
		if !isRaw || len(raw) == 0 {
			return plainResult{}, false
		}
		structured = raw
	}
	textBytes := unsafe.Slice(unsafe.StringData(text), len(text)) // read only
	if !unescaped(textBytes) {
		return plainResult{}, false
	}
	// The answer's text is its structuredContent as a rule (one
	// encoding): checked once.
	if len(structured) > 0 && (len(structured) != len(textBytes) || &structured[0] != unsafe.StringData(text)) && !unescaped(structured) {
		return plainResult{}, false
	}
	return plainResult{
		CallToolResult:    res,
		Content:           []plainContent{{Type: "text", Text: text}},
		StructuredContent: structured,
		IsError:           res.IsError,
	}, true
}

// unescaped reports whether b has no '<', '>', '&', U+2028 or U+2029.
func unescaped(b []byte) bool {
	if bytes.IndexByte(b, '<') >= 0 || bytes.IndexByte(b, '>') >= 0 || bytes.IndexByte(b, '&') >= 0 {
		return false
	}
	for i := 0; ; {
		k := bytes.IndexByte(b[i:], 0xE2) // the first byte of U+2028 and U+2029
		if k < 0 {
			return true
		}
		i += k + 1
		if i+1 < len(b) && b[i] == 0x80 && (b[i+1] == 0xA8 || b[i+1] == 0xA9) {
			return false
		}
	}
}
