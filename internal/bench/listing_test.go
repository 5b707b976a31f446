package bench

import (
	"encoding/json"
	"strings"
	"testing"
)

// byteCounter counts one token per byte, so sizes are easy to predict.
type byteCounter struct{}

func (byteCounter) Count(s string) (int, error) { return len(s), nil }

func TestMeasureToolsList(t *testing.T) {
	result := json.RawMessage(`{"tools": [
		{"name":"a","description":"<x>","inputSchema":{"type":"object"},"annotations":{"readOnlyHint":true}},
		{"name":"bb","description":"longer one","inputSchema":{"type":"object","properties":{"p":{"type":"string"}}}}
	]}`)
	s, err := MeasureToolsList(result, byteCounter{})
	if err != nil {
		t.Fatal(err)
	}
	compact := `{"tools":[{"name":"a","description":"<x>","inputSchema":{"type":"object"},"annotations":{"readOnlyHint":true}},{"name":"bb","description":"longer one","inputSchema":{"type":"object","properties":{"p":{"type":"string"}}}}]}`
	if s.Tools != 2 || s.Bytes != len(compact) || s.Tokens != len(compact) {
		t.Errorf("size = %+v, want 2 tools, %d bytes", s, len(compact))
	}
	view := `{"name":"bb","description":"longer one","inputSchema":{"type":"object","properties":{"p":{"type":"string"}}}}`
	if s.MaxTool != "bb" || s.MaxToolTokens != len(view) {
		t.Errorf("max tool = %s %d, want bb %d", s.MaxTool, s.MaxToolTokens, len(view))
	}

	// The model view keeps HTML characters as they are, like interopgen.
	v, err := modelView(listedTool{Name: "a", Description: "<x>", InputSchema: json.RawMessage(`{"type":"object"}`)})
	if err != nil {
		t.Fatal(err)
	}
	if string(v) != `{"name":"a","description":"<x>","inputSchema":{"type":"object"}}` {
		t.Errorf("model view = %s", v)
	}
}

func TestMeasureToolsListErrors(t *testing.T) {
	for _, bad := range []string{`{"ttlMs":0}`, `{"tools":`, `[]`} {
		if _, err := MeasureToolsList(json.RawMessage(bad), byteCounter{}); err == nil {
			t.Errorf("MeasureToolsList(%s) accepted", bad)
		}
	}
}

func TestToolNames(t *testing.T) {
	names, err := ToolNames(json.RawMessage(`{"tools":[{"name":"x"},{"name":"y"}]}`))
	if err != nil {
		t.Fatal(err)
	}
	if strings.Join(names, ",") != "x,y" {
		t.Errorf("names = %v", names)
	}
}

func TestO200kCounter(t *testing.T) {
	if testing.Short() {
		t.Skip("loads the tokenizer")
	}
	c, err := NewO200kCounter()
	if err != nil {
		t.Fatal(err)
	}
	n, err := c.Count(`{"tools":[]}`)
	if err != nil {
		t.Fatal(err)
	}
	if n < 3 || n > 10 {
		t.Errorf("o200k tokens of a tiny result = %d", n)
	}
}
