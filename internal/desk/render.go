package desk

import (
	"net/url"
	"strconv"
	"strings"
	"time"

	"github.com/agent-interop/runtime/internal/desk/markup"
)

// Base is the path the desk is served under.
const Base = "/desk"

// Pages and fragments are written by Go functions over a markup.Writer
// (html_pages.go, html_rows.go), not by html/template: its executor's
// reflection (MethodByName with a name known only at run time) would make
// the linker keep every exported method of every reachable type in the
// binary. markup escapes as html/template does in each context.

// fragment renders one part of a page, for a live update.
func fragment(write func(w *markup.Writer)) string {
	var w markup.Writer
	write(&w)
	return w.String()
}

// formatTime is the desk's one time format: UTC, to the second.
func formatTime(t time.Time) string {
	if t.IsZero() {
		return "—"
	}
	return t.UTC().Format("2006-01-02 15:04:05Z")
}

func formatTimePtr(t *time.Time) string {
	if t == nil {
		return "—"
	}
	return formatTime(*t)
}

func formatISOPtr(t *time.Time) string {
	if t == nil {
		return ""
	}
	return t.UTC().Format(time.RFC3339Nano)
}

// shorten cuts s to n characters with an ellipsis.
func shorten(s string, n int) string {
	if r := []rune(s); len(r) > n {
		return string(r[:max(n-1, 1)]) + "…"
	}
	return s
}

// joinPath builds a desk URL path from raw segments, each escaped.
func joinPath(parts ...string) string {
	var b strings.Builder
	b.WriteString(Base)
	for _, p := range parts {
		b.WriteByte('/')
		b.WriteString(url.PathEscape(p))
	}
	return b.String()
}

// sessionPath is the page of a provider session.
func sessionPath(provider, nativeID string) string { return joinPath("sessions", provider, nativeID) }

// splitSessionRef reads a "<provider>:<nativeId>" reference (the form work
// items, claims and handoffs use) into the session page's path, or "" when
// it is not one. Provider ids are open (the agent catalog and a user's
// agents file), so any id of the catalog's form is taken; the page itself
// exists for every session the store mentions.
func splitSessionRef(ref string) string {
	p, n, ok := strings.Cut(ref, ":")
	if !ok || !providerIDForm(p) || n == "" || strings.HasPrefix(n, "//") {
		return ""
	}
	return sessionPath(p, n)
}

// providerIDForm reports a string shaped like a provider id: 1–64
// lower-case letters, digits, '-', '_' or '.', starting with a letter.
func providerIDForm(p string) bool {
	if p == "" || len(p) > 64 || p[0] < 'a' || p[0] > 'z' {
		return false
	}
	for _, c := range p {
		if !(c >= 'a' && c <= 'z' || c >= '0' && c <= '9' || c == '-' || c == '_' || c == '.') {
			return false
		}
	}
	return true
}

// queryString builds "?k=v&..." from pairs, leaving out empty values.
func queryString(kv ...string) string {
	v := url.Values{}
	for i := 0; i+1 < len(kv); i += 2 {
		if kv[i+1] != "" {
			v.Set(kv[i], kv[i+1])
		}
	}
	if len(v) == 0 {
		return ""
	}
	return "?" + v.Encode()
}

// groupDigits writes n with a comma between groups of three digits: 1,234.
func groupDigits(n int) string {
	s := strconv.Itoa(n)
	neg := strings.HasPrefix(s, "-")
	s = strings.TrimPrefix(s, "-")
	var b strings.Builder
	if neg {
		b.WriteByte('-')
	}
	for i, c := range s {
		if i > 0 && (len(s)-i)%3 == 0 {
			b.WriteByte(',')
		}
		b.WriteRune(c)
	}
	return b.String()
}
