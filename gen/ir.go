// Package gen turns the spec (gen/spec) into the generated catalogs package,
// the tools/list snapshots, the tool and migration docs and the spec format
// schema. Generate is pure: the same spec always yields the same bytes, and
// both `interopgen generate` and `interopgen check` call it.
package gen

import (
	"math"
	"regexp"
	"slices"
	"sort"
	"strings"

	"github.com/agent-interop/runtime/gen/spec"
)

// maxSafeInt bounds every integer so that JSON numbers, float64 and int64
// agree on every accepted value.
const maxSafeInt = 1<<53 - 1

// Catalog is the resolved spec: every $ref inlined, every rule checked.
type Catalog struct {
	Tools    []*Tool // in profile-group order, then file order
	Aliases  []*Alias
	Profiles []*Profile
	Default  string
	Notes    []string // global migration notes
	Defs     map[string]*spec.Schema
	Bounds   *spec.Bounds
	Sources  []string
}

// Tool is a modern tool with its resolved input schema.
type Tool struct {
	*spec.Tool
	Group string
	// Schema is the served inputSchema: refs inlined, and only the bounds
	// the spec states on a property.
	Schema *spec.Schema
	// Exact is Schema with every implied bound (spec.Bounds) applied: what
	// the generated decoder enforces.
	Exact  *spec.Schema
	GoName string // e.g. ReadSessionEvents
}

// Alias is a legacy name with its derived input schema.
type Alias struct {
	*spec.Alias
	Target *Tool
	Schema *spec.Schema // the served legacy input schema
	Exact  *spec.Schema // Schema with every implied bound
	// Props maps each offered legacy argument to the modern one.
	Props map[string]string
}

// Paged reports an alias that offers its target's cursor, and so pages
// like the modern tool.
func (a *Alias) Paged() bool {
	for _, modern := range a.Props {
		if modern == "cursor" {
			return true
		}
	}
	return false
}

// Profile is a resolved profile: the names it serves, in order.
type Profile struct {
	*spec.Profile
	Names []string
}

// Resolve checks the spec's cross-file rules and builds the Catalog. All
// problems are reported at once.
func Resolve(s *spec.Spec) (*Catalog, error) {
	var errs spec.ErrorList
	c := &Catalog{Defs: s.Defs, Bounds: s.Bounds, Default: s.Profiles.Default, Notes: s.Aliases.Notes, Sources: s.Sources}
	checkBounds(&errs, s.Bounds)
	for _, name := range sortedDefs(s.Defs) {
		where := "def " + name
		d := inline(s.Defs[name], s.Defs, &errs, "spec/defs.yaml", where)
		checkSchema(&errs, "spec/defs.yaml", where, d, s.Defs, false)
		applyBounds(&errs, "spec/defs.yaml", where, d, s.Bounds)
	}

	byGroup := map[string]*spec.ToolsFile{}
	for _, g := range s.Groups {
		byGroup[g.Group] = g
	}
	// Groups are ordered as the default profile lists them, then by their
	// first appearance in the other profiles.
	var groupOrder []string
	profs := slices.Clone(s.Profiles.Profiles)
	sort.SliceStable(profs, func(i, j int) bool { return profs[i].Name == s.Profiles.Default && profs[j].Name != s.Profiles.Default })
	for _, p := range profs {
		for _, g := range p.Groups {
			if !slices.Contains(groupOrder, g) {
				groupOrder = append(groupOrder, g)
			}
		}
	}
	for _, g := range s.Groups {
		if !slices.Contains(groupOrder, g.Group) {
			errs.Add(g.Tools[0].File, 1, "group %s is in no profile", g.Group)
			groupOrder = append(groupOrder, g.Group)
		}
	}
	byName := map[string]*Tool{}
	for _, gname := range groupOrder {
		g := byGroup[gname]
		if g == nil {
			continue
		}
		for _, t := range g.Tools {
			where := "tool " + t.Name
			if prev := byName[t.Name]; prev != nil {
				errs.Add(t.File, t.Line, "%s: duplicate tool name (first at %s:%d)", where, prev.File, prev.Line)
				continue
			}
			checkAnnotations(&errs, t)
			resolved := inline(t.Input, s.Defs, &errs, t.File, where)
			checkSchema(&errs, t.File, where, resolved, s.Defs, true)
			checkAnswer(&errs, t, resolved)
			exact := applyBounds(&errs, t.File, where, resolved, s.Bounds)
			tool := &Tool{Tool: t, Group: gname, Schema: resolved, Exact: exact, GoName: goName(t.Name)}
			byName[t.Name] = tool
			c.Tools = append(c.Tools, tool)
		}
	}

	aliasNames := map[string]*Alias{}
	for _, a := range s.Aliases.Aliases {
		where := "alias " + a.Name
		if aliasNames[a.Name] != nil {
			errs.Add(a.File, a.Line, "%s: duplicate alias", where)
			continue
		}
		target := byName[a.Tool]
		if target == nil {
			errs.Add(a.File, a.Line, "%s: unknown modern tool %q", where, a.Tool)
			continue
		}
		al := deriveAlias(&errs, a, target)
		// The alias's arguments are its target's, whose bounds were checked
		// with the target.
		al.Exact = applyBounds(&spec.ErrorList{}, a.File, where, al.Schema, s.Bounds)
		aliasNames[a.Name] = al
		c.Aliases = append(c.Aliases, al)
	}

	profNames := map[string]*Profile{}
	for _, p := range s.Profiles.Profiles {
		if profNames[p.Name] != nil {
			errs.Add(p.File, p.Line, "profile %s: duplicate", p.Name)
			continue
		}
		rp := &Profile{Profile: p}
		switch {
		case p.Legacy && len(p.Groups) > 0:
			errs.Add(p.File, p.Line, "profile %s: a legacy profile serves the aliases and lists no groups", p.Name)
		case p.Legacy:
			for _, a := range c.Aliases {
				rp.Names = append(rp.Names, a.Name)
			}
		default:
			for _, g := range p.Groups {
				if byGroup[g] == nil {
					errs.Add(p.File, p.Line, "profile %s: unknown group %q", p.Name, g)
				}
			}
			for _, t := range c.Tools {
				if slices.Contains(p.Groups, t.Group) {
					rp.Names = append(rp.Names, t.Name)
				}
			}
		}
		if len(rp.Names) != p.Tools {
			errs.Add(p.File, p.Line, "profile %s: serves %d tools, the spec says %d", p.Name, len(rp.Names), p.Tools)
		}
		profNames[p.Name] = rp
		c.Profiles = append(c.Profiles, rp)
	}
	if profNames[c.Default] == nil {
		errs.Add("spec/profiles.yaml", 1, "default profile %q is not defined", c.Default)
	}
	for _, p := range c.Profiles {
		if r := p.Budget.MaxBytesRatio; r != nil && profNames[r.Of] == nil {
			errs.Add(p.File, p.Line, "profile %s: maxBytesRatio refers to unknown profile %q", p.Name, r.Of)
		}
	}
	for _, t := range c.Tools {
		if !inAnyProfile(c.Profiles, t.Name) {
			errs.Add(t.File, t.Line, "tool %s is in no profile", t.Name)
		}
	}
	checkMentions(&errs, c, byName, aliasNames)
	if err := errs.Err(); err != nil {
		return nil, err
	}
	return c, nil
}

func inAnyProfile(ps []*Profile, name string) bool {
	for _, p := range ps {
		if slices.Contains(p.Names, name) {
			return true
		}
	}
	return false
}

func checkAnnotations(errs *spec.ErrorList, t *spec.Tool) {
	a := t.Annotations
	if a.ReadOnly == nil || a.Destructive == nil || a.Idempotent == nil || a.OpenWorld == nil {
		errs.Add(t.File, t.Line, "tool %s: all four annotations must be stated", t.Name)
		return
	}
	if (t.Access == "read") != *a.ReadOnly {
		errs.Add(t.File, t.Line, "tool %s: access %s contradicts readOnly %v", t.Name, t.Access, *a.ReadOnly)
	}
	if *a.ReadOnly && *a.Destructive {
		errs.Add(t.File, t.Line, "tool %s: a read-only tool cannot be destructive", t.Name)
	}
}

// Paging fragments every paged tool references (spec/defs.yaml).
const (
	limitRef  = "#/defs/limit"
	cursorRef = "#/defs/cursor"
)

// checkAnswer enforces the answer contract: a budget on every tool, and
// either paging (limit and cursor from the shared fragments, nextCursor in
// the answer) or a stated reason why the answer stays small.
func checkAnswer(errs *spec.ErrorList, t *spec.Tool, in *spec.Schema) {
	a := t.Answer
	if a == nil {
		errs.Add(t.File, t.Line, "tool %s: answer {budget, page or bounded} is required", t.Name)
		return
	}
	if a.Budget <= 0 {
		errs.Add(t.File, t.Line, "tool %s: answer.budget (o200k tokens with default arguments) is required", t.Name)
	}
	switch {
	case len(a.Page) > 0 && a.Bounded != "":
		errs.Add(t.File, t.Line, "tool %s: answer states both page and bounded; a collection is paged, anything else bounded", t.Name)
	case len(a.Page) == 0 && a.Bounded == "":
		errs.Add(t.File, t.Line, "tool %s: answer must page its collection (page: [field]) or say why it is bounded (bounded: \"...\")", t.Name)
	}
	var props map[string]*spec.Schema
	if in != nil {
		props = in.Properties
	}
	if len(a.Page) == 0 {
		if c := props["cursor"]; c != nil {
			errs.Add(t.File, t.Line, "tool %s: takes a cursor but its answer declares no page", t.Name)
		}
		return
	}
	for _, p := range []struct{ name, ref string }{{"limit", limitRef}, {"cursor", cursorRef}} {
		ps := props[p.name]
		switch {
		case ps == nil:
			errs.Add(t.File, t.Line, "tool %s: returns a collection (page %v) but has no %s argument; add %s: {$ref: %q}", t.Name, a.Page, p.name, p.name, p.ref)
		case ps.Ref != p.ref:
			errs.Add(t.File, t.Line, "tool %s: %s must be the shared fragment {$ref: %q}", t.Name, p.name, p.ref)
		}
	}
	if l := props["limit"]; l != nil && (l.Default == nil || l.Maximum == nil) {
		errs.Add(t.File, t.Line, "tool %s: limit needs a default and a maximum", t.Name)
	}
	if !strings.Contains(t.Returns, "nextCursor") {
		errs.Add(t.File, t.Line, "tool %s: a paged answer must list nextCursor in returns", t.Name)
	}
	for _, f := range a.Page {
		if !validJSONName(f) {
			errs.Add(t.File, t.Line, "tool %s: answer.page field %q must be a camelCase name", t.Name, f)
		}
	}
}

var wordRe = regexp.MustCompile(`[a-z][a-z0-9]*(?:_[a-z0-9]+)+`)

// checkMentions enforces that a description naming another tool names one
// served in every profile that serves the describing tool.
func checkMentions(errs *spec.ErrorList, c *Catalog, tools map[string]*Tool, aliases map[string]*Alias) {
	for _, p := range c.Profiles {
		served := map[string]bool{}
		for _, n := range p.Names {
			served[n] = true
		}
		for _, name := range p.Names {
			var desc, file string
			var line int
			if p.Legacy {
				a := aliases[name]
				desc, file, line = a.Description, a.File, a.Line
			} else {
				t := tools[name]
				desc, file, line = t.Description, t.File, t.Line
			}
			for _, w := range wordRe.FindAllString(desc, -1) {
				if w == name || served[w] {
					continue
				}
				if tools[w] != nil || aliases[w] != nil {
					errs.Add(file, line, "%s: description names %s, which profile %s does not serve", name, w, p.Name)
				}
			}
		}
	}
}

// inline returns a deep copy of s with every $ref replaced by its fragment.
func inline(s *spec.Schema, defs map[string]*spec.Schema, errs *spec.ErrorList, file, where string) *spec.Schema {
	if s == nil {
		return nil
	}
	if s.Ref != "" {
		name := strings.TrimPrefix(s.Ref, "#/defs/")
		d := defs[name]
		if d == nil {
			errs.Add(file, s.Line, "%s: unresolved $ref %q", where, s.Ref)
			return &spec.Schema{Line: s.Line}
		}
		out := inline(d, defs, errs, file, where)
		out.Ref = s.Ref // remembered for Go type naming
		if s.Description != "" {
			out.Description = s.Description
		}
		if s.Default != nil {
			out.Default = s.Default
		}
		if s.Bound != "" {
			out.Bound = s.Bound
		}
		out.Line = s.Line
		return out
	}
	cp := *s
	cp.Properties = nil
	if s.Properties != nil {
		cp.Properties = map[string]*spec.Schema{}
		for k, v := range s.Properties {
			cp.Properties[k] = inline(v, defs, errs, file, where+"."+k)
		}
	}
	cp.Items = inline(s.Items, defs, errs, file, where+"[]")
	cp.OneOf = nil
	for _, o := range s.OneOf {
		cp.OneOf = append(cp.OneOf, inline(o, defs, errs, file, where))
	}
	cp.PropertyOrder = slices.Clone(s.PropertyOrder)
	cp.Required = slices.Clone(s.Required)
	return &cp
}

// baseType is the schema's type name without "null". An enum or const
// without a type is a string.
func baseType(s *spec.Schema) string {
	if len(s.Type) == 0 && (len(s.Enum) > 0 || s.Const != nil) {
		return "string"
	}
	for _, t := range s.Type {
		if t != "null" {
			return t
		}
	}
	return ""
}

func nullable(s *spec.Schema) bool { return slices.Contains(s.Type, "null") }

// isAny reports a schema with no constraint at all ({}).
func isAny(s *spec.Schema) bool {
	return s.Ref == "" && len(s.Type) == 0 && len(s.OneOf) == 0 && len(s.Enum) == 0 && s.Const == nil
}

// checkSchema enforces the compiled subset (docs/spec-format.md).
func checkSchema(errs *spec.ErrorList, file, where string, s *spec.Schema, defs map[string]*spec.Schema, top bool) {
	if s == nil {
		return
	}
	if s.Ref != "" && s.Properties == nil && len(s.Type) == 0 && len(s.OneOf) == 0 && len(s.Enum) == 0 && s.Const == nil {
		name := strings.TrimPrefix(s.Ref, "#/defs/")
		if defs[name] == nil {
			errs.Add(file, s.Line, "%s: unresolved $ref %q", where, s.Ref)
		}
		return
	}
	if top && (baseType(s) != "object" || nullable(s)) {
		errs.Add(file, s.Line, "%s: input must be type object", where)
	}
	if top && len(s.OneOf) > 0 {
		errs.Add(file, s.Line, "%s: no oneOf at the top level of an input schema", where)
	}
	if len(s.Type) == 2 && !nullable(s) {
		errs.Add(file, s.Line, "%s: a two-name type must be [<type>, \"null\"]", where)
	}
	if len(s.OneOf) > 0 {
		if len(s.Type) > 0 {
			errs.Add(file, s.Line, "%s: oneOf replaces type", where)
		}
		var kinds []string
		for _, o := range s.OneOf {
			kinds = append(kinds, baseType(o))
			checkSchema(errs, file, where, o, defs, false)
		}
		sort.Strings(kinds)
		if !slices.Equal(kinds, []string{"object", "string"}) {
			errs.Add(file, s.Line, "%s: oneOf must be exactly a string branch and an object branch", where)
		}
		return
	}
	if isAny(s) {
		return
	}
	t := baseType(s)
	bad := func(kw string) { errs.Add(file, s.Line, "%s: %s does not apply to type %s", where, kw, t) }
	if t != "string" {
		if s.MinLength != nil || s.MaxLength != nil {
			bad("minLength/maxLength")
		}
		if s.Pattern != "" {
			bad("pattern")
		}
		if len(s.Enum) > 0 || s.Const != nil {
			bad("enum/const")
		}
	}
	if t != "integer" && t != "number" && (s.Minimum != nil || s.Maximum != nil) {
		bad("minimum/maximum")
	}
	if t != "array" && (s.Items != nil || s.MinItems != nil || s.MaxItems != nil) {
		bad("items/minItems/maxItems")
	}
	if t != "object" && (s.Properties != nil || len(s.Required) > 0) {
		bad("properties/required")
	}
	switch t {
	case "string":
		if s.Pattern != "" {
			if _, err := regexp.Compile(s.Pattern); err != nil {
				errs.Add(file, s.Line, "%s: pattern does not compile: %v", where, err)
			}
		}
		if s.MinLength != nil && s.MaxLength != nil && *s.MinLength > *s.MaxLength {
			errs.Add(file, s.Line, "%s: minLength exceeds maxLength", where)
		}
		if s.Default != nil {
			if _, ok := s.Default.(string); !ok {
				errs.Add(file, s.Line, "%s: default must be a string", where)
			} else if len(s.Enum) > 0 && !slices.Contains(s.Enum, s.Default.(string)) {
				errs.Add(file, s.Line, "%s: default is not in enum", where)
			}
		}
	case "integer":
		if s.Minimum == nil || s.Maximum == nil {
			errs.Add(file, s.Line, "%s: integers must state minimum and maximum", where)
			break
		}
		for _, b := range []float64{*s.Minimum, *s.Maximum} {
			if b != math.Trunc(b) || math.Abs(b) > maxSafeInt {
				errs.Add(file, s.Line, "%s: integer bounds must be whole numbers within ±2^53-1", where)
			}
		}
		if *s.Minimum > *s.Maximum {
			errs.Add(file, s.Line, "%s: minimum exceeds maximum", where)
		}
		if s.Default != nil {
			d, ok := s.Default.(int)
			if !ok {
				errs.Add(file, s.Line, "%s: default must be an integer", where)
			} else if float64(d) < *s.Minimum || float64(d) > *s.Maximum {
				errs.Add(file, s.Line, "%s: default is out of bounds", where)
			}
		}
	case "number":
		if s.Minimum == nil || s.Maximum == nil {
			errs.Add(file, s.Line, "%s: numbers must state minimum and maximum", where)
		}
	case "boolean":
		if s.Default != nil {
			if _, ok := s.Default.(bool); !ok {
				errs.Add(file, s.Line, "%s: default must be a boolean", where)
			}
		}
	case "array":
		if s.Items == nil {
			errs.Add(file, s.Line, "%s: arrays must state items", where)
		}
		checkSchema(errs, file, where+"[]", s.Items, defs, false)
	case "object":
		for _, r := range s.Required {
			if s.Properties[r] == nil {
				errs.Add(file, s.Line, "%s: required property %q is not defined", where, r)
			}
		}
		for _, k := range s.PropertyOrder {
			checkSchema(errs, file, where+"."+k, s.Properties[k], defs, false)
			if !validJSONName(k) {
				errs.Add(file, s.Line, "%s: property name %q must be a camelCase identifier", where, k)
			}
		}
	case "":
		errs.Add(file, s.Line, "%s: a schema needs a type, oneOf or $ref", where)
	default:
		errs.Add(file, s.Line, "%s: unsupported type %q", where, t)
	}
	if s.Default != nil && t != "string" && t != "integer" && t != "boolean" {
		errs.Add(file, s.Line, "%s: default is supported on string, integer and boolean only", where)
	}
}

var jsonNameRe = regexp.MustCompile(`^[a-z][A-Za-z0-9]*$`)

func validJSONName(s string) bool { return jsonNameRe.MatchString(s) }

// deriveAlias builds the legacy input schema of an alias from its target.
func deriveAlias(errs *spec.ErrorList, a *spec.Alias, t *Tool) *Alias {
	where := "alias " + a.Name
	modernToLegacy := map[string]string{}
	for old, modern := range a.Rename {
		if t.Schema.Properties[modern] == nil {
			errs.Add(a.File, a.Line, "%s: rename target %q is not an argument of %s", where, modern, t.Name)
		}
		modernToLegacy[modern] = old
	}
	for _, d := range a.Drop {
		if t.Schema.Properties[d] == nil {
			errs.Add(a.File, a.Line, "%s: drop %q is not an argument of %s", where, d, t.Name)
		}
	}
	for k := range a.Fixed {
		if t.Schema.Properties[k] == nil {
			errs.Add(a.File, a.Line, "%s: fixed %q is not an argument of %s", where, k, t.Name)
		}
	}
	out := &spec.Schema{Type: spec.TypeList{"object"}, Properties: map[string]*spec.Schema{}, Line: t.Schema.Line}
	al := &Alias{Alias: a, Target: t, Schema: out, Props: map[string]string{}}
	for _, modern := range t.Schema.PropertyOrder {
		if slices.Contains(a.Drop, modern) {
			if slices.Contains(t.Schema.Required, modern) {
				errs.Add(a.File, a.Line, "%s: cannot drop required argument %q", where, modern)
			}
			continue
		}
		if _, fixed := a.Fixed[modern]; fixed {
			continue
		}
		legacy := modern
		if old, ok := modernToLegacy[modern]; ok {
			legacy = old
		}
		ps := *t.Schema.Properties[modern]
		if d, ok := a.Defaults[modern]; ok {
			ps.Default = d
		}
		out.Properties[legacy] = &ps
		out.PropertyOrder = append(out.PropertyOrder, legacy)
		al.Props[legacy] = modern
		if slices.Contains(t.Schema.Required, modern) {
			out.Required = append(out.Required, legacy)
		}
	}
	for k := range a.Defaults {
		if t.Schema.Properties[k] == nil {
			errs.Add(a.File, a.Line, "%s: default for %q, which is not an argument of %s", where, k, t.Name)
		}
	}
	if r := a.Response; r != nil && r.Unwrap != "" && r.WrapArray {
		errs.Add(a.File, a.Line, "%s: response is either unwrap or wrapArray", where)
	}
	// The inherited schema was checked with the tool; only the alias's own
	// defaults are new here.
	for _, legacy := range out.PropertyOrder {
		if _, ok := a.Defaults[al.Props[legacy]]; ok {
			checkSchema(errs, a.File, where+"."+legacy, out.Properties[legacy], nil, false)
		}
	}
	return al
}

// goName turns snake_case or camelCase into an exported Go name.
func goName(s string) string {
	var words []string
	cur := ""
	for i, r := range s {
		switch {
		case r == '_' || r == '-':
			words = append(words, cur)
			cur = ""
		case r >= 'A' && r <= 'Z' && i > 0 && cur != "" && !(cur[len(cur)-1] >= 'A' && cur[len(cur)-1] <= 'Z'):
			words = append(words, cur)
			cur = string(r)
		default:
			cur += string(r)
		}
	}
	words = append(words, cur)
	var b strings.Builder
	for _, w := range words {
		if w == "" {
			continue
		}
		lw := strings.ToLower(w)
		if initialisms[lw] {
			b.WriteString(strings.ToUpper(lw))
			continue
		}
		b.WriteString(strings.ToUpper(w[:1]) + w[1:])
	}
	return b.String()
}

var initialisms = map[string]bool{"id": true, "url": true, "cwd": true, "json": true, "http": true, "ttl": true, "uuid": true, "api": true}
