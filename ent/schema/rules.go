package schema

import "fmt"

// Why the validators are named functions.
//
// ent's own runtime.go calls every schema's Fields() at start-up to take
// the validators and defaults out of the field descriptors. Building those
// descriptors links code of ent's field package that reads a type's methods
// through reflect (field.JSON's type check, the builders' Descriptor checks,
// (*field.RType).Implements), and one reachable call of that kind makes the
// Go linker keep every exported method of every type in the binary
// (cmd/link's deadcode "reflectSeen"; `go build -ldflags=-dumpdep` shows it
// as a reachable <ReflectMethod> symbol). With it every interop-runtime
// process mapped a 63 MB binary instead of 53 MB and touched its larger
// tables at start-up (docs/benchmarks.md, "Where the memory goes").
//
// So ent/template/runtime.tmpl replaces ent's runtime registration: it
// assigns each validated field the function Validate<Schema><StructField>
// declared next to its schema, and each default its literal value, without
// calling Fields(). The schema passes the same function to the field's
// Validate, so the generators see it too; a field has at most one
// validator (the template fails the generation otherwise), and the
// generated TestRuntimeRulesAreTheSchemas (ent/runtime_rules_test.go)
// checks that every validator the runtime sets is the function the
// schema's descriptor holds. They are plain functions, not closures that
// text(min, max) would build: package variables made by a call are built
// by the package's init in every process, and a function costs nothing
// until it is called. internal/archtest's TestNoReflectMethodInTheBinary fails if a <ReflectMethod>
// symbol becomes reachable again.

// noLimit is text's max for a field without a maximum length.
const noLimit = -1

// text is the rule of a string field's validator: at least min and at
// most max bytes (max noLimit: no maximum).
func text(v string, min, max int) error {
	switch {
	case len(v) < min && min == 1:
		return fmt.Errorf("must not be empty")
	case len(v) < min:
		return fmt.Errorf("is %d bytes, shorter than %d", len(v), min)
	case max != noLimit && len(v) > max:
		return fmt.Errorf("is %d bytes, longer than the limit of %d", len(v), max)
	}
	return nil
}

// atLeast is the rule of an integer field's validator: min or more.
func atLeast[T int | int64](v, min T) error {
	if v < min {
		return fmt.Errorf("is %d, less than %d", v, min)
	}
	return nil
}
