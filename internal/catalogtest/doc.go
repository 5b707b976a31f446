// Package catalogtest holds the differential and fuzz tests that prove
// every generated validator of the catalogs package accepts and rejects
// exactly what a JSON Schema engine (santhosh-tekuri/jsonschema) does with
// the same schema, and the few schema helpers (schema.go) its tests and
// those of internal/catalogtest/invariants share. The catalog invariants
// are in internal/catalogtest/invariants: this package's test binary, which
// -fuzz builds coverage-instrumented whole, imports only the catalogs, the
// decoder's argv and the JSON Schema engine.
package catalogtest
