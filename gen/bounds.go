package gen

import (
	"sort"

	"github.com/agent-interop/runtime/gen/spec"
)

// checkBounds checks the spec-wide bounds: every kind is one maxLength
// (strings) or one maxItems (arrays), and the default kinds exist and fit
// their type.
func checkBounds(errs *spec.ErrorList, b *spec.Bounds) {
	const file = "spec/defs.yaml"
	if b == nil {
		errs.Add(file, 1, "bounds {default, kinds} is required: every string and array argument needs a bound")
		return
	}
	for _, name := range sortedKinds(b.Kinds) {
		k := b.Kinds[name]
		if (k.MaxLength == nil) == (k.MaxItems == nil) {
			errs.Add(file, 1, "bounds kind %s: state exactly one of maxLength (strings) or maxItems (arrays)", name)
		}
		if !validJSONName(name) {
			errs.Add(file, 1, "bounds kind %q must be a camelCase name", name)
		}
	}
	for _, d := range []struct{ typ, name string }{{"string", b.Default.String}, {"array", b.Default.Array}} {
		k := b.Kinds[d.name]
		switch {
		case k == nil:
			errs.Add(file, 1, "bounds default.%s names unknown kind %q", d.typ, d.name)
		case d.typ == "string" && k.MaxLength == nil, d.typ == "array" && k.MaxItems == nil:
			errs.Add(file, 1, "bounds default.%s: kind %s does not bound a %s", d.typ, d.name, d.typ)
		}
	}
}

// applyBounds returns a deep copy of the resolved schema s in which every
// string and array without its own maxLength/maxItems has the bound of its
// kind (its `bound`, else the default kind of its type), marked Implied.
// Strings restricted by enum or const need no length bound.
func applyBounds(errs *spec.ErrorList, file, where string, s *spec.Schema, b *spec.Bounds) *spec.Schema {
	if s == nil {
		return nil
	}
	cp := *s
	if s.Properties != nil {
		cp.Properties = make(map[string]*spec.Schema, len(s.Properties))
		for _, k := range s.PropertyOrder {
			cp.Properties[k] = applyBounds(errs, file, where+"."+k, s.Properties[k], b)
		}
	}
	cp.Items = applyBounds(errs, file, where+"[]", s.Items, b)
	cp.OneOf = nil
	for _, o := range s.OneOf {
		cp.OneOf = append(cp.OneOf, applyBounds(errs, file, where, o, b))
	}
	if b == nil || len(s.OneOf) > 0 || isAny(s) {
		if s.Bound != "" {
			errs.Add(file, s.Line, "%s: bound applies to strings and arrays only", where)
		}
		return &cp
	}
	kind := func(def string, has bool, want string) *spec.BoundKind {
		if has {
			if s.Bound != "" {
				errs.Add(file, s.Line, "%s: states both its own %s and bound %s; keep one", where, want, s.Bound)
			}
			return nil
		}
		name := s.Bound
		if name == "" {
			name = def
		}
		k := b.Kinds[name]
		switch {
		case k == nil:
			errs.Add(file, s.Line, "%s: bound names unknown kind %q (spec/defs.yaml bounds.kinds)", where, name)
			return nil
		case want == "maxLength" && k.MaxLength == nil, want == "maxItems" && k.MaxItems == nil:
			errs.Add(file, s.Line, "%s: bound kind %s has no %s", where, name, want)
			return nil
		}
		cp.Implied = name
		return k
	}
	switch t := baseType(s); {
	case t == "string" && (len(s.Enum) > 0 || s.Const != nil):
		if s.Bound != "" {
			errs.Add(file, s.Line, "%s: an enum or const string needs no bound", where)
		}
	case t == "string":
		if k := kind(b.Default.String, s.MaxLength != nil, "maxLength"); k != nil {
			cp.MaxLength = k.MaxLength
		}
	case t == "array":
		if k := kind(b.Default.Array, s.MaxItems != nil, "maxItems"); k != nil {
			cp.MaxItems = k.MaxItems
		}
	default:
		if s.Bound != "" {
			errs.Add(file, s.Line, "%s: bound applies to strings and arrays only", where)
		}
	}
	return &cp
}

func sortedKinds(m map[string]*spec.BoundKind) []string {
	out := make([]string, 0, len(m))
	for k := range m {
		out = append(out, k)
	}
	sort.Strings(out)
	return out
}

func sortedDefs(m map[string]*spec.Schema) []string {
	out := make([]string, 0, len(m))
	for k := range m {
		out = append(out, k)
	}
	sort.Strings(out)
	return out
}
