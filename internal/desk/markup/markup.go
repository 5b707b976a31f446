// Package markup writes HTML without templates, with html/template's
// escaping: the traffic desk renders its pages with it.
//
// The desk used html/template, whose executor (text/template's) calls
// reflect's MethodByName with a name known only at run time; that one call
// makes the Go linker keep every exported method of every reachable type in
// the binary (no method dead-code elimination). A Writer has no reflection.
//
// Markup can only come from constants: [Writer.Raw] takes an unexported
// string type, which an untyped string constant converts to implicitly but a
// string variable does not (the idea of google/safehtml's stringConstant).
// Everything else goes through a method that escapes it for its context,
// byte for byte as html/template escapes a string there:
//
//   - [Writer.Text] in text, in a <title> and inside a double-quoted
//     attribute value opened with Raw (html/template's htmlEscaper and
//     attrEscaper share one table: NUL, double and single quote, '&', '+', '<', '>');
//   - [Writer.Attr] for a whole double-quoted attribute;
//   - [Writer.URL] and [Writer.URLQuery] for URL-valued attributes (href,
//     action, src, sse-connect): a URL that starts with a dynamic value is
//     filtered (only a same-origin path "/x", never "//host", or a query or
//     fragment "?x", "#x"; anything else becomes "#ZgotmplZ", html/template's
//     failsafe), then normalised or escaped as html/template does in that part
//     of a URL.
//
// A Raw constant must not leave a URL, event-handler or style attribute
// open for a dynamic value to follow; the desk's tests check its own calls.
package markup

import (
	"strconv"
	"strings"
)

// constant is markup known when the program is compiled. It is unexported
// so that only an untyped string constant converts to it.
type constant string

// failsafe is what a URL that fails the filter becomes (html/template's
// "#ZgotmplZ").
const failsafe = "#ZgotmplZ"

// Writer accumulates HTML. The zero value is ready to use.
type Writer struct {
	buf []byte
}

// Raw writes markup known at compile time, unescaped.
func (w *Writer) Raw(s constant) { w.buf = append(w.buf, s...) }

// Text writes s escaped for text or for a double-quoted attribute value.
func (w *Writer) Text(s string) { w.buf = appendEscaped(w.buf, s) }

// Int writes a decimal number (digits need no escaping).
func (w *Writer) Int(n int) { w.buf = strconv.AppendInt(w.buf, int64(n), 10) }

// Int64 writes a decimal number.
func (w *Writer) Int64(n int64) { w.buf = strconv.AppendInt(w.buf, n, 10) }

// Attr writes ` name="value"` with value escaped.
func (w *Writer) Attr(name constant, value string) {
	w.openAttr(name)
	w.Text(value)
	w.buf = append(w.buf, '"')
}

// URL writes the URL-valued attribute ` name="prefix rest"`. rest is
// treated as html/template treats a value interpolated after prefix:
//   - prefix "": rest is the whole URL, filtered (see the package doc),
//     then normalised (bytes that may not appear in a URL percent-encoded,
//     existing escapes kept);
//   - prefix with '?' or '#': rest is in the query or fragment, every byte
//     but the unreserved ones percent-encoded;
//   - other prefixes: rest continues the path, normalised.
func (w *Writer) URL(name, prefix constant, rest string) {
	w.openAttr(name)
	w.buf = append(w.buf, prefix...)
	w.urlPart(string(prefix), rest)
	w.buf = append(w.buf, '"')
}

// URLQuery writes ` name="prefix path sep value"`: a URL as [Writer.URL]
// writes it, followed by a constant separator such as "?before=" or "#" and
// one more value, escaped for the query or fragment when the constant text
// before it has a '?' or '#'.
func (w *Writer) URLQuery(name, prefix constant, path string, sep constant, value string) {
	w.openAttr(name)
	w.buf = append(w.buf, prefix...)
	w.urlPart(string(prefix), path)
	w.buf = append(w.buf, sep...)
	w.urlPart(string(prefix)+string(sep), value)
	w.buf = append(w.buf, '"')
}

func (w *Writer) openAttr(name constant) {
	w.buf = append(w.buf, ' ')
	w.buf = append(w.buf, name...)
	w.buf = append(w.buf, '=', '"')
}

// urlPart writes a dynamic value of a URL after the constant text before.
func (w *Writer) urlPart(before, s string) {
	switch {
	case before == "":
		if !safeURL(s) {
			s = failsafe
		}
		w.buf = appendEscaped(w.buf, normalizeURL(s))
	case strings.ContainsAny(before, "?#"):
		w.buf = appendEscaped(w.buf, escapeURL(s))
	default:
		w.buf = appendEscaped(w.buf, normalizeURL(s))
	}
}

// Bytes returns what was written; it aliases the writer's buffer.
func (w *Writer) Bytes() []byte { return w.buf }

// String returns what was written.
func (w *Writer) String() string { return string(w.buf) }

// safeURL reports whether s may start a URL attribute: a same-origin
// reference the desk builds, "/path" (never "//host", nor "/\host", which
// browsers read as "//host"), "?query" or "#fragment". The empty string is
// allowed (a link to the page itself).
func safeURL(s string) bool {
	if s == "" {
		return true
	}
	switch s[0] {
	case '?', '#':
		return true
	case '/':
		return len(s) == 1 || (s[1] != '/' && s[1] != '\\')
	}
	return false
}

// escapes is html/template's htmlReplacementTable (html.go), for the bytes
// it replaces; every one is ASCII, so a byte loop over UTF-8 matches its
// rune loop (a multi-byte sequence never holds an ASCII byte).
var escapes = [...]string{
	0:    "\uFFFD",
	'"':  "&#34;",
	'&':  "&amp;",
	'\'': "&#39;",
	'+':  "&#43;",
	'<':  "&lt;",
	'>':  "&gt;",
}

func appendEscaped(b []byte, s string) []byte {
	last := 0
	for i := 0; i < len(s); i++ {
		c := s[i]
		if int(c) >= len(escapes) || escapes[c] == "" {
			continue
		}
		b = append(b, s[last:i]...)
		b = append(b, escapes[c]...)
		last = i + 1
	}
	return append(b, s[last:]...)
}

// normalizeURL is html/template's urlNormalizer: it percent-encodes the
// bytes that may not appear in a URL, keeping reserved characters and
// valid escapes.
func normalizeURL(s string) string { return processURL(s, true) }

// escapeURL is html/template's urlEscaper: it percent-encodes every byte
// but the unreserved ones, for a value inside a query or fragment.
func escapeURL(s string) string { return processURL(s, false) }

// processURL is html/template's processURLOnto (url.go).
func processURL(s string, norm bool) string {
	var b []byte
	written := 0
	for i, n := 0, len(s); i < n; i++ {
		c := s[i]
		switch c {
		case '!', '#', '$', '&', '*', '+', ',', '/', ':', ';', '=', '?', '@', '[', ']':
			if norm {
				continue
			}
		case '-', '.', '_', '~':
			continue
		case '%':
			if norm && i+2 < len(s) && isHex(s[i+1]) && isHex(s[i+2]) {
				continue
			}
		default:
			if 'a' <= c && c <= 'z' || 'A' <= c && c <= 'Z' || '0' <= c && c <= '9' {
				continue
			}
		}
		if b == nil {
			b = make([]byte, 0, len(s)+16)
		}
		b = append(b, s[written:i]...)
		b = append(b, '%', hexDigits[c>>4], hexDigits[c&15])
		written = i + 1
	}
	if b == nil {
		return s
	}
	return string(append(b, s[written:]...))
}

const hexDigits = "0123456789abcdef"

func isHex(c byte) bool {
	return '0' <= c && c <= '9' || 'a' <= c && c <= 'f' || 'A' <= c && c <= 'F'
}
