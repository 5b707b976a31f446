package spec

import (
	"bytes"
	"encoding/json"
	"errors"
	"fmt"
	"io/fs"
	"path"
	"sort"
	"strconv"
	"strings"

	"github.com/santhosh-tekuri/jsonschema/v6"
	"gopkg.in/yaml.v3"
)

// Spec is every spec file, loaded and checked against the format schema.
type Spec struct {
	Defs     map[string]*Schema
	Records  map[string]*Schema
	Bounds   *Bounds
	Groups   []*ToolsFile // sorted by file name
	Profiles *ProfilesFile
	Aliases  *AliasesFile
	// Env is spec/env.yaml; nil when the spec has none.
	Env *EnvFile
	// Agents is spec/agents.yaml; nil when the spec has none.
	Agents *AgentsFile
	// Sources are the spec files read, relative to the repository root.
	Sources []string
}

// EnvPath is the optional file of environment variables.
const EnvPath = "spec/env.yaml"

// AgentsPath is the optional built-in agent catalog.
const AgentsPath = "spec/agents.yaml"

// Error is one spec problem at a file and line.
type Error struct {
	File string
	Line int
	Msg  string
}

func (e *Error) Error() string {
	if e.Line > 0 {
		return fmt.Sprintf("%s:%d: %s", e.File, e.Line, e.Msg)
	}
	return fmt.Sprintf("%s: %s", e.File, e.Msg)
}

// ErrorList is every problem found, in file and line order.
type ErrorList []*Error

func (l ErrorList) Error() string {
	var b strings.Builder
	for i, e := range l {
		if i > 0 {
			b.WriteByte('\n')
		}
		b.WriteString(e.Error())
	}
	return b.String()
}

// Add records a problem.
func (l *ErrorList) Add(file string, line int, format string, args ...any) {
	*l = append(*l, &Error{File: file, Line: line, Msg: fmt.Sprintf(format, args...)})
}

// Err returns the list sorted, or nil when it is empty.
func (l ErrorList) Err() error {
	if len(l) == 0 {
		return nil
	}
	sort.SliceStable(l, func(i, j int) bool {
		if l[i].File != l[j].File {
			return l[i].File < l[j].File
		}
		return l[i].Line < l[j].Line
	})
	return l
}

// Load reads spec/ from fsys (rooted at the repository root), validates every
// file against the format schema and decodes it. All problems are reported
// at once as an ErrorList.
func Load(fsys fs.FS) (*Spec, error) {
	raw, err := FormatSchema()
	if err != nil {
		return nil, err
	}
	v, err := newValidator(raw)
	if err != nil {
		return nil, err
	}
	var errs ErrorList
	s := &Spec{}

	var defs DefsFile
	if v.load(fsys, "spec/defs.yaml", "DefsFile", &defs, &errs) {
		s.Defs = defs.Defs
		s.Bounds = defs.Bounds
	}
	// spec/records.yaml is optional: a spec whose answers reference no
	// record has none.
	_, statErr := fs.Stat(fsys, "spec/records.yaml")
	hasRecords := statErr == nil
	if hasRecords {
		var rf RecordsFile
		if v.load(fsys, "spec/records.yaml", "RecordsFile", &rf, &errs) {
			s.Records = rf.Records
		}
	}
	toolFiles, err := v.loadToolFiles(fsys, s, &errs)
	if err != nil {
		return nil, err
	}
	s.Sources = append(s.Sources, "spec/defs.yaml")
	if hasRecords {
		s.Sources = append(s.Sources, "spec/records.yaml")
	}
	s.Sources = append(s.Sources, toolFiles...)

	var pf ProfilesFile
	if v.load(fsys, "spec/profiles.yaml", "ProfilesFile", &pf, &errs) {
		for _, p := range pf.Profiles {
			p.File = "spec/profiles.yaml"
		}
		s.Profiles = &pf
	}
	var af AliasesFile
	if v.load(fsys, "spec/aliases.yaml", "AliasesFile", &af, &errs) {
		for _, a := range af.Aliases {
			a.File = "spec/aliases.yaml"
		}
		s.Aliases = &af
	}
	s.Sources = append(s.Sources, "spec/profiles.yaml", "spec/aliases.yaml")
	// spec/env.yaml is optional too: a spec without it documents no
	// environment variables.
	if _, err := fs.Stat(fsys, EnvPath); err == nil {
		var ef EnvFile
		if v.load(fsys, EnvPath, "EnvFile", &ef, &errs) {
			checkEnvNames(&ef, &errs)
			s.Env = &ef
		}
		s.Sources = append(s.Sources, EnvPath)
	}
	if _, err := fs.Stat(fsys, AgentsPath); err == nil {
		var af AgentsFile
		if v.load(fsys, AgentsPath, "AgentsFile", &af, &errs) {
			checkAgentIDs(&af, &errs)
			s.Agents = &af
		}
		s.Sources = append(s.Sources, AgentsPath)
	}
	if err := errs.Err(); err != nil {
		return nil, err
	}
	return s, nil
}

// loadToolFiles loads every spec/tools/<group>.yaml, in name order, into
// s.Groups and returns the files' paths.
func (v *validator) loadToolFiles(fsys fs.FS, s *Spec, errs *ErrorList) ([]string, error) {
	toolFiles, err := fs.Glob(fsys, "spec/tools/*.yaml")
	if err != nil {
		return nil, fmt.Errorf("list spec/tools: %w", err)
	}
	if len(toolFiles) == 0 {
		errs.Add("spec/tools", 0, "no tool files (spec/tools/<group>.yaml)")
	}
	sort.Strings(toolFiles)
	for _, f := range toolFiles {
		var tf ToolsFile
		if !v.load(fsys, f, "ToolsFile", &tf, errs) {
			continue
		}
		for _, t := range tf.Tools {
			t.File = f
		}
		if want := strings.TrimSuffix(path.Base(f), ".yaml"); tf.Group != want {
			errs.Add(f, 1, "group %q must match the file name %q", tf.Group, want)
		}
		s.Groups = append(s.Groups, &tf)
	}
	return toolFiles, nil
}

// checkEnvNames stamps ef's variables with their file and reports a name
// or alias declared twice.
func checkEnvNames(ef *EnvFile, errs *ErrorList) {
	seen := map[string]int{}
	for _, e := range ef.Variables {
		e.File = EnvPath
		for _, n := range append([]string{e.Name}, e.Aliases...) {
			if first, dup := seen[n]; dup {
				errs.Add(EnvPath, e.Line, "variable %s is already declared at line %d", n, first)
				continue
			}
			seen[n] = e.Line
		}
	}
}

// checkAgentIDs reports an agent id declared twice.
func checkAgentIDs(af *AgentsFile, errs *ErrorList) {
	seen := map[string]int{}
	for _, a := range af.Agents {
		if first, dup := seen[a.ID]; dup {
			errs.Add(AgentsPath, a.Line, "agent id %s is already declared at line %d", a.ID, first)
			continue
		}
		seen[a.ID] = a.Line
	}
}

type validator struct {
	schemas map[string]*jsonschema.Schema
}

func newValidator(raw []byte) (*validator, error) {
	doc, err := jsonschema.UnmarshalJSON(bytes.NewReader(raw))
	if err != nil {
		return nil, fmt.Errorf("parse spec schema: %w", err)
	}
	c := jsonschema.NewCompiler()
	const url = "mem://spec.schema.json"
	if err := c.AddResource(url, doc); err != nil {
		return nil, fmt.Errorf("add spec schema: %w", err)
	}
	v := &validator{schemas: map[string]*jsonschema.Schema{}}
	for _, kind := range []string{"DefsFile", "RecordsFile", "ToolsFile", "ProfilesFile", "AliasesFile", "EnvFile", "AgentsFile"} {
		sch, err := c.Compile(url + "#/$defs/" + kind)
		if err != nil {
			return nil, fmt.Errorf("compile spec schema %s: %w", kind, err)
		}
		v.schemas[kind] = sch
	}
	return v, nil
}

// load reads one YAML file, validates it against the schema of kind and
// decodes it into out. It reports false when the file has problems.
func (v *validator) load(fsys fs.FS, file, kind string, out any, errs *ErrorList) bool {
	data, err := fs.ReadFile(fsys, file)
	if err != nil {
		errs.Add(file, 0, "cannot read: %v", err)
		return false
	}
	var root yaml.Node
	if err := yaml.Unmarshal(data, &root); err != nil {
		errs.Add(file, yamlErrLine(err), "invalid YAML: %v", err)
		return false
	}
	var generic any
	if err := root.Decode(&generic); err != nil {
		errs.Add(file, 0, "invalid YAML: %v", err)
		return false
	}
	js, err := json.Marshal(normalize(generic))
	if err != nil {
		errs.Add(file, 0, "not representable as JSON: %v", err)
		return false
	}
	inst, err := jsonschema.UnmarshalJSON(bytes.NewReader(js))
	if err != nil {
		errs.Add(file, 0, "not representable as JSON: %v", err)
		return false
	}
	if err := v.schemas[kind].Validate(inst); err != nil {
		var ve *jsonschema.ValidationError
		if !errors.As(err, &ve) {
			errs.Add(file, 0, "%v", err)
			return false
		}
		for _, leaf := range leaves(ve) {
			line := lineAt(&root, leaf.InstanceLocation)
			where := "/" + strings.Join(leaf.InstanceLocation, "/")
			errs.Add(file, line, "%s: %s", where, leafMessage(leaf))
		}
		return false
	}
	if err := root.Decode(out); err != nil {
		errs.Add(file, yamlErrLine(err), "%v", err)
		return false
	}
	return true
}

// leaves returns the innermost validation errors, which name the precise
// keyword that failed.
func leaves(ve *jsonschema.ValidationError) []*jsonschema.ValidationError {
	if len(ve.Causes) == 0 {
		return []*jsonschema.ValidationError{ve}
	}
	var out []*jsonschema.ValidationError
	for _, c := range ve.Causes {
		out = append(out, leaves(c)...)
	}
	return out
}

func leafMessage(ve *jsonschema.ValidationError) string {
	msg := strings.TrimSpace(ve.Error())
	if i := strings.LastIndex(msg, "\n"); i >= 0 {
		msg = strings.TrimSpace(msg[i+1:])
	}
	msg = strings.TrimPrefix(msg, "- ")
	// Drop the library's "at '<location>': " prefix; the caller names the location.
	if strings.HasPrefix(msg, "at '") {
		if i := strings.Index(msg, "': "); i > 0 {
			msg = msg[i+3:]
		}
	}
	return msg
}

// lineAt finds the line of the YAML node at a JSON pointer path.
func lineAt(root *yaml.Node, loc []string) int {
	n := root
	if n.Kind == yaml.DocumentNode && len(n.Content) > 0 {
		n = n.Content[0]
	}
	line := n.Line
	for _, seg := range loc {
		next := (*yaml.Node)(nil)
		switch n.Kind {
		case yaml.MappingNode:
			for i := 0; i+1 < len(n.Content); i += 2 {
				if n.Content[i].Value == seg {
					line = n.Content[i].Line
					next = n.Content[i+1]
					break
				}
			}
		case yaml.SequenceNode:
			if i, err := strconv.Atoi(seg); err == nil && i < len(n.Content) {
				next = n.Content[i]
				line = next.Line
			}
		}
		if next == nil {
			return line
		}
		n = next
	}
	return line
}

func yamlErrLine(err error) int {
	msg := err.Error()
	if i := strings.Index(msg, "line "); i >= 0 {
		rest := msg[i+5:]
		j := 0
		for j < len(rest) && rest[j] >= '0' && rest[j] <= '9' {
			j++
		}
		if n, err := strconv.Atoi(rest[:j]); err == nil {
			return n
		}
	}
	return 0
}

// normalize turns YAML-decoded maps into JSON-marshalable ones.
func normalize(v any) any {
	switch x := v.(type) {
	case map[string]any:
		for k, e := range x {
			x[k] = normalize(e)
		}
		return x
	case map[any]any:
		m := make(map[string]any, len(x))
		for k, e := range x {
			m[fmt.Sprint(k)] = normalize(e)
		}
		return m
	case []any:
		for i, e := range x {
			x[i] = normalize(e)
		}
		return x
	}
	return v
}
