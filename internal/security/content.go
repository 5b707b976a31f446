package security

import (
	"bytes"
	"encoding/json"

	"github.com/agent-interop/runtime/internal/lazy"
)

// Content detection: a file that is key material is refused whatever it
// is called. "Is" matters: a source file or document that embeds a key in
// a string is served with the key redacted (internal/secrets); a file
// whose content is the key is refused like a deny-listed name.

// pemBegin matches a PEM BEGIN line; pemPrivate one of a private key (PKCS#1,
// PKCS#8, encrypted PKCS#8, SEC1, OpenSSH, PGP, ...).
var (
	pemBegin   = lazy.Regexp{Expr: `^-----BEGIN [A-Z0-9 ]+-----`}
	pemPrivate = lazy.Regexp{Expr: `(?m)^-----BEGIN [A-Z0-9 ]*PRIVATE KEY(?: BLOCK)?-----`}
	// pemPreamble are the lines openssl writes before a PEM block
	// ("Bag Attributes", "    localKeyID: ...", "subject=...") and comments.
	pemPreamble = lazy.Regexp{Expr: `^(?:[ \t]*(?:#.*|Bag Attributes.*|Key Attributes.*|[ \t]+[\w .-]+:.*|(?:subject|issuer)=.*|[\w-]+: .*)?\r?\n)*`}
	// shadowLine is a line of a shadow, gshadow or htpasswd file: a name and
	// a crypt(3) hash ($id$...), possibly locked with "!".
	shadowLine = lazy.Regexp{Expr: `(?m)^[A-Za-z_][A-Za-z0-9_.-]*\$?:!*\$(?:1|2[abxy]?|5|6|7|y|gy|apr1|sha1|md5)\$[^:\s]+(?::|$)`}
)

// Magic numbers of binary key stores.
var (
	jksMagic       = []byte{0xFE, 0xED, 0xFE, 0xED}
	jceksMagic     = []byte{0xCE, 0xCE, 0xCE, 0xCE}
	pkcs7DataOID   = []byte{0x06, 0x09, 0x2A, 0x86, 0x48, 0x86, 0xF7, 0x0D, 0x01, 0x07, 0x01}
	opensshKeyV1   = []byte("openssh-key-v1\x00")
	xauthCookie    = []byte("\x00\x12MIT-MAGIC-COOKIE-1") // length-prefixed, as .Xauthority stores it
	puttyKeyHeader = lazy.Regexp{Expr: `(?m)^PuTTY-User-Key-File-\d+: `}
	ageIdentity    = lazy.Regexp{Expr: `(?m)^AGE-SECRET-KEY-1[0-9A-Z]{20,}`}
)

// KeyMaterial reports whether data is key material and names its kind:
// a PEM or OpenSSH private key file (possibly with certificates), a PuTTY
// or age private key, a JWK or JWK set with a private member, a PKCS#12,
// JKS or JCEKS key store, an X authority cookie file, or a shadow-style
// password hash file. A public key (PEM PUBLIC KEY, ssh-ed25519 AAAA...,
// a JWK without private members) is not key material.
func KeyMaterial(data []byte) (kind string, ok bool) {
	switch {
	case bytes.HasPrefix(data, jksMagic):
		return "Java keystore", true
	case bytes.HasPrefix(data, jceksMagic):
		return "JCEKS keystore", true
	case isPKCS12(data):
		return "PKCS#12 key store", true
	case bytes.HasPrefix(data, opensshKeyV1):
		return "OpenSSH private key", true
	case len(data) > 2 && (data[0] <= 0x01 || data[0] == 0xFF) && bytes.Contains(data, xauthCookie):
		return "X authority cookie", true
	}
	if bytes.Contains(data, []byte("PRIVATE KEY")) && pemPrivate.Get().Match(data) {
		rest := data[len(pemPreamble.Get().Find(data)):]
		if pemBegin.Get().Match(bytes.TrimLeft(rest, " \t\r\n")) {
			return "PEM private key", true
		}
	}
	if bytes.Contains(data, []byte("PuTTY-User-Key-File-")) && puttyKeyHeader.Get().Match(data) {
		return "PuTTY private key", true
	}
	if bytes.Contains(data, []byte("AGE-SECRET-KEY-1")) && ageIdentity.Get().Match(data) {
		return "age identity", true
	}
	if bytes.Contains(data, []byte(`"kty"`)) && jwkPrivate(data) {
		return "JWK private key", true
	}
	if bytes.Contains(data, []byte(":$")) && shadowLine.Get().Match(data) {
		return "password hash file", true
	}
	return "", false
}

// isPKCS12 recognises a DER PFX: SEQUENCE, version INTEGER 3, then the
// authSafe ContentInfo of type pkcs7-data.
func isPKCS12(data []byte) bool {
	if len(data) < 20 || data[0] != 0x30 {
		return false
	}
	i := 2
	switch l := data[1]; {
	case l == 0x80: // indefinite (BER)
	case l > 0x80 && l <= 0x84:
		i += int(l - 0x80)
	case l > 0x84:
		return false
	}
	if i+3 > len(data) || !bytes.Equal(data[i:i+3], []byte{0x02, 0x01, 0x03}) {
		return false
	}
	head := data[i+3 : min(len(data), i+3+16)]
	return bytes.Contains(head, pkcs7DataOID)
}

// jwkPrivateMembers are the members only a private (or symmetric) JWK has.
var jwkPrivateMembers = []string{"d", "p", "q", "dp", "dq", "qi", "k"}

// jwkLoose is the fallback for text that is not valid JSON: a "kty" and a
// private member with a value.
var jwkLoose = lazy.Regexp{Expr: `"(?:d|p|q|dp|dq|qi|k)"\s*:\s*"[A-Za-z0-9_-]{8,}`}

// jwkPrivate reports whether data is a JWK, a JWK set or a JSON document
// holding one, with a private member. Invalid JSON that has "kty" and such
// a member counts too (fail closed).
func jwkPrivate(data []byte) bool {
	var v any
	if err := json.Unmarshal(data, &v); err != nil {
		return jwkLoose.Get().Match(data)
	}
	var walk func(any) bool
	walk = func(v any) bool {
		switch t := v.(type) {
		case map[string]any:
			if _, ok := t["kty"].(string); ok {
				for _, m := range jwkPrivateMembers {
					if s, ok := t[m].(string); ok && s != "" {
						return true
					}
				}
			}
			for _, c := range t {
				if walk(c) {
					return true
				}
			}
		case []any:
			for _, c := range t {
				if walk(c) {
					return true
				}
			}
		}
		return false
	}
	return walk(v)
}
