package httpguard

import (
	"crypto/rand"
	"crypto/sha256"
	"crypto/subtle"
	"encoding/base64"
	"fmt"
	"net/http"
	"strings"
)

// Secret is a token held only as its SHA-256 digest and compared in
// constant time: the comparison takes the same time whatever the
// candidate's length or how much of it matches. The zero Secret matches
// nothing.
type Secret struct {
	sum [sha256.Size]byte
	set bool
}

// NewSecret holds token; an empty token gives the zero Secret.
func NewSecret(token string) Secret {
	if token == "" {
		return Secret{}
	}
	return Secret{sum: sha256.Sum256([]byte(token)), set: true}
}

// IsSet reports whether s holds a token.
func (s Secret) IsSet() bool { return s.set }

// Matches reports whether candidate is the token, in constant time.
func (s Secret) Matches(candidate string) bool {
	sum := sha256.Sum256([]byte(candidate))
	eq := subtle.ConstantTimeCompare(sum[:], s.sum[:]) == 1
	return eq && s.set
}

// GenerateToken returns a new random token: 32 bytes from crypto/rand,
// base64url without padding (43 characters).
func GenerateToken() (string, error) {
	b := make([]byte, 32)
	if _, err := rand.Read(b); err != nil {
		return "", fmt.Errorf("generate a token: %w", err)
	}
	return base64.RawURLEncoding.EncodeToString(b), nil
}

// A Credential accepts or refuses a request's proof of identity.
type Credential interface {
	Verify(r *http.Request) bool
}

// CredentialFunc adapts a function to Credential.
type CredentialFunc func(r *http.Request) bool

// Verify calls f.
func (f CredentialFunc) Verify(r *http.Request) bool { return f(r) }

// Bearer accepts `Authorization: Bearer <token>` (scheme case-insensitive)
// whose token s matches.
func Bearer(s Secret) Credential {
	return CredentialFunc(func(r *http.Request) bool {
		token, ok := BearerToken(r)
		return ok && s.Matches(token)
	})
}

// BearerToken returns the token of an `Authorization: Bearer <token>`
// header.
func BearerToken(r *http.Request) (string, bool) {
	h := r.Header.Get("Authorization")
	scheme, token, ok := strings.Cut(h, " ")
	if !ok || !strings.EqualFold(scheme, "Bearer") || token == "" {
		return "", false
	}
	return token, true
}
