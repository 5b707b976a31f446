package gen

import (
	"bytes"
	"encoding/json"
	"fmt"
)

// ToolView is one tool as tools/list shows it.
type ToolView struct {
	Name        string          `json:"name"`
	Description string          `json:"description"`
	InputSchema json.RawMessage `json:"inputSchema"`
	Annotations *AnnotationView `json:"annotations,omitempty"`
	write       bool
}

// AnnotationView is the annotations object of tools/list. A hint is
// stated only where it differs from the MCP default (not read-only,
// destructive, not idempotent, open world), which a client assumes for an
// absent hint, so nothing is lost and no token is spent on a default; a
// tool whose hints are all defaults has no annotations object.
// destructiveHint and idempotentHint are meaningful only for tools that
// are not read-only (MCP specification), so read-only tools state neither.
type AnnotationView struct {
	ReadOnlyHint    *bool `json:"readOnlyHint,omitempty"`
	DestructiveHint *bool `json:"destructiveHint,omitempty"`
	IdempotentHint  *bool `json:"idempotentHint,omitempty"`
	OpenWorldHint   *bool `json:"openWorldHint,omitempty"`
}

// ProfileView lists a profile's tools as tools/list shows them.
func ProfileView(c *Catalog, p *Profile, readOnly bool) []ToolView {
	var out []ToolView
	for _, i := range profileEntries(c, p) {
		var v ToolView
		if i < len(c.Tools) {
			t := c.Tools[i]
			v = ToolView{Name: t.Name, Description: t.Description, InputSchema: schemaJSON(t.Schema), write: t.Access == "write", Annotations: annotationView(t)}
		} else {
			a := c.Aliases[i-len(c.Tools)]
			v = ToolView{Name: a.Name, Description: a.Description, InputSchema: schemaJSON(a.Schema), write: a.Target.Access == "write", Annotations: annotationView(a.Target)}
		}
		if readOnly && v.write {
			continue
		}
		out = append(out, v)
	}
	return out
}

func annotationView(t *Tool) *AnnotationView {
	a := t.Annotations
	v := AnnotationView{}
	f, tr := false, true
	if *a.ReadOnly {
		v.ReadOnlyHint = &tr
	}
	if !*a.ReadOnly && !*a.Destructive {
		v.DestructiveHint = &f
	}
	if !*a.ReadOnly && *a.Idempotent {
		v.IdempotentHint = &tr
	}
	if !*a.OpenWorld {
		v.OpenWorldHint = &f
	}
	if v == (AnnotationView{}) {
		return nil
	}
	return &v
}

// Listing is the compact JSON of one tools/list entry.
func Listing(t ToolView) string {
	b, err := marshalCompact(t)
	if err != nil {
		panic(err) // strings, raw JSON produced by schemaJSON and booleans only
	}
	return string(b)
}

// ToolsList is the compact JSON of a tools/list result.
func ToolsList(tools []ToolView) ([]byte, error) {
	if tools == nil {
		tools = []ToolView{}
	}
	return marshalCompact(struct {
		Tools []ToolView `json:"tools"`
	}{tools})
}

// ModelView is the compact JSON of what a model reads of one tool: its
// name, description and input schema.
func ModelView(t ToolView) ([]byte, error) {
	return marshalCompact(struct {
		Name        string          `json:"name"`
		Description string          `json:"description"`
		InputSchema json.RawMessage `json:"inputSchema"`
	}{t.Name, t.Description, t.InputSchema})
}

func marshalCompact(v any) ([]byte, error) {
	var b bytes.Buffer
	enc := json.NewEncoder(&b)
	enc.SetEscapeHTML(false)
	if err := enc.Encode(v); err != nil {
		return nil, fmt.Errorf("marshal: %w", err)
	}
	return bytes.TrimSuffix(b.Bytes(), []byte("\n")), nil
}
