// Package catalogtest holds the tests of the generated catalogs package:
// catalog invariants, and the differential and fuzz tests that prove every
// generated validator accepts and rejects exactly what a JSON Schema
// engine (santhosh-tekuri/jsonschema) does with the same schema. It has no
// non-test code beyond this comment.
package catalogtest
