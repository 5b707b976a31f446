package bench

import (
	"bytes"
	"encoding/json"
	"fmt"

	"github.com/agent-interop/runtime/internal/tokens"
)

// Counter counts tokens.
type Counter interface{ Count(string) (int, error) }

// NewO200kCounter returns the o200k_base counter the runtime's answer
// budgets use (internal/tokens, exact to tiktoken-go's codec, which the
// catalog budgets use).
func NewO200kCounter() (Counter, error) {
	return tokens.NewO200k(), nil
}

// ListingSize is the size of a tools/list result as a client receives it.
type ListingSize struct {
	Tools         int    `json:"tools"`
	Bytes         int    `json:"bytes"`         // the compact result object
	Tokens        int    `json:"tokens"`        // o200k tokens of the compact result
	MaxToolTokens int    `json:"maxToolTokens"` // the largest model view of one tool
	MaxTool       string `json:"maxTool"`
}

// listedTool is the part of a listed tool a model reads.
type listedTool struct {
	Name        string          `json:"name"`
	Description string          `json:"description"`
	InputSchema json.RawMessage `json:"inputSchema"`
}

// ToolNames returns the names in a tools/list result, in order.
func ToolNames(result json.RawMessage) ([]string, error) {
	tools, err := decodeTools(result)
	if err != nil {
		return nil, err
	}
	names := make([]string, len(tools))
	for i, t := range tools {
		names[i] = t.Name
	}
	return names, nil
}

func decodeTools(result json.RawMessage) ([]listedTool, error) {
	var r struct {
		Tools []listedTool `json:"tools"`
	}
	if err := json.Unmarshal(result, &r); err != nil {
		return nil, fmt.Errorf("decode tools/list result: %w", err)
	}
	if r.Tools == nil {
		return nil, fmt.Errorf("tools/list result has no tools array: %s", truncate(result, 200))
	}
	return r.Tools, nil
}

// MeasureToolsList sizes a tools/list result: the whole compact result in
// bytes and tokens, and each tool's model view (name, description and
// inputSchema as compact JSON, the way interopgen's budget check sees it).
func MeasureToolsList(result json.RawMessage, c Counter) (ListingSize, error) {
	var compact bytes.Buffer
	if err := json.Compact(&compact, result); err != nil {
		return ListingSize{}, fmt.Errorf("compact tools/list result: %w", err)
	}
	tools, err := decodeTools(compact.Bytes())
	if err != nil {
		return ListingSize{}, err
	}
	n, err := c.Count(compact.String())
	if err != nil {
		return ListingSize{}, fmt.Errorf("count tokens of tools/list: %w", err)
	}
	s := ListingSize{Tools: len(tools), Bytes: compact.Len(), Tokens: n}
	for _, t := range tools {
		view, err := modelView(t)
		if err != nil {
			return ListingSize{}, err
		}
		k, err := c.Count(string(view))
		if err != nil {
			return ListingSize{}, fmt.Errorf("count tokens of %s: %w", t.Name, err)
		}
		if k > s.MaxToolTokens {
			s.MaxToolTokens, s.MaxTool = k, t.Name
		}
	}
	return s, nil
}

func modelView(t listedTool) ([]byte, error) {
	var b bytes.Buffer
	enc := json.NewEncoder(&b)
	enc.SetEscapeHTML(false)
	if err := enc.Encode(t); err != nil {
		return nil, fmt.Errorf("encode the model view of %s: %w", t.Name, err)
	}
	return bytes.TrimSuffix(b.Bytes(), []byte("\n")), nil
}
