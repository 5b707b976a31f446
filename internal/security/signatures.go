package security

import (
	"crypto/sha256"
	_ "embed"
	"encoding/hex"
	"fmt"
	"path"
	"regexp"
	"strings"

	"gopkg.in/yaml.v3"

	"github.com/agent-interop/runtime/internal/lazy"
)

// The adopted list of sensitive file names: the file signatures of shhgit
// (github.com/eth0izzle/shhgit, MIT), embedded unchanged from one pinned
// commit. data/README.md says how to update it.
const (
	SignaturesSource = "github.com/eth0izzle/shhgit config.yaml"
	SignaturesCommit = "bac0c7d39519203d230b6c9a2c6e3eba18346aba"
	signaturesSHA256 = "53c785a559968f51c6e6b7fd57db8ee157d163537660fc50d1a7abc9570edcbb"
)

//go:embed data/shhgit-config.yaml
var shhgitConfig []byte

// Signature is one entry of the adopted list that names files: its part
// (filename, extension or path), a literal match or a regular expression,
// and shhgit's description.
type Signature struct {
	Part  string `yaml:"part"`
	Match string `yaml:"match"`
	Regex string `yaml:"regex"`
	Name  string `yaml:"name"`
	// Excluded is why the runtime does not adopt the entry ("" when it
	// does): see signatureExclusions.
	Excluded string `yaml:"-"`

	re *regexp.Regexp
}

// signatureExclusions are the adopted list's entries the deny-list leaves
// out, keyed by their match or regex, with the reason. They name ordinary
// project files (application source and configuration, logs, SQL
// migrations, signatures), which the file tools must keep serving; any
// secret inside them is still redacted, and key material inside them is
// refused by content.
var signatureExclusions = lazy.Value[map[string]string]{New: func() map[string]string {
	return map[string]string{
		".log":                 "ordinary build and test output; redacted when read",
		".asc":                 "PGP signatures and public keys; a private key inside is refused by content",
		"settings.py":          "every Django project's settings module; secrets inside are redacted",
		"database.yml":         "every Rails project's database configuration, usually ENV references",
		"carrierwave.rb":       "an ordinary Rails initializer",
		"omniauth.rb":          "an ordinary Rails initializer",
		"LocalSettings.php":    "MediaWiki's ordinary settings file; secrets inside are redacted",
		`config(\.inc)?\.php$`: "matches any PHP file ending in config.php; wp-config.php is denied by the project's own list",
		`^sql(dump)?$`:         "every .sql migration and schema file; .sqldump and dump.sql stay denied",
		"journal.txt":          "a generic file name",
		"mongoid.yml":          "an ordinary Rails configuration file",
		"salesforce.js":        "an ordinary source file name",
		"id_rsa_pub":           "a public key",
	}
}}

// signatures parses the embedded list once; a list that does not load is
// a programming error the package tests catch, and the deny-list then
// holds the project's own families alone.
func signatures() ([]Signature, error) {
	r := parsedSignatures.Get()
	return r.sigs, r.err
}

var parsedSignatures = lazy.Value[signatureList]{New: func() signatureList {
	sigs, err := parseSignatures()
	return signatureList{sigs, err}
}}

// signatureList is the parsed list, or why it did not load.
type signatureList struct {
	sigs []Signature
	err  error
}

// parseSignatures checks and parses the embedded list.
func parseSignatures() ([]Signature, error) {
	sum := sha256.Sum256(shhgitConfig)
	if got := hex.EncodeToString(sum[:]); got != signaturesSHA256 {
		return nil, fmt.Errorf("embedded %s: SHA-256 %s, want %s (commit %s)", SignaturesSource, got, signaturesSHA256, SignaturesCommit)
	}
	var f struct {
		Signatures []Signature `yaml:"signatures"`
	}
	if err := yaml.Unmarshal(shhgitConfig, &f); err != nil {
		return nil, fmt.Errorf("parse embedded %s: %w", SignaturesSource, err)
	}
	var out []Signature
	for _, s := range f.Signatures {
		if s.Part != "filename" && s.Part != "extension" && s.Part != "path" {
			continue // content signatures: the redactor's rules cover text
		}
		key := s.Match
		if key == "" {
			key = s.Regex
		}
		s.Excluded = signatureExclusions.Get()[key]
		if s.Regex != "" {
			re, err := regexp.Compile("(?i)" + s.Regex)
			if err != nil {
				return nil, fmt.Errorf("embedded %s: signature %q: %w", SignaturesSource, s.Name, err)
			}
			s.re = re
		}
		out = append(out, s)
	}
	return out, nil
}

// Signatures returns the file signatures of the adopted list, adopted and
// excluded ones alike (see [Signature.Excluded]).
func Signatures() ([]Signature, error) {
	s, err := signatures()
	if err != nil {
		return nil, err
	}
	return append([]Signature(nil), s...), nil
}

// matchesName reports whether an adopted filename or extension signature
// matches one folded path component. shhgit compares a literal match with
// the whole name or with the extension including its dot; a regex of the
// extension part is written without the dot (^kdbx?$), so it is matched
// against the extension without it.
func (s *Signature) matchesName(name string) bool {
	var subject string
	switch s.Part {
	case "filename":
		subject = name
	case "extension":
		subject = path.Ext(name)
		if subject == "" && strings.HasPrefix(name, ".") {
			subject = name
		}
		if s.re != nil {
			subject = strings.TrimPrefix(subject, ".")
		}
	default:
		return false
	}
	if s.re != nil {
		return subject != "" && s.re.MatchString(subject)
	}
	return subject != "" && subject == strings.ToLower(s.Match)
}

// matchesPath reports whether an adopted path signature matches the
// slash-joined folded path.
func (s *Signature) matchesPath(p string) bool {
	if s.Part != "path" {
		return false
	}
	if s.re != nil {
		return s.re.MatchString(p)
	}
	return p == strings.ToLower(s.Match) || strings.HasSuffix(p, "/"+strings.ToLower(s.Match))
}

// adoptedSignatures are the signatures in force.
func adoptedSignatures() []Signature {
	all, err := signatures()
	if err != nil {
		return nil
	}
	out := make([]Signature, 0, len(all))
	for _, s := range all {
		if s.Excluded == "" {
			out = append(out, s)
		}
	}
	return out
}

var adoptedList = lazy.Value[[]Signature]{New: adoptedSignatures}

func adopted() []Signature { return adoptedList.Get() }

// signatureName reports whether a folded component matches an adopted
// filename or extension signature.
func signatureName(folded string) bool {
	sigs := adopted()
	for i := range sigs {
		if sigs[i].matchesName(folded) {
			return true
		}
	}
	return false
}

// signaturePath reports whether a folded path, or one of its leading
// parts (a protected directory protects what is below it), matches an
// adopted path signature.
func signaturePath(folded []string) bool {
	sigs := adopted()
	for n := 1; n <= len(folded); n++ {
		p := strings.Join(folded[:n], "/")
		for i := range sigs {
			if sigs[i].matchesPath(p) {
				return true
			}
		}
	}
	return false
}
