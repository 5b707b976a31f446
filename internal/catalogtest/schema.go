package catalogtest

import (
	"sort"
	"strings"
	"testing"

	"github.com/santhosh-tekuri/jsonschema/v6"
)

// Schema is a parsed JSON Schema (a tool's input or answer schema).
type Schema = map[string]any

// TypeName is the type s states (the non-null one of a nullable type), or
// "string" for an enum without one; "" when s states neither.
func TypeName(s Schema) string {
	switch t := s["type"].(type) {
	case string:
		return t
	case []any:
		for _, x := range t {
			if x != "null" {
				return x.(string)
			}
		}
	}
	if _, ok := s["enum"]; ok {
		return "string"
	}
	return ""
}

// Props are the properties of an object schema.
func Props(s Schema) map[string]any {
	p, _ := s["properties"].(map[string]any)
	return p
}

// PropNames are the names of s's properties, sorted.
func PropNames(s Schema) []string {
	var out []string
	for k := range Props(s) {
		out = append(out, k)
	}
	sort.Strings(out)
	return out
}

// CompileSchema compiles text (a JSON Schema, draft 2020-12 unless it says
// otherwise) with santhosh-tekuri/jsonschema, failing t when it does not
// compile.
func CompileSchema(t testing.TB, name, text string) *jsonschema.Schema {
	t.Helper()
	doc, err := jsonschema.UnmarshalJSON(strings.NewReader(text))
	if err != nil {
		t.Fatalf("%s: %v", name, err)
	}
	c := jsonschema.NewCompiler()
	c.DefaultDraft(jsonschema.Draft2020)
	if err := c.AddResource("mem://"+name+".json", doc); err != nil {
		t.Fatal(err)
	}
	s, err := c.Compile("mem://" + name + ".json")
	if err != nil {
		t.Fatalf("%s: schema does not compile: %v", name, err)
	}
	return s
}
