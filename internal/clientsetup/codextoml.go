package clientsetup

import (
	"bytes"
	"errors"
	"fmt"
	"reflect"
	"sort"
	"strings"

	"github.com/pelletier/go-toml/v2"
	"github.com/pelletier/go-toml/v2/unstable"
)

// codexApproval is the approval mode written for the entry: Codex 0.171
// accepts auto, prompt, writes and approve for default_tools_approval_mode;
// only "approve" lets a session whose approval policy is "never" call the
// tools annotated destructive or open-world.
const codexApproval = "approve"

// codexEntry is the [mcp_servers.agent_interop] table for e, as TOML text.
func codexEntry(name string, e Entry) string {
	var b strings.Builder
	fmt.Fprintf(&b, "[mcp_servers.%s]\n", name)
	if e.HTTP {
		fmt.Fprintf(&b, "url = %s\n", tomlString(e.url()))
		fmt.Fprintf(&b, "bearer_token_env_var = %s\n", tomlString(TokenEnv))
	} else {
		fmt.Fprintf(&b, "command = %s\n", tomlString(e.Command))
		var args []string
		for _, a := range e.Args() {
			args = append(args, tomlString(a))
		}
		fmt.Fprintf(&b, "args = [%s]\n", strings.Join(args, ", "))
		if env := e.Env(); len(env) > 0 {
			keys := make([]string, 0, len(env))
			for k := range env {
				keys = append(keys, k)
			}
			sort.Strings(keys)
			var kv []string
			for _, k := range keys {
				kv = append(kv, k+" = "+tomlString(env[k]))
			}
			fmt.Fprintf(&b, "env = { %s }\n", strings.Join(kv, ", "))
		}
	}
	fmt.Fprintf(&b, "default_tools_approval_mode = %s\n", tomlString(codexApproval))
	b.WriteString("enabled = true\n")
	return b.String()
}

// codexEntryValue is what the entry decodes to, for checking.
func codexEntryValue(name string, e Entry) (map[string]any, error) {
	var doc map[string]any
	if err := toml.Unmarshal([]byte(codexEntry(name, e)), &doc); err != nil {
		return nil, err
	}
	return doc["mcp_servers"].(map[string]any)[name].(map[string]any), nil
}

// tomlString is a TOML basic string (Marshal quotes and escapes it).
func tomlString(s string) string {
	b, err := toml.Marshal(map[string]string{"v": s})
	if err != nil {
		return fmt.Sprintf("%q", s)
	}
	return strings.TrimSpace(strings.TrimPrefix(string(b), "v = "))
}

// parseTOML validates a whole document; the error names file:line:column.
func parseTOML(file string, b []byte) (map[string]any, error) {
	var doc map[string]any
	if err := toml.Unmarshal(b, &doc); err != nil {
		var de *toml.DecodeError
		if errors.As(err, &de) {
			row, col := de.Position()
			return nil, fmt.Errorf("%s:%d:%d: not valid TOML: %s", file, row, col, de.Error())
		}
		return nil, fmt.Errorf("%s: not valid TOML: %w", file, err)
	}
	return doc, nil
}

// span is a byte range of the document.
type span struct{ start, end int }

// codexSpans finds every piece of the document that defines the entry
// name under mcp_servers: its table and sub-tables ([mcp_servers.name],
// [mcp_servers.name.env], ...) from the header to the next header (the
// comment lines right above the next header stay with it), and key/values
// whose full key starts with mcp_servers.name (a dotted key at the root or
// `name = {...}` inside [mcp_servers]), whole lines. It also returns where
// the first such table began (-1 if none).
func codexSpans(doc []byte, name string) ([]span, int, error) {
	p := unstable.Parser{KeepComments: true}
	p.Reset(doc)
	var (
		spans        []span
		firstTable   = -1
		current      []string // the table the following key/values are in
		open         = -1     // start of our table's span, not yet closed
		commentStart = -1     // first line of the comment run right above
		prevEnd      = -1     // offset past the previous expression's line
	)
	target := []string{"mcp_servers", name}
	ours := func(path []string) bool {
		return len(path) >= len(target) && reflect.DeepEqual(path[:len(target)], target)
	}
	keyPath := func(it unstable.Iterator) ([]string, int) {
		var path []string
		start := -1
		for it.Next() {
			n := it.Node()
			if start < 0 {
				start = int(n.Raw.Offset)
			}
			path = append(path, string(n.Data))
		}
		return path, start
	}
	for p.NextExpression() {
		e := p.Expression()
		switch e.Kind {
		case unstable.Comment:
			ls := lineStart(doc, int(e.Raw.Offset))
			if commentStart < 0 || prevEnd != ls {
				commentStart = ls
			}
			prevEnd = lineEnd(doc, int(e.Raw.Offset))
			continue
		case unstable.Table, unstable.ArrayTable:
			path, start := keyPath(e.Children())
			ls := lineStart(doc, start)
			blockStart := ls
			if commentStart >= 0 && prevEnd == ls {
				blockStart = commentStart // those comments introduce this table
			}
			if open >= 0 {
				spans = append(spans, span{open, blockStart})
				open = -1
			}
			if ours(path) {
				if e.Kind == unstable.ArrayTable {
					return nil, 0, fmt.Errorf("[[%s]] is an array of tables; fix it by hand", strings.Join(path, "."))
				}
				open = ls
				if firstTable < 0 {
					firstTable = ls
				}
			}
			current = path
			prevEnd = lineEnd(doc, start)
		case unstable.KeyValue:
			path, start := keyPath(e.Key())
			full := append(append([]string(nil), current...), path...)
			end := lineEnd(doc, int(e.Raw.Offset+e.Raw.Length))
			if open < 0 && ours(full) {
				spans = append(spans, span{lineStart(doc, start), end})
			}
			prevEnd = end
		}
		commentStart = -1
	}
	if err := p.Error(); err != nil {
		return nil, 0, err
	}
	if open >= 0 {
		spans = append(spans, span{open, len(doc)})
	}
	return spans, firstTable, nil
}

func lineStart(doc []byte, off int) int {
	return bytes.LastIndexByte(doc[:off], '\n') + 1
}

// lineEnd is the offset just past the newline ending the line at off.
func lineEnd(doc []byte, off int) int {
	if off >= len(doc) {
		return len(doc)
	}
	i := bytes.IndexByte(doc[off:], '\n')
	if i < 0 {
		return len(doc)
	}
	return off + i + 1
}

// mergeCodex puts the entry into a Codex config.toml: the old entry (all
// its pieces) goes, the new table takes the place of the first old table
// or is appended, and the rest of the file is kept byte for byte.
func mergeCodex(t Target, e Entry, old []byte) ([]byte, error) {
	before, err := parseTOML(t.File, old)
	if err != nil {
		return nil, err
	}
	spans, at, err := codexSpans(old, t.Name)
	if err != nil {
		return nil, fmt.Errorf("%s: %w", t.File, err)
	}
	block := codexEntry(t.Name, e)
	var out []byte
	prev := 0
	inserted := false
	for _, s := range spans {
		out = append(out, old[prev:s.start]...)
		if s.start == at && !inserted {
			out = append(out, block...)
			out = append(out, '\n')
			inserted = true
		}
		prev = s.end
	}
	out = append(out, old[prev:]...)
	if !inserted {
		if len(out) > 0 && !bytes.HasSuffix(out, []byte("\n")) {
			out = append(out, '\n')
		}
		if len(bytes.TrimSpace(out)) > 0 {
			out = append(out, '\n')
		}
		out = append(out, block...)
	}
	out = append(bytes.TrimRight(out, "\n"), '\n')
	return out, checkCodex(t, e, before, out)
}

// checkCodex re-reads the merged file: the entry reads back as written
// and every other value is unchanged.
func checkCodex(t Target, e Entry, before map[string]any, merged []byte) error {
	after, err := parseTOML(t.File+" (merged)", merged)
	if err != nil {
		return fmt.Errorf("the merged file would not parse (fix %s by hand): %w", t.File, err)
	}
	want, err := codexEntryValue(t.Name, e)
	if err != nil {
		return err
	}
	servers, _ := after["mcp_servers"].(map[string]any)
	if !reflect.DeepEqual(servers[t.Name], want) {
		return fmt.Errorf("merged %s: mcp_servers.%s reads back as %v", t.File, t.Name, servers[t.Name])
	}
	strip := func(doc map[string]any) map[string]any {
		out := map[string]any{}
		for k, v := range doc {
			out[k] = v
		}
		if s, ok := out["mcp_servers"].(map[string]any); ok {
			rest := map[string]any{}
			for k, v := range s {
				if k != t.Name {
					rest[k] = v
				}
			}
			if len(rest) == 0 {
				delete(out, "mcp_servers")
			} else {
				out["mcp_servers"] = rest
			}
		}
		return out
	}
	if !reflect.DeepEqual(strip(before), strip(after)) {
		return fmt.Errorf("merging into %s would change other settings; add the entry by hand", t.File)
	}
	return nil
}
