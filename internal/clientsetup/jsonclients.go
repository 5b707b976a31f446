package clientsetup

import (
	"bytes"
	"encoding/json"
	"errors"
	"fmt"
	"io"
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

// setMember replaces key's value in ms or appends it.
func setMember(ms []member, key string, v json.RawMessage) []member {
	for i := range ms {
		if ms[i].Key == key {
			ms[i].Value = v
			return ms
		}
	}
	return append(ms, member{Key: key, Value: v})
}

// mergeJSON puts the entry into old (a client's whole JSON file, or empty
// for a new file): every other key keeps its order and value.
func mergeJSON(t Target, e Entry, old []byte) ([]byte, error) {
	var top []member
	if len(bytes.TrimSpace(old)) > 0 {
		var err error
		if top, err = decodeObject(t.File, old); err != nil {
			return nil, err
		}
	}
	container := jsonContainer(t.Client)
	var servers []member
	for _, m := range top {
		if m.Key != container {
			continue
		}
		if bytes.Equal(bytes.TrimSpace(m.Value), []byte("null")) {
			break
		}
		var err error
		if servers, err = decodeObject(t.File+" ("+container+")", m.Value); err != nil {
			return nil, err
		}
	}
	v, err := json.Marshal(jsonEntry(t.Client, e))
	if err != nil {
		return nil, err
	}
	servers = setMember(servers, t.Name, v)
	top = setMember(top, container, encodeObject(servers))
	out, err := indentJSON(encodeObject(top))
	if err != nil {
		return nil, fmt.Errorf("merging into %s: %w", t.File, err)
	}
	return out, checkJSON(t, e, old, out)
}

// checkJSON re-reads the merged document: our entry reads back as
// written and every other value is unchanged.
func checkJSON(t Target, e Entry, old, merged []byte) error {
	var before, after map[string]any
	if len(bytes.TrimSpace(old)) > 0 {
		if err := json.Unmarshal(old, &before); err != nil {
			return fmt.Errorf("%s: %w", t.File, err)
		}
	}
	if err := json.Unmarshal(merged, &after); err != nil {
		return fmt.Errorf("merged %s does not parse: %w", t.File, err)
	}
	container := jsonContainer(t.Client)
	servers, _ := after[container].(map[string]any)
	want, _ := json.Marshal(jsonEntry(t.Client, e))
	got, _ := json.Marshal(servers[t.Name])
	var w, g any
	_ = json.Unmarshal(want, &w)
	_ = json.Unmarshal(got, &g)
	if !equalJSON(w, g) {
		return fmt.Errorf("merged %s: the %s entry reads back as %s", t.File, t.Name, got)
	}
	for k, v := range before {
		if k == container {
			bs, _ := v.(map[string]any)
			for name, sv := range bs {
				if name != t.Name && !equalJSON(sv, servers[name]) {
					return fmt.Errorf("merged %s would change %s.%s", t.File, container, name)
				}
			}
			continue
		}
		if !equalJSON(v, after[k]) {
			return fmt.Errorf("merged %s would change %q", t.File, k)
		}
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
