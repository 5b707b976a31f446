// Package archtest holds the tests that keep the repository's documented
// shape true:
//
//   - the import layering ARCHITECTURE.md states (layers_test.go): every
//     package belongs to one layer, a layer imports only the layers it may,
//     only the server, stdio and cli speak the MCP SDK, and the product
//     binary carries no test or generator code; ARCHITECTURE.md's table
//     names every layer and package of it (docs_test.go);
//   - README's Layout section (layout_test.go): it names every top-level
//     directory and every package directory down to internal/<a>/<b>, and
//     nothing that no longer exists;
//   - spec/env.yaml (env_test.go): it declares every environment variable
//     the code reads, and nothing the code does not read;
//   - CONTRIBUTING.md's golden table (docs_test.go): it names every test
//     package with an -update flag;
//   - one clock (clock_test.go): production code reads and waits on time
//     only through the injected quartz clock, except the references
//     wallclock_allow.txt names, each with its reason.
//
// It has no non-test code beyond this comment.
package archtest
