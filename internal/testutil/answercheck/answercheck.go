// Package answercheck checks tool answers against the answer schemas the
// spec declares (catalogs.Entry.OutputSchema, generated from each tool's
// output), with santhosh-tekuri/jsonschema and RFC 3339 timestamps
// asserted. Tests use it wherever an answer is seen: the end-to-end
// clients of the built binary (every suite, the real-provider ones
// included) and in-process handler calls. The runtime never loads it.
package answercheck

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"strings"
	"sync"

	"github.com/modelcontextprotocol/go-sdk/mcp"
	"github.com/santhosh-tekuri/jsonschema/v6"

	"github.com/agent-interop/runtime/catalogs"
)

// Checker compiles each entry's answer schema once.
type Checker struct {
	mu       sync.Mutex
	compiled map[*catalogs.Entry]*jsonschema.Schema
	// Checked counts the answers checked per entry name.
	checked map[string]int
}

// New returns an empty Checker.
func New() *Checker {
	return &Checker{compiled: map[*catalogs.Entry]*jsonschema.Schema{}, checked: map[string]int{}}
}

// Entry finds the tool a client of profile (the default when "") calls
// by name: a modern tool, or a legacy alias in the legacy profile.
func Entry(profile, name string) (*catalogs.Entry, error) {
	if profile == "" {
		profile = catalogs.DefaultProfile
	}
	p, ok := catalogs.LookupProfile(profile)
	if !ok {
		return nil, fmt.Errorf("no profile %q", profile)
	}
	for _, e := range p.Entries(false) {
		if e.Name == name {
			return e, nil
		}
	}
	return nil, fmt.Errorf("profile %s serves no tool %q", profile, name)
}

func (c *Checker) schema(e *catalogs.Entry) (*jsonschema.Schema, error) {
	c.mu.Lock()
	defer c.mu.Unlock()
	if s, ok := c.compiled[e]; ok {
		return s, nil
	}
	doc, err := jsonschema.UnmarshalJSON(strings.NewReader(e.OutputSchema))
	if err != nil {
		return nil, fmt.Errorf("%s: output schema: %w", e.Name, err)
	}
	comp := jsonschema.NewCompiler()
	comp.DefaultDraft(jsonschema.Draft2020)
	comp.AssertFormat()
	url := "mem://" + e.Name + "-output.json"
	if err := comp.AddResource(url, doc); err != nil {
		return nil, err
	}
	s, err := comp.Compile(url)
	if err != nil {
		return nil, fmt.Errorf("%s: output schema does not compile: %w", e.Name, err)
	}
	c.compiled[e] = s
	return s, nil
}

// Check validates one successful answer of e: its text content is JSON of
// the declared shape, and structuredContent is absent or the same object
// (a legacy alias whose 0.3.x answer is not an object sends none).
func (c *Checker) Check(e *catalogs.Entry, text string, structured any) error {
	s, err := c.schema(e)
	if err != nil {
		return err
	}
	v, err := jsonschema.UnmarshalJSON(strings.NewReader(text))
	if err != nil {
		return fmt.Errorf("%s: the text is not JSON: %w", e.Name, err)
	}
	if err := s.Validate(v); err != nil {
		return fmt.Errorf("%s: the answer does not match its declared shape: %w\nanswer: %s", e.Name, err, clip(text))
	}
	_, isObject := v.(map[string]any)
	switch {
	case structured == nil && isObject:
		return fmt.Errorf("%s: an object answer without structuredContent", e.Name)
	case structured != nil && !isObject:
		return fmt.Errorf("%s: structuredContent sent with a %T answer; a client's model would see another shape than the text", e.Name, v)
	case structured != nil:
		a, _ := json.Marshal(structured)
		b, _ := json.Marshal(jsonValue(text))
		if !bytes.Equal(a, b) {
			return fmt.Errorf("%s: structuredContent differs from the text\nstructured: %s\ntext:       %s", e.Name, clip(string(a)), clip(text))
		}
	}
	c.mu.Lock()
	c.checked[e.Name]++
	c.mu.Unlock()
	return nil
}

// CheckJSON validates an answer value as the server would encode it (an
// in-process handler's answer): its JSON against e's declared shape.
func (c *Checker) CheckJSON(e *catalogs.Entry, answer any) error {
	b, err := json.Marshal(answer)
	if err != nil {
		return fmt.Errorf("%s: the answer does not encode: %w", e.Name, err)
	}
	if legacy, ok := e.Reshaped(answer); ok {
		if b, err = json.Marshal(legacy); err != nil {
			return err
		}
	}
	var structured any
	if len(b) > 0 && b[0] == '{' {
		structured = jsonValue(string(b))
	}
	return c.Check(e, string(b), structured)
}

// Checked returns how many answers of each tool passed.
func (c *Checker) Checked() map[string]int {
	c.mu.Lock()
	defer c.mu.Unlock()
	out := make(map[string]int, len(c.checked))
	for k, v := range c.checked {
		out[k] = v
	}
	return out
}

// Middleware is a client sending middleware that checks every tools/call
// answer of a client of profile, reporting a mismatch to fail (a test's
// Errorf: it is called from the client's goroutines).
func (c *Checker) Middleware(profile string, fail func(format string, args ...any)) mcp.Middleware {
	return func(next mcp.MethodHandler) mcp.MethodHandler {
		return func(ctx context.Context, method string, req mcp.Request) (mcp.Result, error) {
			res, err := next(ctx, method, req)
			if err != nil || method != "tools/call" {
				return res, err
			}
			params, ok1 := req.GetParams().(*mcp.CallToolParams)
			out, ok2 := res.(*mcp.CallToolResult)
			if !ok1 || !ok2 || params == nil {
				fail("answer check: tools/call request %T or result %T not understood", req.GetParams(), res)
				return res, err
			}
			if cerr := c.CheckResult(profile, params.Name, out); cerr != nil {
				fail("answer check: %v", cerr)
			}
			return res, err
		}
	}
}

// CheckResult checks a tools/call result of tool name on a client of
// profile; tool errors carry no answer and pass.
func (c *Checker) CheckResult(profile, name string, res *mcp.CallToolResult) error {
	if res.IsError {
		return nil
	}
	e, err := Entry(profile, name)
	if err != nil {
		return err
	}
	if len(res.Content) != 1 {
		return fmt.Errorf("%s: %d content items, want one text", name, len(res.Content))
	}
	text, ok := res.Content[0].(*mcp.TextContent)
	if !ok {
		return fmt.Errorf("%s: content is %T, want text", name, res.Content[0])
	}
	return c.Check(e, text.Text, res.StructuredContent)
}

// CheckRaw checks a raw JSON-RPC tools/call result (the "result" member of
// a response line).
func (c *Checker) CheckRaw(profile, name string, result json.RawMessage) error {
	var r struct {
		IsError bool `json:"isError"`
		Content []struct {
			Type string `json:"type"`
			Text string `json:"text"`
		} `json:"content"`
		Structured json.RawMessage `json:"structuredContent"`
	}
	if err := json.Unmarshal(result, &r); err != nil {
		return fmt.Errorf("%s: result: %w", name, err)
	}
	if r.IsError {
		return nil
	}
	e, err := Entry(profile, name)
	if err != nil {
		return err
	}
	if len(r.Content) != 1 || r.Content[0].Type != "text" {
		return errors.New(name + ": want one text content")
	}
	var structured any
	if len(r.Structured) > 0 {
		structured = jsonValue(string(r.Structured))
	}
	return c.Check(e, r.Content[0].Text, structured)
}

func jsonValue(text string) any {
	var v any
	_ = json.Unmarshal([]byte(text), &v)
	return v
}

func clip(s string) string {
	if len(s) > 600 {
		return s[:600] + "…"
	}
	return s
}
