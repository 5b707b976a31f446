package clientsetup

import (
	"bytes"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"strings"
	"unicode/utf8"

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
// for a new file). Only our entry's bytes are rewritten (or our server
// table's, or a new member added to the end of the enclosing object):
// every other byte of the file is kept, comments and layout included,
// and every key of our existing entry we do not own (env variables such
// as INTEROP_DB, timeouts, per-tool settings, enabled) keeps its value.
// The file is read in one pass (json.Valid, then a byte scanner); only
// the entry itself is parsed into a tree.
func mergeJSON(t Target, e Entry, old []byte) ([]byte, []Change, error) {
	ours, other, err := oursJSON(t.Client, e)
	if err != nil {
		return nil, nil, err
	}
	added := func() []Change {
		var chg []Change
		for _, m := range ours {
			chg = append(chg, Change{Key: m.key, Kind: "added"})
		}
		return chg
	}
	if len(bytes.TrimSpace(old)) == 0 {
		out, err := jsonSnippet(t, e)
		return out, added(), err
	}
	if err := validUTF8(t.File, old); err != nil {
		return nil, nil, err
	}
	standard := json.Valid(old)
	if !standard {
		if !jsonc(t.Client) {
			// Strict JSON: refused with the position of the first error.
			if _, serr := decodeObject(t.File, old); serr != nil {
				return nil, nil, serr
			}
			return nil, nil, fmt.Errorf("%s: not valid JSON", t.File)
		}
		if err := validJSONC(t.File, old); err != nil {
			return nil, nil, err
		}
	}
	s := jsonScan{b: old}
	start := s.space(0)
	if start >= len(old) || old[start] != '{' {
		return nil, nil, fmt.Errorf("%s: the document is not a JSON object", t.File)
	}
	container := jsonContainer(t.Client)
	root := s.object(start, container)
	unit := s.indentUnit(root)
	oursRaw, err := json.Marshal(jsonEntry(t.Client, e))
	if err != nil {
		return nil, nil, err
	}
	oursMap := map[string]any{}
	for _, m := range ours {
		oursMap[m.key] = m.value
	}
	withEntry := encodeObject([]member{{Key: t.Name, Value: oursRaw}})
	var edits []edit
	var chg []Change
	want := oursMap
	switch {
	case len(root.found) > 1:
		return nil, nil, duplicate(t.File, old, container, "the top-level object", root.found)
	case len(root.found) == 0:
		if edits, err = s.insertMember(root, container, withEntry, unit); err != nil {
			return nil, nil, err
		}
		chg = added()
	default:
		cm := root.found[0]
		switch old[cm.valStart] {
		case 'n': // null
			ed, err := s.replaceValue(root, cm, withEntry, unit)
			if err != nil {
				return nil, nil, err
			}
			edits, chg = []edit{ed}, added()
		case '{':
			servers := s.object(cm.valStart, t.Name)
			switch {
			case len(servers.found) > 1:
				return nil, nil, duplicate(t.File, old, t.Name, container, servers.found)
			case len(servers.found) == 0:
				if edits, err = s.insertMember(servers, t.Name, oursRaw, unit); err != nil {
					return nil, nil, err
				}
				chg = added()
			default:
				em := servers.found[0]
				ed, w, c, err := patchEntry(t, s, servers, em, ours, other, oursRaw, unit)
				if err != nil {
					return nil, nil, err
				}
				if ed.text == nil {
					return old, nil, nil // nothing to change
				}
				edits, want, chg = []edit{ed}, w, c
			}
		default:
			v, err := valueOfBytes(old[cm.valStart:cm.valEnd])
			if err != nil {
				return nil, nil, fmt.Errorf("%s: %w", t.File, err)
			}
			return nil, nil, fmt.Errorf("%s: %s is %s, want an object; not changed — fix it by hand", t.File, container, typeName(v))
		}
	}
	out := splice(old, edits...)
	if standard && bytes.IndexByte(bytes.TrimSpace(old), '\n') < 0 {
		// A document on one line has no layout to keep: it is indented
		// whole, so our entry is readable (values are unchanged).
		if out, err = indentJSON(bytes.TrimSpace(out)); err != nil {
			return nil, nil, fmt.Errorf("merging into %s: %w", t.File, err)
		}
	}
	return out, chg, checkJSON(t, standard, want, out)
}

// patchEntry works out the new bytes of our existing entry em (a member
// of servers): the plan's keys set or removed in place, the rest of the
// entry kept. A changed entry without comments is re-indented to the
// file's layout; one with comments (JSONC) keeps them where they are.
// An empty edit text: nothing changes.
func patchEntry(t Target, s jsonScan, servers jsonObject, em jsonMember, ours []member2, other map[string]any, oursRaw []byte, unit string) (edit, map[string]any, []Change, error) {
	what := jsonContainer(t.Client) + "." + t.Name
	raw := s.b[em.valStart:em.valEnd]
	doc, err := hujson.Parse(raw)
	if err != nil {
		return edit{}, nil, nil, fmt.Errorf("%s: %s: %w", t.File, what, err)
	}
	prev, err := valueOf(doc)
	if err != nil {
		return edit{}, nil, nil, fmt.Errorf("%s: %s: %w", t.File, what, err)
	}
	switch pv := prev.(type) {
	case nil:
		ed, err := s.replaceValue(servers, em, oursRaw, unit)
		want := map[string]any{}
		var chg []Change
		for _, m := range ours {
			want[m.key] = m.value
			chg = append(chg, Change{Key: m.key, Kind: "added"})
		}
		return ed, want, chg, err
	case map[string]any:
		ops, err := entryPlan(t.File+": "+what, pv, ours, other)
		if err != nil {
			return edit{}, nil, nil, err
		}
		if len(ops) == 0 {
			return edit{}, pv, nil, nil
		}
		var patch []map[string]any
		for _, op := range ops {
			path := pointer(op.path...)
			if op.remove {
				patch = append(patch, map[string]any{"op": "remove", "path": path})
			} else {
				patch = append(patch, map[string]any{"op": "add", "path": path, "value": op.value})
			}
		}
		pb, err := json.Marshal(patch)
		if err != nil {
			return edit{}, nil, nil, err
		}
		if err := doc.Patch(pb); err != nil {
			return edit{}, nil, nil, fmt.Errorf("merging into %s: %w", t.File, err)
		}
		text := doc.Pack()
		if doc.IsStandard() {
			ind, alone := lineIndent(s.b, em.keyStart)
			if !alone {
				ind = s.memberIndent(servers, unit)
			}
			if text, err = render(text, s.spans(servers), ind, unit); err != nil {
				return edit{}, nil, nil, fmt.Errorf("merging into %s: %w", t.File, err)
			}
		}
		return edit{from: em.valStart, to: em.valEnd, text: text}, applyOps(pv, ops), changes(pv, ops), nil
	default:
		return edit{}, nil, nil, fmt.Errorf("%s: %s is %s, want an object; not changed — fix it by hand", t.File, what, typeName(prev))
	}
}

// valueOf decodes one parsed value (comments and trailing commas dropped).
func valueOf(v hujson.Value) (any, error) {
	c := v.Clone()
	c.Standardize()
	var out any
	err := json.Unmarshal(c.Pack(), &out)
	return out, err
}

// validJSONC refuses b unless it is JSON with comments and trailing
// commas, naming the line and column of the first error.
func validJSONC(file string, b []byte) error {
	if err := validUTF8(file, b); err != nil {
		return err
	}
	std := standardJSONC(b)
	if json.Valid(std) {
		return nil
	}
	if _, err := decodeObject(file, std); err != nil {
		return fmt.Errorf("%s", strings.Replace(err.Error(), "(comments and trailing commas are not accepted here)", "or JSONC", 1))
	}
	return fmt.Errorf("%s: not valid JSON or JSONC", file)
}

// validUTF8 refuses b unless it is UTF-8, naming the first bad byte.
func validUTF8(file string, b []byte) error {
	if utf8.Valid(b) {
		return nil
	}
	off := 0
	for off < len(b) {
		r, n := utf8.DecodeRune(b[off:])
		if r == utf8.RuneError && n <= 1 {
			break
		}
		off += n
	}
	line, col := lineCol(b, off)
	return fmt.Errorf("%s:%d:%d: not valid UTF-8; not changed", file, line, col)
}

// valueOfBytes decodes one JSON or JSONC value.
func valueOfBytes(b []byte) (any, error) {
	v, err := hujson.Parse(b)
	if err != nil {
		return nil, err
	}
	return valueOf(v)
}

// checkJSON re-reads the merged document: it is still valid (strict JSON
// when the original was) and our entry reads back as want. Everything
// outside the edited bytes is the original's, byte for byte.
func checkJSON(t Target, standard bool, want map[string]any, merged []byte) error {
	if standard && !json.Valid(merged) {
		return fmt.Errorf("merged %s is not valid JSON; not written", t.File)
	}
	if !standard {
		if err := validJSONC(t.File, merged); err != nil {
			return fmt.Errorf("merged %w", err)
		}
	}
	s := jsonScan{b: merged}
	root := s.object(s.space(0), jsonContainer(t.Client))
	var got any
	if len(root.found) == 1 && merged[root.found[0].valStart] == '{' {
		servers := s.object(root.found[0].valStart, t.Name)
		if len(servers.found) == 1 {
			m := servers.found[0]
			var err error
			if got, err = valueOfBytes(merged[m.valStart:m.valEnd]); err != nil {
				return fmt.Errorf("merged %s: %w", t.File, err)
			}
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
