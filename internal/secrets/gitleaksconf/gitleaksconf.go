// Package gitleaksconf holds the part of the gitleaks configuration format
// (data/gitleaks.toml of internal/secrets) that the redactor uses, as the
// types go-toml parses it into. interopgen parses the file into these types
// and writes the result as a Go literal of them (internal/secrets'
// zz_generated.gitleaks.go), so the runtime runs no TOML parser; the
// secrets tests parse the file again into them to check the literal. Path,
// commit and "required" (composite rule) conditions are parsed but ignored
// by the redactor.
package gitleaksconf

// File is a gitleaks configuration: its global allowlists and its rules.
type File struct {
	Title      string      `toml:"title"`
	MinVersion string      `toml:"minVersion"`
	Allowlist  *Allowlist  `toml:"allowlist"`
	Allowlists []Allowlist `toml:"allowlists"`
	Rules      []Rule      `toml:"rules"`
}

// Rule is one detection rule.
type Rule struct {
	ID          string      `toml:"id"`
	Regex       string      `toml:"regex"`
	Path        string      `toml:"path"`
	SecretGroup int         `toml:"secretGroup"`
	Entropy     float64     `toml:"entropy"`
	Keywords    []string    `toml:"keywords"`
	Allowlist   *Allowlist  `toml:"allowlist"`
	Allowlists  []Allowlist `toml:"allowlists"`
}

// Allowlist is a set of conditions under which a finding is not one.
type Allowlist struct {
	Condition   string   `toml:"condition"`
	RegexTarget string   `toml:"regexTarget"`
	Regexes     []string `toml:"regexes"`
	StopWords   []string `toml:"stopwords"`
	Paths       []string `toml:"paths"`
	Commits     []string `toml:"commits"`
}
