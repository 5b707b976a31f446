// Package invariants holds tests of the generated catalogs package that
// read the spec and the services' source: catalog invariants (profiles,
// names, aliases, annotations, groups) and the bounds every argument and
// service takes from the spec. It has no non-test code beyond this comment.
// They are apart from internal/catalogtest so that its fuzz target's test
// binary, coverage-instrumented whole, does not build the spec loader and
// go/parser.
package invariants
