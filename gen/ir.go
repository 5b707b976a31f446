// Package gen turns the spec (gen/spec) into the generated catalogs package,
// the tools/list snapshots, the tool and migration docs, the spec format
// schema and the generated regions of README.md and CONTRIBUTING.md (the
// profile and environment tables, regions.go). Generate is pure: the same spec always yields the same bytes, and
// both `interopgen generate` and `interopgen check` call it.
package gen

import (
	"math"
	"regexp"
	"slices"
	"sort"
	"strconv"
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
	Records  map[string]*spec.Schema // resolved: refs inlined
	Bounds   *spec.Bounds
	Sources  []string
	Env      []*spec.EnvVar // spec/env.yaml, in file order; nil without one
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
	Exact *spec.Schema
	// Output is the answer's resolved schema.
	Output *spec.Schema
	GoName string // e.g. ReadSessionEvents
}

// Alias is a legacy name with its derived input schema.
type Alias struct {
	*spec.Alias
	Target *Tool
	Schema *spec.Schema // the served legacy input schema
	Exact  *spec.Schema // Schema with every implied bound
	// Output is the 0.3.x answer's schema: the target's output, the field
	// it unwraps, or a one-element array of it.
	Output *spec.Schema
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
	c := &Catalog{Defs: s.Defs, Records: map[string]*spec.Schema{}, Bounds: s.Bounds, Default: s.Profiles.Default, Notes: s.Aliases.Notes, Sources: s.Sources}
	if s.Env != nil {
		c.Env = s.Env.Variables
	}
	refs := &refTable{defs: s.Defs, records: s.Records}
	checkBounds(&errs, s.Bounds)
	resolveShared(&errs, c, s, refs)
	byGroup := map[string]*spec.ToolsFile{}
	for _, g := range s.Groups {
		byGroup[g.Group] = g
	}
	byName := resolveTools(&errs, c, s, refs, byGroup, groupOrder(&errs, s))
	aliasNames := resolveAliases(&errs, c, s, byName)
	resolveProfiles(&errs, c, s, byGroup)
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

// resolveShared checks the shared defs and records and stores the
// inlined records in c.
func resolveShared(errs *spec.ErrorList, c *Catalog, s *spec.Spec, refs *refTable) {
	for _, name := range sortedDefs(s.Defs) {
		where := "def " + name
		d := inline(s.Defs[name], refs, errs, "spec/defs.yaml", where)
		checkSchema(errs, "spec/defs.yaml", where, d, refs, false)
		applyBounds(errs, "spec/defs.yaml", where, d, s.Bounds)
	}
	for _, name := range sortedDefs(s.Records) {
		where := "record " + name
		if s.Defs[name] != nil {
			errs.Add("spec/records.yaml", s.Records[name].Line, "%s: a def has the same name; Go types would collide", where)
		}
		r := inline(s.Records[name], refs, errs, "spec/records.yaml", where)
		r.Ref = "#/records/" + name
		checkOutput(errs, "spec/records.yaml", where, r, refs, false)
		c.Records[name] = r
	}
}

// groupOrder orders the tool groups as the default profile lists them,
// then by their first appearance in the other profiles; a group in no
// profile is reported and comes last.
func groupOrder(errs *spec.ErrorList, s *spec.Spec) []string {
	var order []string
	profs := slices.Clone(s.Profiles.Profiles)
	sort.SliceStable(profs, func(i, j int) bool { return profs[i].Name == s.Profiles.Default && profs[j].Name != s.Profiles.Default })
	for _, p := range profs {
		for _, g := range p.Groups {
			if !slices.Contains(order, g) {
				order = append(order, g)
			}
		}
	}
	for _, g := range s.Groups {
		if !slices.Contains(order, g.Group) {
			errs.Add(g.Tools[0].File, 1, "group %s is in no profile", g.Group)
			order = append(order, g.Group)
		}
	}
	return order
}

// resolveTools checks and inlines every tool, group by group in order,
// appends them to c.Tools and returns them by name.
func resolveTools(errs *spec.ErrorList, c *Catalog, s *spec.Spec, refs *refTable, byGroup map[string]*spec.ToolsFile, order []string) map[string]*Tool {
	byName := map[string]*Tool{}
	for _, gname := range order {
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
			checkAnnotations(errs, t)
			resolved := inline(t.Input, refs, errs, t.File, where)
			checkSchema(errs, t.File, where, resolved, refs, true)
			output := inline(t.Output, refs, errs, t.File, where+" output")
			checkOutput(errs, t.File, where+" output", output, refs, true)
			checkAnswer(errs, t, resolved, output)
			exact := applyBounds(errs, t.File, where, resolved, s.Bounds)
			tool := &Tool{Tool: t, Group: gname, Schema: resolved, Exact: exact, Output: output, GoName: goName(t.Name)}
			byName[t.Name] = tool
			c.Tools = append(c.Tools, tool)
		}
	}

	return byName
}

// resolveAliases derives every legacy alias from its modern tool,
// appends them to c.Aliases and returns them by name.
func resolveAliases(errs *spec.ErrorList, c *Catalog, s *spec.Spec, byName map[string]*Tool) map[string]*Alias {
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
		al := deriveAlias(errs, a, target)
		// The alias's arguments are its target's, whose bounds were checked
		// with the target.
		al.Exact = applyBounds(&spec.ErrorList{}, a.File, where, al.Schema, s.Bounds)
		aliasNames[a.Name] = al
		c.Aliases = append(c.Aliases, al)
	}

	return aliasNames
}

// resolveProfiles lists the names every profile serves into c.Profiles
// and checks them against the spec's tool counts, the default profile
// and the budget references.
func resolveProfiles(errs *spec.ErrorList, c *Catalog, s *spec.Spec, byGroup map[string]*spec.ToolsFile) {
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
func checkAnswer(errs *spec.ErrorList, t *spec.Tool, in, out *spec.Schema) {
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
	} else if l != nil && !strings.Contains(l.Description, strconv.FormatFloat(*l.Maximum, 'f', -1, 64)) {
		// tools/list serves the page size's range only in its description.
		errs.Add(t.File, t.Line, "tool %s: limit's description must state its maximum (%v)", t.Name, *l.Maximum)
	}
	if out == nil || out.Ref != "" {
		errs.Add(t.File, t.Line, "tool %s: a paged answer is an object of its own (not a shared record), with nextCursor", t.Name)
		return
	}
	if nc := out.Properties["nextCursor"]; nc == nil || baseType(nc) != "string" || slices.Contains(out.Required, "nextCursor") {
		errs.Add(t.File, t.Line, "tool %s: a paged answer must have an optional nextCursor string in output", t.Name)
	}
	for _, f := range a.Page {
		if !validJSONName(f) {
			errs.Add(t.File, t.Line, "tool %s: answer.page field %q must be a camelCase name", t.Name, f)
			continue
		}
		if p := out.Properties[f]; p == nil || baseType(p) != "array" || !slices.Contains(out.Required, f) {
			errs.Add(t.File, t.Line, "tool %s: answer.page field %q must be a required array of output", t.Name, f)
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

// refTable resolves $ref: "#/defs/<name>" (input fragments) and
// "#/records/<name>" (answer records).
type refTable struct {
	defs, records map[string]*spec.Schema
}

func (r *refTable) lookup(ref string) *spec.Schema {
	if r == nil {
		return nil
	}
	if name, ok := strings.CutPrefix(ref, "#/defs/"); ok {
		return r.defs[name]
	}
	if name, ok := strings.CutPrefix(ref, "#/records/"); ok {
		return r.records[name]
	}
	return nil
}

// inline returns a deep copy of s with every $ref replaced by its fragment.
// A $ref may add "null" to the fragment's type ({$ref: ..., type:
// [object, "null"]}).
func inline(s *spec.Schema, refs *refTable, errs *spec.ErrorList, file, where string) *spec.Schema {
	return inlineDepth(s, refs, errs, file, where, 0)
}

func inlineDepth(s *spec.Schema, refs *refTable, errs *spec.ErrorList, file, where string, depth int) *spec.Schema {
	if s == nil {
		return nil
	}
	if depth > 32 {
		errs.Add(file, s.Line, "%s: $ref cycle", where)
		return &spec.Schema{Line: s.Line}
	}
	if s.Ref != "" {
		d := refs.lookup(s.Ref)
		if d == nil {
			errs.Add(file, s.Line, "%s: unresolved $ref %q", where, s.Ref)
			return &spec.Schema{Line: s.Line}
		}
		out := inlineDepth(d, refs, errs, file, where, depth+1)
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
		if nullable(s) {
			if base := baseType(out); base != "" && (len(s.Type) != 2 || s.Type[0] != base && s.Type[1] != base) {
				errs.Add(file, s.Line, "%s: a $ref's type may only add null to the fragment's type %q", where, base)
			} else {
				out.Type = spec.TypeList{base, "null"}
			}
		} else if len(s.Type) > 0 {
			errs.Add(file, s.Line, "%s: a $ref's type may only add null to the fragment's type", where)
		}
		out.Line = s.Line
		return out
	}
	cp := *s
	cp.Properties = nil
	if s.Properties != nil {
		cp.Properties = map[string]*spec.Schema{}
		for k, v := range s.Properties {
			cp.Properties[k] = inlineDepth(v, refs, errs, file, where+"."+k, depth+1)
		}
	}
	cp.Items = inlineDepth(s.Items, refs, errs, file, where+"[]", depth+1)
	cp.OneOf = nil
	for _, o := range s.OneOf {
		cp.OneOf = append(cp.OneOf, inlineDepth(o, refs, errs, file, where, depth+1))
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
func checkSchema(errs *spec.ErrorList, file, where string, s *spec.Schema, refs *refTable, top bool) {
	checkSubset(errs, file, where, s, refs, top, false)
}

// checkOutput checks an answer schema: the input subset, except that
// integers need no bounds, strings may be format date-time, and defaults,
// bounds and oneOf have no place in an answer. An answer (top) is an
// object.
func checkOutput(errs *spec.ErrorList, file, where string, s *spec.Schema, refs *refTable, top bool) {
	checkSubset(errs, file, where, s, refs, top, true)
}

func checkSubset(errs *spec.ErrorList, file, where string, s *spec.Schema, refs *refTable, top, output bool) {
	if s == nil {
		if top {
			errs.Add(file, 0, "%s: missing", where)
		}
		return
	}
	if s.Ref != "" && s.Properties == nil && len(s.Type) == 0 && len(s.OneOf) == 0 && len(s.Enum) == 0 && s.Const == nil && refs.lookup(s.Ref) == nil {
		errs.Add(file, s.Line, "%s: unresolved $ref %q", where, s.Ref)
		return
	}
	checkPlacement(errs, file, where, s, top, output)
	if len(s.Type) == 2 && !nullable(s) {
		errs.Add(file, s.Line, "%s: a two-name type must be [<type>, \"null\"]", where)
	}
	if len(s.OneOf) > 0 {
		checkOneOf(errs, file, where, s, refs, output)
		return
	}
	if isAny(s) {
		return
	}
	t := baseType(s)
	checkKeywordsApply(errs, file, where, s, t)
	switch t {
	case "string":
		checkString(errs, file, where, s)
	case "integer":
		checkInteger(errs, file, where, s, output)
	case "number":
		if !output && (s.Minimum == nil || s.Maximum == nil) {
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
		checkSubset(errs, file, where+"[]", s.Items, refs, false, output)
	case "object":
		checkObject(errs, file, where, s, refs, output)
	case "":
		errs.Add(file, s.Line, "%s: a schema needs a type, oneOf or $ref", where)
	default:
		errs.Add(file, s.Line, "%s: unsupported type %q", where, t)
	}
	if s.Default != nil && t != "string" && t != "integer" && t != "boolean" {
		errs.Add(file, s.Line, "%s: default is supported on string, integer and boolean only", where)
	}
}

// checkPlacement reports the keywords s may not carry where it stands:
// in an answer (output) or an input, and at the top level of either.
func checkPlacement(errs *spec.ErrorList, file, where string, s *spec.Schema, top, output bool) {
	if output {
		switch {
		case s.Default != nil:
			errs.Add(file, s.Line, "%s: an answer has no defaults", where)
		case s.Bound != "":
			errs.Add(file, s.Line, "%s: bound applies to arguments only", where)
		case len(s.OneOf) > 0:
			errs.Add(file, s.Line, "%s: oneOf is not supported in answers", where)
		}
		if s.Format != "" && baseType(s) != "string" {
			errs.Add(file, s.Line, "%s: format applies to strings", where)
		}
	} else if s.Format != "" {
		errs.Add(file, s.Line, "%s: format applies to answers only (it would cost tokens in tools/list)", where)
	}
	if top && (baseType(s) != "object" || nullable(s)) {
		if output {
			errs.Add(file, s.Line, "%s: an answer must be type object (structuredContent is an object)", where)
		} else {
			errs.Add(file, s.Line, "%s: input must be type object", where)
		}
	}
	if top && len(s.OneOf) > 0 {
		errs.Add(file, s.Line, "%s: no oneOf at the top level of an input schema", where)
	}
}

// checkOneOf checks a oneOf schema: exactly a string and an object
// branch, each a valid schema, and no type beside it.
func checkOneOf(errs *spec.ErrorList, file, where string, s *spec.Schema, refs *refTable, output bool) {
	if len(s.Type) > 0 {
		errs.Add(file, s.Line, "%s: oneOf replaces type", where)
	}
	var kinds []string
	for _, o := range s.OneOf {
		kinds = append(kinds, baseType(o))
		checkSubset(errs, file, where, o, refs, false, output)
	}
	sort.Strings(kinds)
	if !slices.Equal(kinds, []string{"object", "string"}) {
		errs.Add(file, s.Line, "%s: oneOf must be exactly a string branch and an object branch", where)
	}
}

// checkKeywordsApply reports the keywords s carries that do not apply to
// its type t.
func checkKeywordsApply(errs *spec.ErrorList, file, where string, s *spec.Schema, t string) {
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
}

// checkString checks a string schema's pattern, length bounds and default.
func checkString(errs *spec.ErrorList, file, where string, s *spec.Schema) {
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
}

// checkInteger checks an integer schema's bounds (required in inputs,
// whole and JSON-safe) and its default.
func checkInteger(errs *spec.ErrorList, file, where string, s *spec.Schema, output bool) {
	if output && s.Minimum == nil && s.Maximum == nil {
		return
	}
	if s.Minimum == nil || s.Maximum == nil {
		errs.Add(file, s.Line, "%s: integers must state minimum and maximum", where)
		return
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
}

// checkObject checks an object schema: every required property defined,
// every property a valid schema with a camelCase name.
func checkObject(errs *spec.ErrorList, file, where string, s *spec.Schema, refs *refTable, output bool) {
	for _, r := range s.Required {
		if s.Properties[r] == nil {
			errs.Add(file, s.Line, "%s: required property %q is not defined", where, r)
		}
	}
	for _, k := range s.PropertyOrder {
		checkSubset(errs, file, where+"."+k, s.Properties[k], refs, false, output)
		if !validJSONName(k) {
			errs.Add(file, s.Line, "%s: property name %q must be a camelCase identifier", where, k)
		}
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
	if t.Output != nil {
		switch r := a.Response; {
		case r != nil && r.Unwrap != "":
			f := t.Output.Properties[r.Unwrap]
			if f == nil || !slices.Contains(t.Output.Required, r.Unwrap) {
				errs.Add(a.File, a.Line, "%s: response.unwrap %q is not a required field of %s's output", where, r.Unwrap, t.Name)
			}
			al.Output = f
		case r != nil && r.WrapArray:
			one := int64(1)
			al.Output = &spec.Schema{Type: spec.TypeList{"array"}, Items: t.Output, MinItems: &one, MaxItems: &one, Line: t.Output.Line}
		default:
			al.Output = t.Output
		}
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
