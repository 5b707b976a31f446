// Package paging is the runtime's paging contract, shared by every tool that
// answers a collection: opaque cursors that name the tool and the filters
// they were issued for, keyset helpers for in-memory lists, and the
// interface through which the server's answer guard cuts a page short so
// that it stays within its budget (see internal/server).
//
// A cursor is base64url over a small JSON document: a version, the tool
// name, a digest of the filter arguments and the keyset position (the sort
// key of the last record delivered). A cursor handed to another tool, or
// reused with other filters, is refused with an error naming the cursor
// argument instead of silently answering another query.
package paging

import (
	"crypto/sha256"
	"encoding/base64"
	"encoding/hex"
	"encoding/json"
	"fmt"
	"strings"
	"time"
	"unicode"
	"unicode/utf8"

	"github.com/agent-interop/runtime/catalogs/limits"
	"github.com/agent-interop/runtime/internal/argv"
)

// version is the cursor format; a cursor of another version is stale.
const version = 1

// maxCursorLen bounds what Decode looks at: the spec's cursor kind, in
// characters (the schema lets every cursor argument be this long).
const maxCursorLen = limits.KindCursor

// Filter is the canonical form of a query's filter arguments: name=value
// pairs in a fixed order. Two calls page the same query when their filters
// are equal.
type Filter []string

// F builds a Filter from alternating names and values; empty values are
// kept, so {status:""} and no status are the same filter.
func F(pairs ...string) Filter { return Filter(pairs) }

func (f Filter) digest() string {
	h := sha256.New()
	for _, p := range f {
		fmt.Fprintf(h, "%d:%s;", len(p), p)
	}
	return hex.EncodeToString(h.Sum(nil)[:6])
}

type doc struct {
	V int      `json:"v"`
	T string   `json:"t"`
	F string   `json:"f"`
	K []string `json:"k"`
}

// Encode returns the opaque cursor that resumes tool's query under filter
// after the record whose sort key is keys.
func Encode(tool string, filter Filter, keys ...string) string {
	b, err := json.Marshal(doc{V: version, T: tool, F: filter.digest(), K: keys})
	if err != nil {
		panic(err) // strings only
	}
	return base64.RawURLEncoding.EncodeToString(b)
}

// Decode checks a cursor given to tool with filter and returns its keys,
// wantKeys of them. An empty cursor returns nil keys and no error (the
// first page). Every refusal is an *argv.Errors naming "cursor".
func Decode(tool string, filter Filter, cursor string, wantKeys int) ([]string, error) {
	if cursor == "" {
		return nil, nil
	}
	if utf8.RuneCountInString(cursor) > maxCursorLen {
		return nil, Invalid(tool, "cursor", "is not a cursor this runtime issued (too long); pass nextCursor back unchanged or omit cursor")
	}
	raw, err := base64.RawURLEncoding.DecodeString(strings.TrimSpace(cursor))
	var d doc
	if err == nil {
		err = json.Unmarshal(raw, &d)
	}
	if err != nil || d.T == "" {
		return nil, Invalid(tool, "cursor", "is malformed; pass nextCursor back unchanged or omit cursor")
	}
	switch {
	case d.V != version:
		return nil, Invalid(tool, "cursor", "is from another runtime version; omit cursor to start over")
	case d.T != tool:
		return nil, Invalid(tool, "cursor", fmt.Sprintf("was issued by %s, not %s; pass it to %s or omit cursor", d.T, tool, d.T))
	case d.F != filter.digest():
		return nil, Invalid(tool, "cursor", "was issued for other filter arguments; repeat the filters of the call that returned it, or omit cursor")
	case len(d.K) != wantKeys:
		return nil, Invalid(tool, "cursor", "is malformed; pass nextCursor back unchanged or omit cursor")
	}
	return d.K, nil
}

// Invalid is the tool error for an argument the paging layer refuses; it
// reads like the generated validators' errors ("invalid arguments for
// <tool>: <field> <rule>").
func Invalid(tool, field, rule string) error {
	return &argv.Errors{Tool: tool, Fields: []argv.FieldError{{Field: field, Rule: rule}}}
}

// Stale is the error for a well-formed cursor whose position no longer
// exists (the record it points after was deleted).
func Stale(tool string) error {
	return Invalid(tool, "cursor", "points at a record that no longer exists; omit cursor to start over")
}

// Limit returns n when it is within 1..max, def when n is 0 (a caller that
// bypassed the generated decoder), and an error naming "limit" otherwise.
func Limit(tool string, n int64, def, max int) (int, error) {
	switch {
	case n == 0:
		return def, nil
	case n < 1 || n > int64(max):
		return 0, Invalid(tool, "limit", fmt.Sprintf("must be between 1 and %d", max))
	}
	return int(n), nil
}

// Since reads a time filter argument such as updatedSince (RFC 3339,
// fractional seconds allowed); nil or "" is no filter. field names the
// argument in the error.
func Since(tool, field string, s *string) (*time.Time, error) {
	if s == nil || *s == "" {
		return nil, nil
	}
	t, err := time.Parse(time.RFC3339Nano, *s)
	if err != nil {
		return nil, Invalid(tool, field, "must be an RFC 3339 time such as 2026-01-02T15:04:05Z")
	}
	t = t.UTC()
	return &t, nil
}

// Session reads a session filter argument: nil or "" is no filter; a
// value is trimmed, and one that is blank or holds a control character is
// refused with an error naming field. withProvider also requires the
// <provider>:<nativeId> form (the records it filters store both parts).
func Session(tool, field string, s *string, withProvider bool) (string, error) {
	if s == nil || *s == "" {
		return "", nil
	}
	v := strings.TrimSpace(*s)
	if v == "" {
		return "", Invalid(tool, field, "must not be blank; omit it to list every session")
	}
	if strings.IndexFunc(v, unicode.IsControl) >= 0 {
		return "", Invalid(tool, field, "must not contain control characters")
	}
	if withProvider {
		if p, n, ok := strings.Cut(v, ":"); !ok || strings.TrimSpace(p) == "" || strings.TrimSpace(n) == "" {
			return "", Invalid(tool, field, "must be <provider>:<nativeId>")
		}
	}
	return v, nil
}

// Cuttable is an answer whose page the server may cut short: it holds
// PageLen records, and CutPage(n) returns a copy of the answer that keeps
// the first n of them (1 ≤ n < PageLen) and whose nextCursor resumes right
// after the last record kept. The receiver is not changed, and a record is
// never cut in part.
type Cuttable interface {
	PageLen() int
	CutPage(n int) any
}
