package gen

import (
	"bytes"
	"fmt"

	"github.com/agent-interop/runtime/gen/spec"
)

// LimitsPath is the generated package of input bounds.
const LimitsPath = "catalogs/limits/zz_generated.limits.go"

// BoundRow is one string or array bound of a modern tool's argument.
type BoundRow struct {
	Const string // Go constant name, e.g. CreateHandoffRisksItemMaxLen
	Tool  string
	Path  string // e.g. "risks[]", "latestValidation.command"
	Max   int64
	Items bool   // maxItems (else maxLength in characters)
	Kind  string // the kind it was implied from; "" when stated (and served)
}

// rangeRow is one integer argument's bounds and default.
type rangeRow struct {
	Const    string // prefix, e.g. AcquireClaimTTLSeconds
	Min, Max int64
	Default  *int64
}

// Bounds lists every string and array bound of t's arguments, in
// argument order.
func Bounds(t *Tool) []BoundRow {
	var rows []BoundRow
	walkBounds(t.Exact, "", t.GoName, func(s *spec.Schema, path, name string) {
		switch baseType(s) {
		case "string":
			if s.MaxLength != nil {
				rows = append(rows, BoundRow{Const: name + "MaxLen", Tool: t.Name, Path: path, Max: *s.MaxLength, Kind: s.Implied})
			}
		case "array":
			if s.MaxItems != nil {
				rows = append(rows, BoundRow{Const: name + "MaxItems", Tool: t.Name, Path: path, Max: *s.MaxItems, Items: true, Kind: s.Implied})
			}
		}
	})
	return rows
}

func ranges(t *Tool) []rangeRow {
	var rows []rangeRow
	walkBounds(t.Exact, "", t.GoName, func(s *spec.Schema, _, name string) {
		if baseType(s) != "integer" || s.Minimum == nil || s.Maximum == nil {
			return
		}
		r := rangeRow{Const: name, Min: int64(*s.Minimum), Max: int64(*s.Maximum)}
		if d, ok := s.Default.(int); ok {
			v := int64(d)
			r.Default = &v
		}
		rows = append(rows, r)
	})
	return rows
}

// walkBounds visits s and every schema below it with its JSON path and
// Go name: properties add their name, array items "Item" ("[]" in the
// path), and the string branch of a oneOf "Text" (its object branch's
// properties continue the property's name, as the decoded Go value does).
func walkBounds(s *spec.Schema, path, name string, visit func(s *spec.Schema, path, name string)) {
	if s == nil {
		return
	}
	if len(s.OneOf) > 0 {
		for _, o := range s.OneOf {
			if baseType(o) == "string" {
				walkBounds(o, path, name+"Text", visit)
			} else {
				walkBounds(o, path, name, visit)
			}
		}
		return
	}
	visit(s, path, name)
	switch baseType(s) {
	case "array":
		walkBounds(s.Items, path+"[]", name+"Item", visit)
	case "object":
		for _, k := range s.PropertyOrder {
			p := k
			if path != "" {
				p = path + "." + k
			}
			walkBounds(s.Properties[k], p, name+goName(k), visit)
		}
	}
}

// limitsFile renders package catalogs/limits.
func limitsFile(c *Catalog) ([]byte, error) {
	var b bytes.Buffer
	b.WriteString(Header + "\n\n")
	b.WriteString(`// Package limits is every input bound of the MCP tools, generated from
// spec/: the kinds of spec/defs.yaml (bounds), one constant per bounded
// argument, and the Bounds table. The generated decoders enforce them; the
// services and the ent schemas take their limits from here, so no layer
// can refuse what a tool's schema allows. Lengths count characters
// (Unicode code points, utf8.RuneCountInString), as JSON Schema does; a
// byte limit derived from one is at most BytesPerChar times as large.
package limits

// BytesPerChar is the most bytes one character takes in UTF-8: a store
// column that holds n characters needs n*BytesPerChar bytes.
const BytesPerChar = 4

// Kinds of spec/defs.yaml: the bound of every string or array argument
// that states none of its own.
const (
`)
	writeKindConsts(&b, c)

	var all []BoundRow
	seen := map[string]string{}
	for _, t := range c.Tools {
		rows := Bounds(t)
		rr := ranges(t)
		if len(rows) == 0 && len(rr) == 0 {
			continue
		}
		if err := writeToolBounds(&b, t, rows, rr, seen); err != nil {
			return nil, err
		}
		all = append(all, rows...)
	}
	b.WriteString(`// Bound is one string or array argument's bound.
type Bound struct {
	Tool string
	// Path is the argument's JSON path: "objective", "risks[]" (each
	// entry of risks), "latestValidation.command".
	Path string
	// Max is the most characters (Items false) or entries (Items true).
	Max   int
	Items bool
	// Kind is the spec-wide kind the bound comes from; "" when the tool's
	// schema states it (and tools/list serves it).
	Kind string
}

// Bounds is every string and array bound of every modern tool, in
// catalog and argument order.
var Bounds = [...]Bound{
`)
	for _, r := range all {
		fmt.Fprintf(&b, "\t{Tool: %q, Path: %q, Max: %s, Items: %v, Kind: %q},\n", r.Tool, r.Path, r.Const, r.Items, r.Kind)
	}
	b.WriteString("}\n")
	return formatGo(LimitsPath, b.Bytes())
}

// writeKindConsts writes the Kind constants of spec/defs.yaml and the
// default string and array bounds, closing the const block.
func writeKindConsts(b *bytes.Buffer, c *Catalog) {
	for _, name := range sortedKinds(c.Bounds.Kinds) {
		k := c.Bounds.Kinds[name]
		n, unit := k.MaxItems, "items"
		if k.MaxLength != nil {
			n, unit = k.MaxLength, "characters"
		}
		fmt.Fprintf(b, "\t// Kind%s: %s (%s).\n\tKind%s = %d\n", goName(name), oneLine(k.Use), unit, goName(name), *n)
	}
	fmt.Fprintf(b, "\t// DefaultStringMaxLen is the bound of a string that names no kind (%s).\n\tDefaultStringMaxLen = Kind%s\n", c.Bounds.Default.String, goName(c.Bounds.Default.String))
	fmt.Fprintf(b, "\t// DefaultArrayMaxItems is the bound of an array that names no kind (%s).\n\tDefaultArrayMaxItems = Kind%s\n)\n\n", c.Bounds.Default.Array, goName(c.Bounds.Default.Array))
}

// writeToolBounds writes tool t's const block: a constant per bounded
// argument (rows) and the minimum, maximum and default of every integer
// range (rr). seen holds every constant written so far, and where it came
// from; a name written twice is an error.
func writeToolBounds(b *bytes.Buffer, t *Tool, rows []BoundRow, rr []rangeRow, seen map[string]string) error {
	fmt.Fprintf(b, "// Bounds of %s.\nconst (\n", t.Name)
	for _, r := range rows {
		if prev, ok := seen[r.Const]; ok {
			return fmt.Errorf("limits: constant %s names both %s and %s.%s", r.Const, prev, t.Name, r.Path)
		}
		seen[r.Const] = t.Name + "." + r.Path
		unit := "characters"
		if r.Items {
			unit = "items"
		}
		how := "stated"
		if r.Kind != "" {
			how = "kind " + r.Kind
		}
		fmt.Fprintf(b, "\t%s = %d // %s, %s: %s\n", r.Const, r.Max, r.Path, how, unit)
	}
	for _, r := range rr {
		for _, n := range []string{r.Const + "Min", r.Const + "Max", r.Const + "Default"} {
			if prev, ok := seen[n]; ok {
				return fmt.Errorf("limits: constant %s is declared twice (%s)", n, prev)
			}
			seen[n] = t.Name
		}
		fmt.Fprintf(b, "\t%sMin = %d\n\t%sMax = %d\n", r.Const, r.Min, r.Const, r.Max)
		if r.Default != nil {
			fmt.Fprintf(b, "\t%sDefault = %d\n", r.Const, *r.Default)
		}
	}
	b.WriteString(")\n\n")
	return nil
}
