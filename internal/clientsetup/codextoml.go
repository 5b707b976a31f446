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

// codexScan is one linear pass over a config.toml (go-toml's unstable
// parser; go-toml's Unmarshal tracks keys with a linear search per table
// and takes minutes on a config of many tables). It finds every piece of
// the document that defines the entry name under mcp_servers: its table
// and sub-tables ([mcp_servers.name], [mcp_servers.name.env], ...) from
// the header to the next header (the comment lines right above the next
// header stay with it), and key/values whose full key starts with
// mcp_servers.name (a dotted key at the root or `name = {...}` inside
// [mcp_servers]), whole lines. It returns those spans, where the first
// such table began (-1 if none), and a small TOML document holding only
// those pieces (to decode the entry). It refuses a key or table defined
// twice and a table opened inside a value, naming line and column.
//
// With all false only keys under mcp_servers are checked for duplicates:
// the check of a merged file, whose other bytes were checked already.
func codexScan(doc []byte, name string, all bool) ([]span, int, []byte, error) {
	p := unstable.Parser{KeepComments: true}
	p.Reset(doc)
	var (
		spans        []span
		firstTable   = -1
		current      []string // the table the following key/values are in
		open         = -1     // start of our table's span, not yet closed
		commentStart = -1     // first line of the comment run right above
		prevEnd      = -1     // offset past the previous expression's line
		defs         map[string]byte
		curKey       string // the current table's key in defs
		skip         bool   // inside an array of tables: no duplicate check
		rootKV       []byte
		sections     []string
		sectionBody  = map[string][]byte{}
	)
	if all {
		defs = make(map[string]byte, len(doc)/64)
	} else {
		defs = map[string]byte{}
	}
	ours := func(path []string) bool {
		return len(path) >= 2 && path[0] == "mcp_servers" && path[1] == name
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
	fail := func(off int, format string, args ...any) error {
		line, col := lineCol(doc, off)
		return fmt.Errorf("%d:%d: %s", line, col, fmt.Sprintf(format, args...))
	}
	// prefixes checks that no proper prefix of path from index from on is
	// a value, and says whether one is an array of tables.
	prefixes := func(path []string, from, off int) (bool, error) {
		inArray := false
		for i := max(from, 1); i < len(path); i++ {
			switch defs[strings.Join(path[:i], "\x00")] {
			case 'v':
				return false, fail(off, "%s is a value, not a table", strings.Join(path[:i], "."))
			case 'a':
				inArray = true
			}
		}
		return inArray, nil
	}
	implicit := func(path []string, from int) {
		for i := max(from, 1); i < len(path); i++ {
			k := strings.Join(path[:i], "\x00")
			if _, ok := defs[k]; !ok {
				defs[k] = 'i'
			}
		}
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
			inArray, err := prefixes(path, 1, start)
			if err != nil {
				return nil, 0, nil, err
			}
			key := strings.Join(path, "\x00")
			skip = inArray || e.Kind == unstable.ArrayTable || !all && path[0] != "mcp_servers"
			if !skip || e.Kind == unstable.ArrayTable && !inArray {
				prev := defs[key]
				switch {
				case e.Kind == unstable.ArrayTable && (prev == 't' || prev == 'v' || prev == 'i'):
					return nil, 0, nil, fail(start, "[[%s]] redefines a table or key", strings.Join(path, "."))
				case e.Kind == unstable.Table && prev == 't':
					return nil, 0, nil, fail(start, "table [%s] is defined twice", strings.Join(path, "."))
				case e.Kind == unstable.Table && (prev == 'v' || prev == 'a'):
					return nil, 0, nil, fail(start, "[%s] redefines a key", strings.Join(path, "."))
				}
				if e.Kind == unstable.ArrayTable {
					defs[key] = 'a'
				} else {
					defs[key] = 't'
				}
				implicit(path, 1)
			}
			curKey = key
			if ours(path) {
				if e.Kind == unstable.ArrayTable {
					return nil, 0, nil, fmt.Errorf("[[%s]] is an array of tables; fix it by hand", strings.Join(path, "."))
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
			if !skip && (all || full[0] == "mcp_servers") {
				// The table itself was checked at its header; only the
				// dotted parts of the key are new here.
				if _, err := prefixes(full, len(current)+1, start); err != nil {
					return nil, 0, nil, err
				}
				key := strings.Join(path, "\x00")
				if len(current) > 0 {
					key = curKey + "\x00" + key
				}
				if _, ok := defs[key]; ok {
					return nil, 0, nil, fail(start, "key %s is defined twice", strings.Join(full, "."))
				}
				defs[key] = 'v'
				implicit(full, len(current)+1)
			}
			if open < 0 && ours(full) {
				ls := lineStart(doc, start)
				spans = append(spans, span{ls, end})
				if len(current) == 0 {
					rootKV = append(rootKV, doc[ls:end]...)
				} else {
					h := tomlHeader(current)
					if _, ok := sectionBody[h]; !ok {
						sections = append(sections, h)
					}
					sectionBody[h] = append(sectionBody[h], doc[ls:end]...)
				}
			}
			prevEnd = end
		}
		commentStart = -1
	}
	if err := p.Error(); err != nil {
		return nil, 0, nil, err
	}
	if open >= 0 {
		spans = append(spans, span{open, len(doc)})
	}
	mini := append([]byte(nil), rootKV...)
	for _, h := range sections {
		mini = append(mini, "\n"+h+"\n"...)
		mini = append(mini, sectionBody[h]...)
	}
	for _, s := range spans {
		if piece := doc[s.start:s.end]; bytes.HasPrefix(bytes.TrimLeft(piece, " \t"), []byte("[")) {
			mini = append(mini, '\n')
			mini = append(mini, piece...) // one of our tables
		}
	}
	return spans, firstTable, mini, nil
}

// bareKey reports a TOML key that needs no quotes: [A-Za-z0-9_-]+.
func bareKey(k string) bool {
	if k == "" {
		return false
	}
	for i := 0; i < len(k); i++ {
		c := k[i]
		if !('A' <= c && c <= 'Z' || 'a' <= c && c <= 'z' || '0' <= c && c <= '9' || c == '_' || c == '-') {
			return false
		}
	}
	return true
}

func tomlKey(k string) string {
	if bareKey(k) {
		return k
	}
	return tomlString(k)
}

func tomlHeader(path []string) string {
	parts := make([]string, len(path))
	for i, p := range path {
		parts[i] = tomlKey(p)
	}
	return "[" + strings.Join(parts, ".") + "]"
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

// scanCodex runs codexScan on a file, giving a syntax error its position
// (go-toml's DecodeError, computed only on this failure path).
func scanCodex(file string, doc []byte, name string) ([]span, int, []byte, error) {
	spans, at, mini, err := codexScan(doc, name, true)
	if err == nil {
		return spans, at, mini, nil
	}
	var pe *unstable.ParserError
	if errors.As(err, &pe) {
		if _, perr := parseTOML(file, doc); perr != nil {
			return nil, 0, nil, perr
		}
	}
	if strings.Contains(err.Error(), "array of tables") {
		return nil, 0, nil, fmt.Errorf("%s: %w", file, err)
	}
	return nil, 0, nil, fmt.Errorf("%s:%w (not valid TOML)", file, err)
}

// codexOrder is the order our keys are written in.
var codexOrder = []string{"command", "args", "env", "url", "bearer_token_env_var", "default_tools_approval_mode", "enabled"}

// entryFromMini decodes the entry from codexScan's small document (nil
// when there is none).
func entryFromMini(file, name string, mini []byte) (map[string]any, error) {
	if len(bytes.TrimSpace(mini)) == 0 {
		return nil, nil
	}
	var doc map[string]any
	if err := toml.Unmarshal(mini, &doc); err != nil {
		return nil, fmt.Errorf("%s: the mcp_servers.%s entry does not decode: %w", file, name, err)
	}
	servers, _ := doc["mcp_servers"].(map[string]any)
	v, ok := servers[name]
	if !ok {
		return nil, nil
	}
	m, ok := v.(map[string]any)
	if !ok {
		return nil, fmt.Errorf("%s: mcp_servers.%s is %s, want a table; not changed — fix it by hand", file, name, typeName(v))
	}
	return m, nil
}

// mergeCodex puts the entry into a Codex config.toml: the old entry (all
// its pieces) goes, the new table — our keys plus every key of the old
// entry we do not own — takes the place of the first old table or is
// appended, and the rest of the file is kept byte for byte. One linear
// pass reads the file and one reads the result back.
func mergeCodex(t Target, e Entry, old []byte) ([]byte, []Change, error) {
	spans, at, mini, err := scanCodex(t.File, old, t.Name)
	if err != nil {
		return nil, nil, err
	}
	prevEntry, err := entryFromMini(t.File, t.Name, mini)
	if err != nil {
		return nil, nil, err
	}
	oursMap, err := codexEntryValue(t.Name, e)
	if err != nil {
		return nil, nil, err
	}
	flipped := e
	flipped.HTTP = !e.HTTP
	flipped.ReadOnly = true // so that its env key counts as the other transport's
	other, err := codexEntryValue(t.Name, flipped)
	if err != nil {
		return nil, nil, err
	}
	var ours []member2
	for _, k := range codexOrder {
		if v, ok := oursMap[k]; ok {
			ours = append(ours, member2{key: k, value: v})
		}
	}
	block := codexEntry(t.Name, e)
	want := oursMap
	var chg []Change
	if prevEntry != nil {
		ops, err := entryPlan(t.File+": mcp_servers."+t.Name, prevEntry, ours, other)
		if err != nil {
			return nil, nil, err
		}
		want = applyOps(prevEntry, ops)
		chg = changes(prevEntry, ops)
		if block, err = emitCodexEntry(t.Name, want); err != nil {
			return nil, nil, fmt.Errorf("%s: %w", t.File, err)
		}
	} else {
		for _, m := range ours {
			chg = append(chg, Change{Key: m.key, Kind: "added"})
		}
	}
	out := make([]byte, 0, len(old)+len(block)+1)
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
	return out, chg, checkCodex(t, want, out)
}

// emitCodexEntry writes the entry table for the merged value m: our keys
// first in their order, then the user's other keys (sorted), then the
// user's sub-tables.
func emitCodexEntry(name string, m map[string]any) (string, error) {
	var b strings.Builder
	fmt.Fprintf(&b, "[mcp_servers.%s]\n", tomlKey(name))
	done := map[string]bool{}
	for _, k := range codexOrder {
		v, ok := m[k]
		if !ok {
			continue
		}
		done[k] = true
		s, err := tomlInline(v)
		if err != nil {
			return "", fmt.Errorf("mcp_servers.%s.%s: %w", name, k, err)
		}
		fmt.Fprintf(&b, "%s = %s\n", k, s)
	}
	if err := emitRest(&b, []string{"mcp_servers", name}, m, done); err != nil {
		return "", err
	}
	return b.String(), nil
}

// emitRest writes m's keys not in done: values as key = value, then
// tables as sub-tables of path.
func emitRest(b *strings.Builder, path []string, m map[string]any, done map[string]bool) error {
	keys := make([]string, 0, len(m))
	for k := range m {
		if !done[k] {
			keys = append(keys, k)
		}
	}
	sort.Strings(keys)
	var tables []string
	for _, k := range keys {
		if sub, ok := m[k].(map[string]any); ok && len(sub) > 0 {
			tables = append(tables, k)
			continue
		}
		s, err := tomlInline(m[k])
		if err != nil {
			return fmt.Errorf("%s.%s: %w", strings.Join(path, "."), k, err)
		}
		fmt.Fprintf(b, "%s = %s\n", tomlKey(k), s)
	}
	for _, k := range tables {
		sub := append(append([]string(nil), path...), k)
		fmt.Fprintf(b, "\n%s\n", tomlHeader(sub))
		if err := emitRest(b, sub, m[k].(map[string]any), nil); err != nil {
			return err
		}
	}
	return nil
}

// tomlInline is v as one inline TOML value; strings, arrays of strings and
// string tables keep codexEntry's layout.
func tomlInline(v any) (string, error) {
	switch x := v.(type) {
	case string:
		return tomlString(x), nil
	case bool:
		return fmt.Sprint(x), nil
	case []any:
		parts := make([]string, len(x))
		for i, e := range x {
			s, err := tomlInline(e)
			if err != nil {
				return "", err
			}
			parts[i] = s
		}
		return "[" + strings.Join(parts, ", ") + "]", nil
	case map[string]any:
		keys := make([]string, 0, len(x))
		for k := range x {
			keys = append(keys, k)
		}
		sort.Strings(keys)
		parts := make([]string, len(keys))
		for i, k := range keys {
			s, err := tomlInline(x[k])
			if err != nil {
				return "", err
			}
			parts[i] = tomlKey(k) + " = " + s
		}
		if len(parts) == 0 {
			return "{}", nil
		}
		return "{ " + strings.Join(parts, ", ") + " }", nil
	}
	var buf bytes.Buffer
	enc := toml.NewEncoder(&buf)
	enc.SetTablesInline(true)
	if err := enc.Encode(map[string]any{"v": v}); err != nil {
		return "", err
	}
	return strings.TrimSpace(strings.TrimPrefix(buf.String(), "v = ")), nil
}

// checkCodex re-reads the merged file in one linear pass: it parses, has
// no key defined twice, and the entry reads back as want. The rest of the
// file is the old bytes, copied.
func checkCodex(t Target, want map[string]any, merged []byte) error {
	_, _, mini, err := codexScan(merged, t.Name, false)
	if err != nil {
		return fmt.Errorf("the merged file would not parse (fix %s by hand): %w", t.File, err)
	}
	got, err := entryFromMini(t.File+" (merged)", t.Name, mini)
	if err != nil {
		return fmt.Errorf("the merged file would not parse (fix %s by hand): %w", t.File, err)
	}
	if !reflect.DeepEqual(normalize(got), normalize(want)) {
		return fmt.Errorf("merged %s: mcp_servers.%s reads back as %v", t.File, t.Name, got)
	}
	return nil
}
