// Package archtest holds the tests that keep the repository's documented
// shape true: the import layering that ARCHITECTURE.md states (every
// package belongs to one layer, and a layer imports only the layers it is
// allowed to), the README's Layout section (it names every top-level
// directory and every package directory down to internal/<a>/<b>, and
// nothing that no longer exists), and spec/env.yaml (it declares every
// environment variable the runtime reads). It has no non-test code beyond
// this comment.
package archtest
