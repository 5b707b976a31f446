package clientsetup

import (
	"bytes"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"strings"

	"github.com/tailscale/hujson"
)

// jsonContainer is the key of the client's server table.
func jsonContainer(c Client) string {
	if c == OpenCode {
		return "mcp"
	}
	return "mcpServers"
}

// The entry shapes, as structs so the keys come out in a fixed order.
type (
	claudeStdio struct {
		Type    string            `json:"type"`
		Command string            `json:"command"`
		Args    []string          `json:"args"`
		Env     map[string]string `json:"env,omitempty"`
	}
	claudeHTTP struct {
		Type    string            `json:"type"`
		URL     string            `json:"url"`
		Headers map[string]string `json:"headers"`
	}
	openCodeLocal struct {
		Type        string            `json:"type"`
		Command     []string          `json:"command"`
		Environment map[string]string `json:"environment,omitempty"`
		Enabled     bool              `json:"enabled"`
	}
	openCodeRemote struct {
		Type    string            `json:"type"`
		URL     string            `json:"url"`
		Headers map[string]string `json:"headers"`
		Enabled bool              `json:"enabled"`
	}
	cursorStdio struct {
		Command string            `json:"command"`
		Args    []string          `json:"args"`
		Env     map[string]string `json:"env,omitempty"`
	}
	cursorHTTP struct {
		URL     string            `json:"url"`
		Headers map[string]string `json:"headers"`
	}
)

// jsonEntry is the client's JSON value for e. The bearer header names the
// token variable in the client's own interpolation syntax, so the token
// is read when the client runs and never stored in its file.
func jsonEntry(c Client, e Entry) any {
	switch c {
	case Claude:
		if e.HTTP {
			return claudeHTTP{Type: "http", URL: e.url(), Headers: map[string]string{"Authorization": "Bearer ${" + TokenEnv + "}"}}
		}
		return claudeStdio{Type: "stdio", Command: e.Command, Args: e.Args(), Env: e.Env()}
	case OpenCode:
		if e.HTTP {
			return openCodeRemote{Type: "remote", URL: e.url(), Headers: map[string]string{"Authorization": "Bearer {env:" + TokenEnv + "}"}, Enabled: true}
		}
		return openCodeLocal{Type: "local", Command: append([]string{e.Command}, e.Args()...), Environment: e.Env(), Enabled: true}
	default: // Cursor
		if e.HTTP {
			return cursorHTTP{URL: e.url(), Headers: map[string]string{"Authorization": "Bearer ${env:" + TokenEnv + "}"}}
		}
		return cursorStdio{Command: e.Command, Args: e.Args(), Env: e.Env()}
	}
}

// jsonSnippet is the smallest document holding only our entry.
func jsonSnippet(t Target, e Entry) ([]byte, error) {
	v, err := json.Marshal(jsonEntry(t.Client, e))
	if err != nil {
		return nil, err
	}
	inner := []member{{Key: t.Name, Value: v}}
	outer := []member{{Key: jsonContainer(t.Client), Value: encodeObject(inner)}}
	return indentJSON(encodeObject(outer))
}

// member is one key of a JSON object, its value kept as written.
type member struct {
	Key   string
	Value json.RawMessage
}

// decodeObject reads a JSON object keeping its keys' order and values'
// bytes. Errors carry the line and column.
func decodeObject(file string, b []byte) ([]member, error) {
	dec := json.NewDecoder(bytes.NewReader(b))
	fail := func(err error) error {
		off := dec.InputOffset()
		var se *json.SyntaxError
		if errors.As(err, &se) {
			off = se.Offset
		}
		line, col := lineCol(b, int(off))
		return fmt.Errorf("%s:%d:%d: not valid JSON (comments and trailing commas are not accepted here): %w", file, line, col, err)
	}
	tok, err := dec.Token()
	if err != nil {
		return nil, fail(err)
	}
	if d, ok := tok.(json.Delim); !ok || d != '{' {
		return nil, fail(errors.New("the document is not a JSON object"))
	}
	var out []member
	for dec.More() {
		tok, err := dec.Token()
		if err != nil {
			return nil, fail(err)
		}
		key, _ := tok.(string)
		var raw json.RawMessage
		if err := dec.Decode(&raw); err != nil {
			return nil, fail(err)
		}
		out = append(out, member{Key: key, Value: raw})
	}
	if _, err := dec.Token(); err != nil {
		return nil, fail(err)
	}
	if _, err := dec.Token(); err != io.EOF {
		return nil, fail(errors.New("content after the top-level object"))
	}
	return out, nil
}

func encodeObject(ms []member) []byte {
	var buf bytes.Buffer
	buf.WriteByte('{')
	for i, m := range ms {
		if i > 0 {
			buf.WriteByte(',')
		}
		k, _ := json.Marshal(m.Key)
		buf.Write(k)
		buf.WriteByte(':')
		buf.Write(m.Value)
	}
	buf.WriteByte('}')
	return buf.Bytes()
}

func indentJSON(b []byte) ([]byte, error) {
	var out bytes.Buffer
	if err := json.Indent(&out, b, "", "  "); err != nil {
		return nil, err
	}
	out.WriteByte('\n')
	return out.Bytes(), nil
}

// jsonc says whether the client's file may hold comments and trailing
// commas (OpenCode reads JSONC; Claude Code and Cursor read strict JSON).
func jsonc(c Client) bool { return c == OpenCode }

// oursJSON is our entry for e as ordered keys and decoded values, and
// the entry of the other transport (its keys that ours lacks are removed).
func oursJSON(c Client, e Entry) ([]member2, map[string]any, error) {
	raw, err := json.Marshal(jsonEntry(c, e))
	if err != nil {
		return nil, nil, err
	}
	ms, err := decodeObject("entry", raw)
	if err != nil {
		return nil, nil, err
	}
	var ours []member2
	for _, m := range ms {
		var v any
		if err := json.Unmarshal(m.Value, &v); err != nil {
			return nil, nil, err
		}
		ours = append(ours, member2{key: m.Key, value: v})
	}
	flipped := e
	flipped.HTTP = !e.HTTP
	flipped.ReadOnly = true // so that its env key counts as the other transport's
	var other map[string]any
	rawOther, err := json.Marshal(jsonEntry(c, flipped))
	if err != nil {
		return nil, nil, err
	}
	if err := json.Unmarshal(rawOther, &other); err != nil {
		return nil, nil, err
	}
	return ours, other, nil
}

// pointer is the JSON pointer (RFC 6901) of path.
func pointer(path ...string) string {
	var b strings.Builder
	for _, p := range path {
		b.WriteByte('/')
		b.WriteString(strings.NewReplacer("~", "~0", "/", "~1").Replace(p))
	}
	return b.String()
}

// mergeJSON puts the entry into old (a client's whole JSON file, or empty
// for a new file) by patching the parsed document in place: every other
// key, and every key of our existing entry we do not own (env variables
// such as INTEROP_DB, timeouts, per-tool settings, enabled), keeps its
// value, order, and (in OpenCode's JSONC) its comments and layout.
func mergeJSON(t Target, e Entry, old []byte) ([]byte, []Change, error) {
	empty := len(bytes.TrimSpace(old)) == 0
	src := old
	if empty {
		src = []byte("{}")
	}
	doc, err := hujson.Parse(src)
	if !empty && !jsonc(t.Client) && (err != nil || !doc.IsStandard()) {
		// Strict JSON: refused with the position of the first error.
		if _, serr := decodeObject(t.File, old); serr != nil {
			return nil, nil, serr
		}
	}
	if err != nil {
		return nil, nil, fmt.Errorf("%s: not valid JSON or JSONC: %w", t.File, err)
	}
	if _, ok := doc.Value.(*hujson.Object); !ok {
		return nil, nil, fmt.Errorf("%s: the document is not a JSON object", t.File)
	}
	inPlace := jsonc(t.Client) && !empty && !doc.IsStandard()
	// Only our server table's type and our entry are decoded: the patch
	// touches nothing else.
	before := map[string]any{}
	if cv := doc.Find(pointer(jsonContainer(t.Client))); cv != nil {
		if _, ok := cv.Value.(*hujson.Object); ok {
			servers := map[string]any{}
			if ev := doc.Find(pointer(jsonContainer(t.Client), t.Name)); ev != nil {
				if servers[t.Name], err = valueOf(*ev); err != nil {
					return nil, nil, fmt.Errorf("%s: %w", t.File, err)
				}
			}
			before[jsonContainer(t.Client)] = servers
		} else if before[jsonContainer(t.Client)], err = valueOf(*cv); err != nil {
			return nil, nil, fmt.Errorf("%s: %w", t.File, err)
		}
	}
	container := jsonContainer(t.Client)
	ours, other, err := oursJSON(t.Client, e)
	if err != nil {
		return nil, nil, err
	}
	oursMap := map[string]any{}
	for _, m := range ours {
		oursMap[m.key] = m.value
	}
	// A new entry goes in with its keys in our order.
	oursRaw, err := json.Marshal(jsonEntry(t.Client, e))
	if err != nil {
		return nil, nil, err
	}
	what := container + "." + t.Name
	var patch []map[string]any
	var oldEntry, want map[string]any
	var chg []Change
	servers, hasServers := before[container]
	switch sv := servers.(type) {
	case nil:
		op := "add"
		if hasServers {
			op = "replace"
		}
		patch = append(patch, map[string]any{"op": op, "path": pointer(container), "value": json.RawMessage(encodeObject([]member{{Key: t.Name, Value: oursRaw}}))})
		want = oursMap
	case map[string]any:
		prev, exists := sv[t.Name]
		switch pv := prev.(type) {
		case map[string]any:
			oldEntry = pv
			ops, err := entryPlan(t.File+": "+what, pv, ours, other)
			if err != nil {
				return nil, nil, err
			}
			for _, op := range ops {
				path := pointer(append([]string{container, t.Name}, op.path...)...)
				switch {
				case op.remove:
					patch = append(patch, map[string]any{"op": "remove", "path": path})
				default:
					patch = append(patch, map[string]any{"op": "add", "path": path, "value": op.value})
				}
			}
			want = applyOps(pv, ops)
			chg = changes(pv, ops)
		case nil:
			op := "add"
			if exists {
				op = "replace"
			}
			patch = append(patch, map[string]any{"op": op, "path": pointer(container, t.Name), "value": json.RawMessage(oursRaw)})
			want = oursMap
		default:
			return nil, nil, fmt.Errorf("%s: %s is %s, want an object; not changed — fix it by hand", t.File, what, typeName(prev))
		}
	default:
		return nil, nil, fmt.Errorf("%s: %s is %s, want an object; not changed — fix it by hand", t.File, container, typeName(servers))
	}
	if oldEntry == nil {
		for _, m := range ours {
			chg = append(chg, Change{Key: m.key, Kind: "added"})
		}
	}
	if len(patch) > 0 {
		pb, err := json.Marshal(patch)
		if err != nil {
			return nil, nil, err
		}
		if err := doc.Patch(pb); err != nil {
			return nil, nil, fmt.Errorf("merging into %s: %w", t.File, err)
		}
	}
	var out []byte
	if inPlace {
		// JSONC keeps its comments and layout: only the patched values change.
		out = doc.Pack()
	} else {
		if out, err = indentJSON(bytes.TrimSpace(doc.Pack())); err != nil {
			return nil, nil, fmt.Errorf("merging into %s: %w", t.File, err)
		}
	}
	return out, chg, checkJSON(t, want, out)
}

// valueOf decodes one parsed value (comments and trailing commas dropped).
func valueOf(v hujson.Value) (any, error) {
	c := v.Clone()
	c.Standardize()
	var out any
	err := json.Unmarshal(c.Pack(), &out)
	return out, err
}

// checkJSON re-reads the merged document: it parses and our entry reads
// back as want. The patch changed nothing else (re-indenting changes no
// value).
func checkJSON(t Target, want map[string]any, merged []byte) error {
	doc, err := hujson.Parse(merged)
	if err != nil {
		return fmt.Errorf("merged %s does not parse: %w", t.File, err)
	}
	var got any
	if ev := doc.Find(pointer(jsonContainer(t.Client), t.Name)); ev != nil {
		if got, err = valueOf(*ev); err != nil {
			return fmt.Errorf("merged %s: %w", t.File, err)
		}
	}
	if !equalJSON(want, got) {
		b, _ := json.Marshal(got)
		return fmt.Errorf("merged %s: the %s entry reads back as %s", t.File, t.Name, b)
	}
	return nil
}

func equalJSON(a, b any) bool {
	x, _ := json.Marshal(a)
	y, _ := json.Marshal(b)
	return bytes.Equal(x, y)
}

// lineCol turns a byte offset into a 1-based line and column.
func lineCol(b []byte, off int) (int, int) {
	if off > len(b) {
		off = len(b)
	}
	line := 1 + bytes.Count(b[:off], []byte{'\n'})
	col := off - bytes.LastIndexByte(b[:off], '\n')
	return line, col
}
