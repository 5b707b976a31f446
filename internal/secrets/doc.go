// Package secrets finds and redacts credential-shaped text. It is the one
// redactor every tool answer goes through (see internal/server).
//
// Its rules are the gitleaks default rule set (data/gitleaks.toml, MIT,
// version [GitleaksVersion]), loaded from embedded data on first use, plus
// the project's own rules (rules.go) for shapes gitleaks does not cover or
// covers only next to a keyword: private-key blocks cut short, credentials
// in URLs of any scheme (also with an empty user, redis://:pw@host),
// key=value pairs whose key names a secret, Authorization headers, Discord
// and Telegram bot tokens, age identities and well-known token prefixes.
// Each semi-generic gitleaks rule (provider keyword, assignment, secret of
// the provider's shape) also gets a positional variant, so a secret passed
// as a bare command-line argument on the keyword's line is found too.
// Documented example credentials (examples.go: AWS's and Stripe's
// published examples) are left alone by exact value.
//
// Precision is measured like recall: TestPrecisionAndRecall requires 0
// bytes changed on testdata/benign (ordinary code) and 0 leaks on the
// secret corpus.
//
// A keyword prefilter (one Aho-Corasick pass over the lower-cased text)
// picks the rules whose keywords occur; only those run, and each rule's
// regular expression is compiled the first time it is needed. Nothing is
// loaded at package init.
package secrets
