package clientsetup

import (
	"fmt"
	"reflect"
	"sort"
	"strings"
)

// ownedSubKeys are the keys we own inside a map-valued key of the entry;
// every other key of that map (INTEROP_DB, other headers, ...) belongs to
// the user and is kept.
// A slice of pairs, not a map: a package-level map literal is built by the
// package's init in every process the binary runs (serve included).
var ownedSubKeys = []struct {
	key  string
	subs []string
}{
	{"env", []string{"INTEROP_READ_ONLY"}},
	{"environment", []string{"INTEROP_READ_ONLY"}},
	{"headers", []string{"Authorization"}},
}

// ownedSubKeysOf is ownedSubKeys' entry for k.
func ownedSubKeysOf(k string) (subs []string, ok bool) {
	for _, o := range ownedSubKeys {
		if o.key == k {
			return o.subs, true
		}
	}
	return nil, false
}

// keptIfSet reports the keys we write on a new entry but whose value, once
// the entry exists, is the user's (a server they disabled stays disabled).
func keptIfSet(k string) bool { return k == "enabled" }

// entryOp is one change to the existing entry: set path to value, or
// remove it. path is relative to the entry.
type entryOp struct {
	path   []string
	value  any
	remove bool
}

// Change is one key of our entry that a merge changed.
type Change struct {
	// Key is the dotted key inside the entry ("command", "env.INTEROP_READ_ONLY").
	Key string
	// Kind is "added", "changed" or "removed".
	Kind string
}

func (c Change) String() string { return c.Kind + " " + c.Key }

// entryPlan works out how the existing entry old (nil: none) becomes ours
// while keeping every key we do not own. ours is the entry we write (its
// keys in order), other the entry of the other transport (stdio/HTTP):
// its keys that ours lacks are removed, as the client would refuse an
// entry with both. what names the entry in errors ("mcp.agent-interop").
func entryPlan(what string, old map[string]any, ours []member2, other map[string]any) ([]entryOp, error) {
	oursKeys := map[string]bool{}
	for _, m := range ours {
		oursKeys[m.key] = true
	}
	var ops []entryOp
	// The other transport's keys go first, so a key both own is set below.
	var stale []string
	for k := range other {
		if !oursKeys[k] {
			if _, ok := old[k]; ok {
				stale = append(stale, k)
			}
		}
	}
	sort.Strings(stale)
	for _, k := range stale {
		ops = append(ops, entryOp{path: []string{k}, remove: true})
	}
	staleSet := map[string]bool{}
	for _, k := range stale {
		staleSet[k] = true
	}
	for _, m := range ours {
		k := m.key
		prev, exists := old[k]
		if keptIfSet(k) && exists {
			continue
		}
		if sub, ok := ownedSubKeysOf(k); ok && exists && prev != nil {
			pm, ok := prev.(map[string]any)
			if !ok {
				return nil, fmt.Errorf("%s.%s is %s, want an object/table; fix it by hand", what, k, typeName(prev))
			}
			want, _ := m.value.(map[string]any)
			ops = append(ops, subOps(k, pm, want, sub)...)
			continue
		}
		if !exists || !reflect.DeepEqual(normalize(prev), normalize(m.value)) {
			ops = append(ops, entryOp{path: []string{k}, value: m.value})
		}
	}
	// A map-valued key we own part of but do not write this time (env
	// without INTEROP_READ_ONLY): take our key out, keep the rest.
	for _, o := range ownedSubKeys {
		k, sub := o.key, o.subs
		if oursKeys[k] || staleSet[k] {
			continue
		}
		if pm, ok := old[k].(map[string]any); ok {
			ops = append(ops, subOps(k, pm, nil, sub)...)
		}
	}
	return ops, nil
}

// subOps sets or removes our keys inside the map old[k].
func subOps(k string, prev, want map[string]any, owned []string) []entryOp {
	var ops []entryOp
	for _, s := range owned {
		v, ours := want[s]
		pv, had := prev[s]
		switch {
		case ours && (!had || !reflect.DeepEqual(normalize(pv), normalize(v))):
			ops = append(ops, entryOp{path: []string{k, s}, value: v})
		case !ours && had:
			ops = append(ops, entryOp{path: []string{k, s}, remove: true})
		}
	}
	return ops
}

// member2 is one key of our entry, in the order we write it.
type member2 struct {
	key   string
	value any
}

// applyOps returns a copy of old with ops applied (the entry as it will
// read back).
func applyOps(old map[string]any, ops []entryOp) map[string]any {
	out := cloneMap(old)
	for _, op := range ops {
		m := out
		for _, p := range op.path[:len(op.path)-1] {
			next, ok := m[p].(map[string]any)
			if !ok {
				next = map[string]any{}
				m[p] = next
			}
			m = next
		}
		last := op.path[len(op.path)-1]
		if op.remove {
			delete(m, last)
		} else {
			m[last] = op.value
		}
	}
	return out
}

func cloneMap(m map[string]any) map[string]any {
	out := make(map[string]any, len(m))
	for k, v := range m {
		if sub, ok := v.(map[string]any); ok {
			v = cloneMap(sub)
		}
		out[k] = v
	}
	return out
}

// changes lists what ops do to old, as dotted keys.
func changes(old map[string]any, ops []entryOp) []Change {
	var out []Change
	for _, op := range ops {
		var prev any = old
		had := true
		for _, p := range op.path {
			m, ok := prev.(map[string]any)
			if !ok {
				had = false
				break
			}
			if prev, ok = m[p]; !ok {
				had = false
				break
			}
		}
		kind := "changed"
		switch {
		case op.remove:
			kind = "removed"
		case !had:
			kind = "added"
		}
		out = append(out, Change{Key: strings.Join(op.path, "."), Kind: kind})
	}
	return out
}

// normalize makes decoded values comparable across encodings ([]string
// and []any, int and float64, map[string]string and map[string]any).
func normalize(v any) any {
	switch x := v.(type) {
	case []string:
		out := make([]any, len(x))
		for i, s := range x {
			out[i] = s
		}
		return out
	case []any:
		out := make([]any, len(x))
		for i, e := range x {
			out[i] = normalize(e)
		}
		return out
	case map[string]string:
		out := make(map[string]any, len(x))
		for k, s := range x {
			out[k] = s
		}
		return out
	case map[string]any:
		out := make(map[string]any, len(x))
		for k, e := range x {
			out[k] = normalize(e)
		}
		return out
	case int:
		return float64(x)
	case int64:
		return float64(x)
	}
	return v
}

func typeName(v any) string {
	switch v.(type) {
	case nil:
		return "null"
	case string:
		return "a string"
	case bool:
		return "a boolean"
	case []any:
		return "an array"
	case map[string]any:
		return "an object"
	}
	return "a number"
}
