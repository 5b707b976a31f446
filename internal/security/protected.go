package security

import (
	"path"
	"regexp"
	"strings"
	"sync"
	"unicode"

	"golang.org/x/text/unicode/norm"
)

// protectedName matches a single path component that names a credential
// file. It is applied to the folded form of the name (see foldName), so case
// variants, full-width look-alikes and trailing dots or spaces are caught.
var protectedName = sync.OnceValue(func() *regexp.Regexp {
	return regexp.MustCompile(`^(?:` +
		`\.env(?:\..*)?|\.envrc|` + // dotenv files
		`id_(?:rsa|ed25519|ecdsa|dsa|ecdsa_sk|ed25519_sk)|` + // ssh private keys
		`.*\.(?:pem|key|p12|pfx|keystore|jks|ppk|kdbx|gpg|age)|` + // key material
		`\.npmrc|\.yarnrc\.yml|\.pypirc|\.netrc|_netrc|\.pgpass|\.htpasswd|` +
		`\.git-credentials|\.?credentials\.json|auth\.json|secrets?\.(?:json|ya?ml|toml)|` +
		`application_default_credentials\.json|service[-_]account.*\.json|` +
		`\.ssh|\.gnupg|\.password-store` + // whole directories
		`)$`)
})

// protectedSuffixes are multi-component locations: a path whose folded
// components end with one of these sequences is protected wherever it sits.
var protectedSuffixes = [][]string{
	{".aws", "credentials"},
	{".aws", "config"},
	{".docker", "config.json"},
	{".kube", "config"},
	{".config", "gh", "hosts.yml"},
	{".config", "gcloud", "credentials.db"},
	{".config", "gcloud", "access_tokens.db"},
	{".azure", "accesstokens.json"},
	{".azure", "msal_token_cache.json"},
	{".cargo", "credentials"},
	{".cargo", "credentials.toml"},
	{".gem", "credentials"},
	{".terraform.d", "credentials.tfrc.json"},
	{".config", "manicode", "credentials.json"},
	{".codex", "auth.json"},
	{".claude", ".credentials.json"},
}

// foldName maps a file name to the form the deny-list is matched against:
// NFKD-normalized with combining marks dropped (full-width and
// compatibility look-alikes collapse to ASCII), format characters (zero-width
// joiners, BOMs) and variation selectors removed, lower-cased, and trailing dots and spaces trimmed (Windows
// ignores them, so ".env." opens ".env" there).
func foldName(name string) string {
	n := norm.NFKD.String(name)
	n = strings.Map(func(r rune) rune {
		if unicode.Is(unicode.Cf, r) || unicode.Is(unicode.Mn, r) || unicode.Is(unicode.Variation_Selector, r) {
			return -1
		}
		return unicode.ToLower(r)
	}, n)
	if trimmed := strings.TrimRight(n, ". "); trimmed != "" {
		return trimmed
	}
	return n
}

// IsProtectedName reports whether one path component names a credential
// file or directory.
func IsProtectedName(name string) bool {
	if name == "" {
		return false
	}
	if protectedName().MatchString(foldName(name)) {
		return true
	}
	lower := strings.ToLower(norm.NFKC.String(name))
	return protectedName().MatchString(lower)
}

// IsProtectedPath reports whether a slash- or backslash-separated path has a
// protected component or ends with a protected multi-component location.
func IsProtectedPath(p string) bool {
	parts := splitComponents(p)
	folded := make([]string, 0, len(parts))
	for _, c := range parts {
		if IsProtectedName(c) {
			return true
		}
		folded = append(folded, foldName(c))
	}
	for _, suffix := range protectedSuffixes {
		if len(folded) < len(suffix) {
			continue
		}
		tail := folded[len(folded)-len(suffix):]
		match := true
		for i := range suffix {
			if tail[i] != suffix[i] {
				match = false
				break
			}
		}
		if match {
			return true
		}
	}
	return false
}

// splitComponents splits on both separators and drops empty and "."
// components.
func splitComponents(p string) []string {
	fields := strings.FieldsFunc(p, func(r rune) bool { return r == '/' || r == '\\' })
	out := fields[:0]
	for _, f := range fields {
		if f == "." {
			continue
		}
		out = append(out, f)
	}
	return out
}

// cleanSlash is path.Clean for display.
func cleanSlash(p string) string { return path.Clean(strings.ReplaceAll(p, "\\", "/")) }
