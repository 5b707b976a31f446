package spec

import (
	"fmt"

	"github.com/invopop/jsonschema"
	"gopkg.in/yaml.v3"
)

// UnmarshalYAML accepts `type: string` and `type: [string, "null"]`.
func (t *TypeList) UnmarshalYAML(n *yaml.Node) error {
	switch n.Kind {
	case yaml.ScalarNode:
		*t = TypeList{n.Value}
		return nil
	case yaml.SequenceNode:
		var s []string
		if err := n.Decode(&s); err != nil {
			return err
		}
		*t = s
		return nil
	}
	return fmt.Errorf("line %d: type must be a name or a list of names", n.Line)
}

// JSONSchema describes TypeList in spec.schema.json.
func (TypeList) JSONSchema() *jsonschema.Schema {
	names := []any{"object", "string", "integer", "number", "boolean", "array", "null"}
	return &jsonschema.Schema{OneOf: []*jsonschema.Schema{
		{Type: "string", Enum: names},
		{Type: "array", Items: &jsonschema.Schema{Type: "string", Enum: names}, MinItems: ptr(uint64(2)), MaxItems: ptr(uint64(2))},
	}}
}

func ptr[T any](v T) *T { return &v }

// UnmarshalYAML decodes a schema and remembers its line and property order.
func (s *Schema) UnmarshalYAML(n *yaml.Node) error {
	type plain Schema
	if err := n.Decode((*plain)(s)); err != nil {
		return err
	}
	s.Line = n.Line
	if n.Kind == yaml.MappingNode {
		for i := 0; i+1 < len(n.Content); i += 2 {
			if n.Content[i].Value != "properties" {
				continue
			}
			props := n.Content[i+1]
			for j := 0; j+1 < len(props.Content); j += 2 {
				s.PropertyOrder = append(s.PropertyOrder, props.Content[j].Value)
			}
		}
	}
	return nil
}

// UnmarshalYAML remembers the tool's line.
func (t *Tool) UnmarshalYAML(n *yaml.Node) error {
	type plain Tool
	if err := n.Decode((*plain)(t)); err != nil {
		return err
	}
	t.Line = n.Line
	return nil
}

// UnmarshalYAML remembers the profile's line.
func (p *Profile) UnmarshalYAML(n *yaml.Node) error {
	type plain Profile
	if err := n.Decode((*plain)(p)); err != nil {
		return err
	}
	p.Line = n.Line
	return nil
}

// UnmarshalYAML remembers the alias's line.
func (a *Alias) UnmarshalYAML(n *yaml.Node) error {
	type plain Alias
	if err := n.Decode((*plain)(a)); err != nil {
		return err
	}
	a.Line = n.Line
	return nil
}

// UnmarshalYAML remembers the variable's line.
func (e *EnvVar) UnmarshalYAML(n *yaml.Node) error {
	type plain EnvVar
	if err := n.Decode((*plain)(e)); err != nil {
		return err
	}
	e.Line = n.Line
	return nil
}

// UnmarshalYAML remembers the agent's line.
func (a *Agent) UnmarshalYAML(n *yaml.Node) error {
	type plain Agent
	if err := n.Decode((*plain)(a)); err != nil {
		return err
	}
	a.Line = n.Line
	return nil
}
