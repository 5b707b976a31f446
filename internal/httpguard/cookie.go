package httpguard

import "net/http"

// Cookie accepts a request carrying the cookie name whose value s
// matches (constant time): the credential of a browser page that traded a
// one-time login link for a session cookie.
func Cookie(name string, s Secret) Credential {
	return CredentialFunc(func(r *http.Request) bool {
		c, err := r.Cookie(name)
		return err == nil && s.Matches(c.Value)
	})
}

// SessionCookie is the cookie such a page sets: HttpOnly (no script reads
// it), SameSite=Strict (no other site's page sends it), Path=/, no
// expiry (it ends with the browser session), Secure when served over TLS.
func SessionCookie(name, value string, tls bool) *http.Cookie {
	return &http.Cookie{Name: name, Value: value, Path: "/", HttpOnly: true, SameSite: http.SameSiteStrictMode, Secure: tls}
}
