package secrets

import (
	"fmt"
	"strings"
	"unicode/utf8"
)

// GitleaksVersion is the gitleaks release data/gitleaks.toml was copied
// from.
const GitleaksVersion = "v8.30.1"

// gitleaksSHA256 pins data/gitleaks.toml to that release.
const gitleaksSHA256 = "e163e53b9e7e8a8511e77271e2b323ed057759542a6d988258afe3a1fa329caf"

// gitleaksFile is the part of the gitleaks configuration format the
// redactor uses. The runtime does not parse the file: interopgen parses it
// into zz_generated.gitleaks.go (gitleaksParsed), so the first redaction
// runs no TOML parser (go-toml's code, a SHA-256 of the 98 KB file and
// about 0.5 MB of garbage, issue 21); gitleaks_test.go checks the table
// against the file. Path, commit and "required" (composite rule) conditions
// are ignored: the redactor sees text without a file path or commit, and
// fails closed by treating every rule as standalone.
type gitleaksFile struct {
	Title      string              `toml:"title"`
	MinVersion string              `toml:"minVersion"`
	Allowlist  *gitleaksAllowlist  `toml:"allowlist"`
	Allowlists []gitleaksAllowlist `toml:"allowlists"`
	Rules      []gitleaksRule      `toml:"rules"`
}

type gitleaksRule struct {
	ID          string              `toml:"id"`
	Regex       string              `toml:"regex"`
	Path        string              `toml:"path"`
	SecretGroup int                 `toml:"secretGroup"`
	Entropy     float64             `toml:"entropy"`
	Keywords    []string            `toml:"keywords"`
	Allowlist   *gitleaksAllowlist  `toml:"allowlist"`
	Allowlists  []gitleaksAllowlist `toml:"allowlists"`
}

type gitleaksAllowlist struct {
	Condition   string   `toml:"condition"`
	RegexTarget string   `toml:"regexTarget"`
	Regexes     []string `toml:"regexes"`
	StopWords   []string `toml:"stopwords"`
	Paths       []string `toml:"paths"`
	Commits     []string `toml:"commits"`
}

// gitleaksRules turns the generated rule set into rules and the global
// allowlists.
func gitleaksRules() ([]*rule, []*allowlist, error) {
	if gitleaksGeneratedSHA256 != gitleaksSHA256 {
		return nil, nil, fmt.Errorf("generated gitleaks rules: from SHA-256 %s, want %s for %s (run go run ./cmd/interopgen generate)",
			gitleaksGeneratedSHA256, gitleaksSHA256, GitleaksVersion)
	}
	f := gitleaksParsed()
	var global []*allowlist
	if f.Allowlist != nil {
		f.Allowlists = append([]gitleaksAllowlist{*f.Allowlist}, f.Allowlists...)
	}
	for _, a := range f.Allowlists {
		if al := a.compile(); al != nil {
			global = append(global, al)
		}
	}
	rules := make([]*rule, 0, len(f.Rules))
	for _, gr := range f.Rules {
		if gr.Regex == "" { // path-only rules name files, not text
			continue
		}
		r := &rule{
			id:          gr.ID,
			source:      sourceGitleaks,
			pattern:     gr.Regex,
			secretGroup: gr.SecretGroup,
			entropy:     gr.Entropy,
			keywords:    lowerAll(gr.Keywords),
		}
		if len(r.keywords) > 0 && strings.Contains(gr.Regex, assignmentOperator) {
			r.gate = operatorAfter
		}
		if gr.ID == vaultServiceID && gr.Regex == vaultServicePattern {
			r.gate = vaultTokenAfter
		}
		if gr.ID == "generic-api-key" && strings.HasPrefix(gr.Regex, genericKeyPrefix) && !strings.Contains(gr.Regex, "^") &&
			!strings.Contains(gr.Regex, `\b`) && !strings.Contains(gr.Regex, `\B`) {
			r.keyStart, r.maxBreaks = 50, genericMaxBreaks
		}
		if gr.Allowlist != nil {
			gr.Allowlists = append([]gitleaksAllowlist{*gr.Allowlist}, gr.Allowlists...)
		}
		for _, a := range gr.Allowlists {
			if al := a.compile(); al != nil {
				r.allow = append(r.allow, al)
			}
		}
		rules = append(rules, r)
		if p := positional(gr); p != nil {
			p.allow = r.allow
			rules = append(rules, p)
		}
	}
	return rules, global, nil
}

// genericKeyPrefix opens generic-api-key's pattern: up to 50 characters of
// [\w.-], then its keywords (each one of the rule's keywords), so a match
// holds a keyword at most 50 bytes into a run of those characters (ASCII
// text; see hasASCIIFold) and the rule is searched from its keywords
// (keyStart 50).
const genericKeyPrefix = `(?i)[\w.-]{0,50}?(?:access|auth|(?-i:[Aa]pi|API)|credential|creds|key|passw(?:or)?d|secret|token)`

// vault-service-token's keywords include "s.", which every sentence with
// a word ending in s before its full stop holds ("tests."), so its
// pattern ran on nearly every prose string. Both of its forms need at
// least 24 token characters right after the keyword: "hvs." then
// [\w-]{90,120}, or "s." then (?i:[a-z0-9]{24}). The gate is that
// necessary condition (vaultTokenAfter); it applies only to this exact
// pattern, so a rules update that changes it drops the gate.
const (
	vaultServiceID      = "vault-service-token"
	vaultServicePattern = `\b((?:hvs\.[\w-]{90,120}|s\.(?i:[a-z0-9]{24})))(?:[\x60'"\s;]|\\[nr]|$)`
	vaultTokenMin       = 24
)

// vaultTokenAfter reports whether some keyword occurrence is followed by
// at least vaultTokenMin characters of [\w-] or of the two non-ASCII
// letters (?i) folds to ASCII ones (U+017F ſ, U+212A Kelvin sign).
func vaultTokenAfter(s string, ends []int) bool {
	for _, e := range ends {
		n := 0
		for _, c := range s[e:] {
			if !(c < utf8.RuneSelf && isTokenChar(byte(c)) || c == '\u017f' || c == '\u212a') {
				break
			}
			if n++; n >= vaultTokenMin {
				return true
			}
		}
	}
	return false
}

// genericMaxBreaks bounds the line breaks of a generic-api-key match: past
// the keyword, only [\s'"]{0,3} before the operator, [\x60'"\s=]{0,5} after
// it and the one closing character match one, so a match holds at most 9;
// its "$" follows the secret, which holds none.
const genericMaxBreaks = 9

// The two parts of gitleaks' "semi-generic" template between a provider
// keyword and the secret: the rest of the key name, then the assignment
// operator.
const (
	semiGenericName     = `(?:[ \t\w.-]{0,20})[\s'"]{0,3}`
	semiGenericOperator = `(?:=|>|:{1,3}=|\|\||:|=>|\?=|,)[\x60'"\s=]{0,5}`
)

// positional derives, from a semi-generic gitleaks rule (provider keyword,
// assignment, secret of the provider's shape), the rule for the same
// secret passed as a bare argument on the keyword's line:
// "algolia login APPID <key>", "finicity-cli auth 1234 <token>". The
// keyword must come first on the same line, up to eight arguments may sit
// between, and the secret must be a whole argument of the provider's
// shape, with the rule's entropy floor and allowlists. Rules for
// identifiers (client ids, not secrets) and the keyword-only generic rules
// (generic-api-key, hashicorp-tf-password), whose shapes are any word, are
// not derived: they would hide ordinary arguments.
func positional(gr gitleaksRule) *rule {
	if !strings.Contains(gr.Regex, semiGenericName) || !strings.Contains(gr.Regex, semiGenericOperator) ||
		gr.ID == "generic-api-key" || gr.ID == "hashicorp-tf-password" || strings.HasSuffix(gr.ID, "-id") {
		return nil
	}
	pattern := strings.Replace(gr.Regex, semiGenericName, `[\w.-]*`, 1)
	pattern = strings.Replace(pattern, semiGenericOperator, `(?:[ \t]+\S+){0,8}?[ \t]+[\x60'"]?`, 1)
	return &rule{
		id:          gr.ID + "/positional",
		source:      sourceGitleaks,
		pattern:     pattern,
		secretGroup: gr.SecretGroup,
		entropy:     gr.Entropy,
		keywords:    lowerAll(gr.Keywords),
	}
}

// compile keeps the checks that can be decided on text alone. An AND
// allowlist that also needs a path or commit can never be satisfied here
// and is dropped (fail closed).
func (a gitleaksAllowlist) compile() *allowlist {
	and := strings.EqualFold(a.Condition, "AND")
	if and && (len(a.Paths) > 0 || len(a.Commits) > 0) {
		return nil
	}
	if len(a.Regexes) == 0 && len(a.StopWords) == 0 {
		return nil
	}
	al := &allowlist{target: a.RegexTarget, and: and, stopWords: lowerAll(a.StopWords)}
	if len(a.Regexes) > 0 {
		al.pattern = "(?:" + strings.Join(a.Regexes, ")|(?:") + ")"
	}
	return al
}

func lowerAll(in []string) []string {
	out := make([]string, len(in))
	for i, s := range in {
		out[i] = strings.ToLower(s)
	}
	return out
}
