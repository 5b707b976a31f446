package gen

import (
	"bytes"
	"fmt"
	"slices"
	"sort"
	"strconv"
	"strings"

	"github.com/agent-interop/runtime/gen/spec"
)

// goTypes assigns Go types to schemas and collects struct declarations and
// their decode functions.
type goTypes struct {
	decls   map[string]string // type name -> declaration + decoder source
	enums   map[string]string // var name -> []string literal
	pats    map[string]string // var name -> pattern
	emitted map[string]bool
}

func newGoTypes() *goTypes {
	return &goTypes{decls: map[string]string{}, enums: map[string]string{}, pats: map[string]string{}, emitted: map[string]bool{}}
}

func defName(s *spec.Schema) string {
	if s.Ref == "" {
		return ""
	}
	return goName(strings.TrimPrefix(s.Ref, "#/defs/"))
}

// typeOf returns the Go type of a value of schema s (hint names new types).
func (g *goTypes) typeOf(s *spec.Schema, hint string) string {
	if n := defName(s); n != "" && (len(s.OneOf) > 0 || baseType(s) == "object") {
		hint = n
	}
	switch {
	case len(s.OneOf) > 0:
		g.oneOfType(s, hint)
		return hint
	case isAny(s):
		return "json.RawMessage"
	}
	switch baseType(s) {
	case "string":
		return "string"
	case "integer":
		return "int64"
	case "number":
		return "float64"
	case "boolean":
		return "bool"
	case "array":
		return "[]" + g.typeOf(s.Items, hint+"Item")
	case "object":
		g.structType(s, hint)
		return hint
	}
	return "json.RawMessage"
}

// fieldType is the Go type of an object property: optional scalars without
// a default, nullable values, objects and oneOfs are pointers.
func (g *goTypes) fieldType(s *spec.Schema, required bool, hint string) string {
	t := g.typeOf(s, hint)
	if strings.HasPrefix(t, "[]") || t == "json.RawMessage" {
		return t
	}
	if len(s.OneOf) > 0 || baseType(s) == "object" || nullable(s) || (!required && s.Default == nil) {
		return "*" + t
	}
	return t
}

func (g *goTypes) structType(s *spec.Schema, name string) {
	if g.emitted[name] {
		return
	}
	g.emitted[name] = true
	var b bytes.Buffer
	fmt.Fprintf(&b, "// %s is a decoded argument object.\ntype %s struct {\n", name, name)
	for _, k := range s.PropertyOrder {
		ps := s.Properties[k]
		ft := g.fieldType(ps, slices.Contains(s.Required, k), name+goName(k))
		if ps.Description != "" {
			fmt.Fprintf(&b, "\t// %s\n", oneLine(ps.Description))
		}
		fmt.Fprintf(&b, "\t%s %s `json:\"%s,omitempty\"`\n", goName(k), ft, k)
	}
	track := hasDefaults(s)
	if track && len(s.PropertyOrder) > 64 {
		panic(fmt.Sprintf("%s: an argument object with defaults has more than 64 properties (Given's bit set)", name))
	}
	if track {
		b.WriteString("\n\tgiven uint64 // bit i: the caller gave property i (the others hold their defaults)\n")
	}
	b.WriteString("}\n\n")
	if track {
		fmt.Fprintf(&b, "// Given reports whether the caller gave property name, rather than\n// leaving it to its default.\nfunc (x *%s) Given(name string) bool {\n\ti := slices.Index(%s, name)\n\treturn i >= 0 && x.given&(1<<i) != 0\n}\n\n", name, strList(s.PropertyOrder))
	}
	fmt.Fprintf(&b, "func decode%s(d *argv.Decoder, v any, path string) *%s {\n", name, name)
	g.objectBody(&b, s, name, nil, nil, track)
	b.WriteString("}\n")
	g.decls[name] = b.String()
}

// hasDefaults reports whether an object property of s has a default.
func hasDefaults(s *spec.Schema) bool {
	for _, ps := range s.Properties {
		if ps.Default != nil {
			return true
		}
	}
	return false
}

// objectBody writes the statements that decode object v into a new *name.
// props maps the offered argument names to the target's field names (nil:
// identity); fixed holds forced values; track records in out.given the
// properties the caller gave (an argument object with defaults, whose
// caller may need to tell a default from a given value).
func (g *goTypes) objectBody(b *bytes.Buffer, s *spec.Schema, name string, props map[string]string, fixed map[string]string, track bool) {
	fmt.Fprintf(b, "\tout := new(%s)\n", name)
	fmt.Fprintf(b, "\to := d.Object(v, path, %s, %s)\n", strList(s.PropertyOrder), strList(s.Required))
	b.WriteString("\tif o == nil {\n\t\treturn nil\n\t}\n")
	for i, k := range s.PropertyOrder {
		ps := s.Properties[k]
		field := k
		if props != nil {
			field = props[k]
		}
		target := "out." + goName(field)
		req := slices.Contains(s.Required, k)
		fmt.Fprintf(b, "\tif x, ok := o[%q]; ok {\n", k)
		if track {
			fmt.Fprintf(b, "\t\tout.given |= 1 << %d\n", i)
		}
		g.valueInto(b, ps, "x", fmt.Sprintf("argv.Join(path, %q)", k), target, g.fieldType(ps, req, name+goName(field)), name+goName(field), 2)
		b.WriteString("\t}")
		if ps.Default != nil {
			fmt.Fprintf(b, " else {\n\t\t%s = %s\n\t}", target, goLiteral(ps.Default))
		}
		b.WriteString("\n")
	}
	keys := make([]string, 0, len(fixed))
	for k := range fixed {
		keys = append(keys, k)
	}
	sort.Strings(keys)
	for _, k := range keys {
		fmt.Fprintf(b, "\tout.%s = %s\n", goName(k), fixed[k])
	}
	b.WriteString("\treturn out\n")
}

// valueInto writes code that decodes expression x (schema s) and assigns it
// to target, whose Go type is ft.
func (g *goTypes) valueInto(b *bytes.Buffer, s *spec.Schema, x, path, target, ft, hint string, depth int) {
	ind := strings.Repeat("\t", depth)
	ptr := strings.HasPrefix(ft, "*")
	set := func(v string) string {
		if ptr && !strings.HasPrefix(v, "decode") {
			return fmt.Sprintf("%s = &%s", target, v)
		}
		return fmt.Sprintf("%s = %s", target, v)
	}
	if nullable(s) {
		fmt.Fprintf(b, "%sif %s != nil {\n", ind, x)
		inner := *s
		inner.Type = spec.TypeList{baseType(s)}
		g.valueInto(b, &inner, x, path, target, ft, hint, depth+1)
		fmt.Fprintf(b, "%s}\n", ind)
		return
	}
	if len(s.OneOf) > 0 {
		t := g.typeOf(s, hint)
		var str, obj *spec.Schema
		for _, o := range s.OneOf {
			if baseType(o) == "string" {
				str = o
			} else {
				obj = o
			}
		}
		amp := ""
		if ptr {
			amp = "&"
		}
		fmt.Fprintf(b, "%sswitch x := %s.(type) {\n%scase string:\n", ind, x, ind)
		fmt.Fprintf(b, "%s\tif s, ok := d.String(x, %s, %s); ok {\n%s\t\t%s = %s%s{Text: &s}\n%s\t}\n", ind, path, g.stringRule(str), ind, target, amp, t, ind)
		fmt.Fprintf(b, "%scase map[string]any:\n", ind)
		ot := g.typeOf(obj, t+"Object")
		fmt.Fprintf(b, "%s\tif p := decode%s(d, x, %s); p != nil {\n%s\t\t%s = %s%s{Object: p}\n%s\t}\n", ind, ot, path, ind, target, amp, t, ind)
		fmt.Fprintf(b, "%sdefault:\n%s\td.Fail(%s, \"must be a string or an object\")\n%s}\n", ind, ind, path, ind)
		return
	}
	if isAny(s) {
		fmt.Fprintf(b, "%s%s = argv.Raw(%s)\n", ind, target, x)
		return
	}
	switch baseType(s) {
	case "string":
		fmt.Fprintf(b, "%sif v, ok := d.String(%s, %s, %s); ok {\n%s\t%s\n%s}\n", ind, x, path, g.stringRule(s), ind, set("v"), ind)
	case "integer":
		fmt.Fprintf(b, "%sif v, ok := d.Integer(%s, %s, argv.IntRule{Min: %d, Max: %d}); ok {\n%s\t%s\n%s}\n", ind, x, path, int64(*s.Minimum), int64(*s.Maximum), ind, set("v"), ind)
	case "number":
		fmt.Fprintf(b, "%sif v, ok := d.Number(%s, %s, argv.NumberRule{Min: %v, Max: %v}); ok {\n%s\t%s\n%s}\n", ind, x, path, *s.Minimum, *s.Maximum, ind, set("v"), ind)
	case "boolean":
		fmt.Fprintf(b, "%sif v, ok := d.Bool(%s, %s); ok {\n%s\t%s\n%s}\n", ind, x, path, ind, set("v"), ind)
	case "object":
		t := g.typeOf(s, hint)
		fmt.Fprintf(b, "%sif p := decode%s(d, %s, %s); p != nil {\n%s\t%s = p\n%s}\n", ind, t, x, path, ind, target, ind)
	case "array":
		et := g.typeOf(s.Items, hint+"Item")
		fmt.Fprintf(b, "%sif a, ok := d.Array(%s, %s, %d, %d); ok {\n", ind, x, path, intOr(s.MinItems, -1), intOr(s.MaxItems, -1))
		fmt.Fprintf(b, "%s\tlist := make([]%s, len(a))\n%s\tfor i, e := range a {\n", ind, et, ind)
		elem := "list[i]"
		if baseType(s.Items) == "object" && len(s.Items.OneOf) == 0 {
			fmt.Fprintf(b, "%s\t\tif p := decode%s(d, e, argv.Index(%s, i)); p != nil {\n%s\t\t\tlist[i] = *p\n%s\t\t}\n", ind, et, path, ind, ind)
		} else {
			g.valueInto(b, s.Items, "e", fmt.Sprintf("argv.Index(%s, i)", path), elem, et, hint+"Item", depth+2)
		}
		fmt.Fprintf(b, "%s\t}\n%s\t%s = list\n%s}\n", ind, ind, target, ind)
	}
}

func (g *goTypes) stringRule(s *spec.Schema) string {
	var parts []string
	parts = append(parts, fmt.Sprintf("MinLength: %d", intOr(s.MinLength, 0)))
	parts = append(parts, fmt.Sprintf("MaxLength: %d", intOr(s.MaxLength, -1)))
	if len(s.Enum) > 0 {
		name := "enum" + goName(strings.Join(s.Enum, "_"))
		if len(name) > 40 {
			name = fmt.Sprintf("enum%x", hashString(strings.Join(s.Enum, "\x00")))
		}
		g.enums[name] = strList(s.Enum)
		parts = append(parts, "Enum: "+name)
	}
	if s.Pattern != "" {
		name := fmt.Sprintf("pattern%x", hashString(s.Pattern))
		g.pats[name] = s.Pattern
		parts = append(parts, "Pattern: "+name+"()")
	}
	if s.Const != nil {
		parts = append(parts, fmt.Sprintf("Const: constString(%q)", *s.Const))
	}
	return "argv.StringRule{" + strings.Join(parts, ", ") + "}"
}

func hashString(s string) uint32 {
	var h uint32 = 2166136261
	for i := 0; i < len(s); i++ {
		h ^= uint32(s[i])
		h *= 16777619
	}
	return h
}

func intOr(p *int64, def int64) int64 {
	if p == nil {
		return def
	}
	return *p
}

func strList(ss []string) string {
	if len(ss) == 0 {
		return "nil"
	}
	q := make([]string, len(ss))
	for i, s := range ss {
		q[i] = strconv.Quote(s)
	}
	return "[]string{" + strings.Join(q, ", ") + "}"
}

func goLiteral(v any) string {
	switch x := v.(type) {
	case string:
		return strconv.Quote(x)
	case bool:
		return strconv.FormatBool(x)
	case int:
		return strconv.Itoa(x)
	case int64:
		return strconv.FormatInt(x, 10)
	case float64:
		return strconv.FormatFloat(x, 'f', -1, 64)
	}
	return fmt.Sprintf("%#v", v)
}

func oneLine(s string) string { return strings.Join(strings.Fields(s), " ") }

// oneOfType declares a string-or-object value type.
func (g *goTypes) oneOfType(s *spec.Schema, name string) {
	if g.emitted[name] {
		return
	}
	g.emitted[name] = true
	var obj *spec.Schema
	for _, o := range s.OneOf {
		if baseType(o) == "object" {
			obj = o
		}
	}
	ot := g.typeOf(obj, name+"Object")
	var b bytes.Buffer
	fmt.Fprintf(&b, "// %s is either a string (Text) or an object (Object).\ntype %s struct {\n\tText   *string\n\tObject *%s\n}\n\n", name, name, ot)
	fmt.Fprintf(&b, "// MarshalJSON writes whichever form was given.\nfunc (v %s) MarshalJSON() ([]byte, error) {\n\tif v.Text != nil {\n\t\treturn json.Marshal(*v.Text)\n\t}\n\treturn json.Marshal(v.Object)\n}\n", name)
	g.decls[name] = b.String()
}
