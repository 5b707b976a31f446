package gen

import (
	"bytes"
	"fmt"
	"slices"
	"sort"
	"strings"

	"github.com/agent-interop/runtime/gen/spec"
)

// answerTypes assigns Go types to answer schemas and collects their
// declarations. A record ({$ref: "#/records/work"}) is one named type
// (Work) wherever it appears; an answer of its own is <Tool>Output, and
// an object inside it is named after its path (<Tool>Output<Field>).
//
// Fields: a required property is its value (a nullable one a pointer, so
// null is written); an optional one is a pointer with omitempty, so an
// absent value and a zero value stay apart (an empty list that is
// present is a pointer to an empty slice). {} is any.
type answerTypes struct {
	decls map[string]string
	// paged maps an answer type to its page fields (answer.page).
	paged   map[string][]string
	emitted map[string]string // type name -> the schema path that declared it
}

func newAnswerTypes() *answerTypes {
	return &answerTypes{decls: map[string]string{}, paged: map[string][]string{}, emitted: map[string]string{}}
}

func recordName(s *spec.Schema) string {
	if name, ok := strings.CutPrefix(s.Ref, "#/records/"); ok {
		return name
	}
	return ""
}

// answerName is the Go type of a tool's answer.
func answerName(t *Tool) string {
	if r := recordName(t.Output); r != "" {
		return goName(r)
	}
	return t.GoName + "Output"
}

// typeOf returns the Go type of a value of schema s; hint names a new
// struct type.
func (g *answerTypes) typeOf(s *spec.Schema, hint string) (string, error) {
	if r := recordName(s); r != "" && baseType(s) == "object" {
		hint = goName(r)
	}
	if isAny(s) {
		return "any", nil
	}
	switch baseType(s) {
	case "string":
		return "string", nil
	case "integer":
		return "int64", nil
	case "number":
		return "float64", nil
	case "boolean":
		return "bool", nil
	case "array":
		et, err := g.typeOf(s.Items, hint+"Item")
		return "[]" + et, err
	case "object":
		return hint, g.structType(s, hint)
	}
	return "", fmt.Errorf("answer type %s: unsupported schema", hint)
}

func (g *answerTypes) fieldType(s *spec.Schema, required bool, hint string) (string, error) {
	t, err := g.typeOf(s, hint)
	if err != nil || t == "any" {
		return t, err
	}
	if required && !nullable(s) {
		return t, nil
	}
	return "*" + t, nil
}

func (g *answerTypes) structType(s *spec.Schema, name string) error {
	key := s.Ref
	if key == "" {
		key = "inline " + name
	}
	if prev, ok := g.emitted[name]; ok {
		if prev != key {
			return fmt.Errorf("answer type %s is declared twice (%s and %s)", name, prev, key)
		}
		return nil
	}
	g.emitted[name] = key
	var b bytes.Buffer
	doc := fmt.Sprintf("%s is an answer record.", name)
	if r := recordName(s); r != "" {
		doc = fmt.Sprintf("%s is the answer record %s (spec/records.yaml).", name, r)
	}
	if s.Description != "" {
		doc += " " + oneLine(s.Description)
	}
	writeComment(&b, "", doc)
	fmt.Fprintf(&b, "type %s struct {\n", name)
	for _, k := range s.PropertyOrder {
		ps := s.Properties[k]
		req := slices.Contains(s.Required, k)
		ft, err := g.fieldType(ps, req, name+goName(k))
		if err != nil {
			return err
		}
		if ps.Description != "" {
			writeComment(&b, "\t", oneLine(ps.Description))
		}
		tag := k
		if !req {
			tag += ",omitempty"
		}
		fmt.Fprintf(&b, "\t%s %s `json:\"%s\"`\n", goName(k), ft, tag)
	}
	if page := g.paged[name]; len(page) > 0 {
		fmt.Fprintf(&b, "\t// Cut, set by the handler, returns this answer cut to its first n\n\t// page records with the nextCursor that resumes after them; the\n\t// server's answer guard calls it through CutPage.\n")
		fmt.Fprintf(&b, "\tCut func(n int) *%s `json:\"-\"`\n", name)
	}
	b.WriteString("}\n")
	if page := g.paged[name]; len(page) > 0 {
		var lens []string
		for _, f := range page {
			lens = append(lens, "len(o."+goName(f)+")")
		}
		fmt.Fprintf(&b, "\n// PageLen implements paging.Cuttable: the records of %s.\nfunc (o *%s) PageLen() int { return %s }\n", strings.Join(page, ", "), name, strings.Join(lens, " + "))
		fmt.Fprintf(&b, "\n// CutPage implements paging.Cuttable: the answer with its first n page\n// records (itself when the handler set no Cut).\nfunc (o *%s) CutPage(n int) any {\n\tif o.Cut == nil {\n\t\treturn o\n\t}\n\treturn o.Cut(n)\n}\n", name)
	}
	g.decls[name] = b.String()
	return nil
}

// writeComment writes text as a // comment wrapped at about 76 columns.
func writeComment(b *bytes.Buffer, indent, text string) {
	line := indent + "//"
	for _, w := range strings.Fields(text) {
		if len(line)+1+len(w) > 76 && line != indent+"//" {
			b.WriteString(line + "\n")
			line = indent + "//"
		}
		line += " " + w
	}
	b.WriteString(line + "\n")
}

// answersFile renders the answer types of every tool and record.
func answersFile(c *Catalog, inputTypes map[string]string) ([]byte, *answerTypes, error) {
	g := newAnswerTypes()
	for _, t := range c.Tools {
		if len(t.Answer.Page) > 0 {
			g.paged[answerName(t)] = t.Answer.Page
		}
	}
	for _, name := range sortedDefs(c.Records) {
		r := c.Records[name]
		if baseType(r) == "object" {
			if err := g.structType(r, goName(name)); err != nil {
				return nil, nil, err
			}
		}
	}
	for _, t := range c.Tools {
		if _, err := g.typeOf(t.Output, answerName(t)); err != nil {
			return nil, nil, fmt.Errorf("tool %s: %w", t.Name, err)
		}
	}
	var b bytes.Buffer
	b.WriteString(Header + "\n\npackage catalogs\n\n")
	names := make([]string, 0, len(g.decls))
	for n := range g.decls {
		if _, clash := inputTypes[n]; clash {
			return nil, nil, fmt.Errorf("answer type %s has the name of an argument type", n)
		}
		names = append(names, n)
	}
	sort.Strings(names)
	for _, n := range names {
		b.WriteString(g.decls[n])
		b.WriteString("\n")
	}
	src, err := formatGo(AnswersPath, b.Bytes())
	return src, g, err
}

// AnswersPath is the generated file of answer types.
const AnswersPath = "catalogs/zz_generated.answers.go"

// legacyType is the Go type of an alias's 0.3.x answer, and the
// expression that builds it from o, the target's *answer.
func legacyType(g *answerTypes, a *Alias) (typ, expr string, err error) {
	t := a.Target
	r := a.Response
	switch {
	case r != nil && r.Unwrap != "":
		f := t.Output.Properties[r.Unwrap]
		ft, err := g.fieldType(f, true, answerName(t)+goName(r.Unwrap))
		return ft, "o." + goName(r.Unwrap), err
	case r != nil && r.WrapArray:
		return "[]*" + answerName(t), "[]*" + answerName(t) + "{o}", nil
	}
	return "", "", nil
}
