package importstate

import (
	"errors"
	"fmt"
	"slices"
	"sort"
	"strconv"
	"strings"
	"time"
	"unicode/utf8"

	"github.com/agent-interop/runtime/catalogs/limits"
	"github.com/agent-interop/runtime/ent/schema"
)

// maxErrors bounds how many problems one refusal lists.
const maxErrors = 50

// Store limits a record must fit (ent/schema, derived from the spec's
// bounds in catalogs/limits).
const (
	maxIDBytes        = schema.MaxIDBytes
	maxSessionBytes   = schema.MaxSessionBytes
	maxParticipantLen = schema.MaxSessionBytes
	maxNativeIDBytes  = schema.MaxNativeIDBytes
	maxWorkspaceBytes = schema.MaxWorkspaceBytes
	maxKeyBytes       = schema.MaxKeyBytes
	maxReplyToBytes   = schema.MaxReplyToBytes
	maxRevisionBytes  = schema.MaxRevisionBytes
	maxTitleChars     = limits.CreateConversationTitleMaxLen // conversations.MaxTitleLen
)

// checker collects the problems of one file, each at its position.
type checker struct {
	src  *source
	errs []error // *InputError
}

func (c *checker) fail(path, format string, args ...any) {
	if len(c.errs) < maxErrors {
		c.errs = append(c.errs, c.src.field(path, format, args...))
	}
}

// err joins the problems in the order of their positions.
func (c *checker) err() error {
	sort.SliceStable(c.errs, func(i, j int) bool {
		a, b := c.errs[i].(*InputError), c.errs[j].(*InputError)
		return a.Line < b.Line || a.Line == b.Line && a.Column < b.Column
	})
	return errors.Join(c.errs...)
}

// id checks a required record id.
func (c *checker) id(path, v string) string {
	switch {
	case strings.TrimSpace(v) == "":
		c.fail(path, "required, must not be blank")
	case len(v) > maxIDBytes:
		c.fail(path, "must be at most %d bytes; it has %d", maxIDBytes, len(v))
	}
	return v
}

// unique refuses an id that seen already has (the record at path).
func (c *checker) unique(seen map[string]bool, path, kind, id string) {
	if id != "" && seen[id] {
		c.fail(path+".id", "%s %q appears twice", kind, id)
	}
	seen[id] = true
}

// required checks a required string of at most maxBytes bytes (0: no bound).
func (c *checker) required(path, v string, maxBytes int) string {
	switch {
	case strings.TrimSpace(v) == "":
		c.fail(path, "required, must not be blank")
	case maxBytes > 0 && len(v) > maxBytes:
		c.fail(path, "must be at most %d bytes; it has %d", maxBytes, len(v))
	}
	return v
}

// optional checks an optional string; blank becomes nil.
func (c *checker) optional(path string, v *string, maxBytes int) *string {
	if v == nil || strings.TrimSpace(*v) == "" {
		return nil
	}
	if maxBytes > 0 && len(*v) > maxBytes {
		c.fail(path, "must be at most %d bytes; it has %d", maxBytes, len(*v))
	}
	s := *v
	return &s
}

// enum checks v is one of allowed; a blank v takes def when def is set.
func (c *checker) enum(path, v, def string, allowed ...string) string {
	if v == "" && def != "" {
		return def
	}
	if !slices.Contains(allowed, v) {
		if v == "" {
			c.fail(path, "required, one of %s", strings.Join(allowed, ", "))
		} else {
			c.fail(path, "must be one of %s; found %q", strings.Join(allowed, ", "), v)
		}
	}
	return v
}

// time parses a required ISO-8601 timestamp (Date.toISOString).
func (c *checker) time(path, v string) time.Time {
	if strings.TrimSpace(v) == "" {
		c.fail(path, "required, an ISO-8601 time such as 2026-01-02T03:04:05.678Z")
		return time.Time{}
	}
	return c.timeValue(path, v)
}

// timeOr parses an optional timestamp, def when missing.
func (c *checker) timeOr(path, v string, def time.Time) time.Time {
	if strings.TrimSpace(v) == "" {
		return def
	}
	return c.timeValue(path, v)
}

func (c *checker) timeValue(path, v string) time.Time {
	t, err := time.Parse(time.RFC3339Nano, strings.TrimSpace(v))
	if err != nil {
		c.fail(path, "must be an ISO-8601 time such as 2026-01-02T03:04:05.678Z; found %q", v)
		return time.Time{}
	}
	return t.UTC()
}

// list returns a string list (nil becomes empty).
func list(v []string) []string {
	if v == nil {
		return []string{}
	}
	return slices.Clone(v)
}

// optionalList keeps nil for a missing list (the store's optional lists).
func optionalList(v []string) []string {
	if len(v) == 0 {
		return nil
	}
	return slices.Clone(v)
}

// refs checks a list of ids that must name records in have; it returns
// the list with duplicates removed, in order.
func (c *checker) refs(path string, ids []string, have map[string]bool, what string) []string {
	out := make([]string, 0, len(ids))
	seen := map[string]bool{}
	for i, id := range ids {
		p := path + "[" + strconv.Itoa(i) + "]"
		if !have[id] {
			c.fail(p, "names %s %q, which is not in %s", what, id, c.src.name())
			continue
		}
		if !seen[id] {
			seen[id] = true
			out = append(out, id)
		}
	}
	return out
}

// cut returns s cut to n characters.
func cut(s string, n int) string {
	if utf8.RuneCountInString(s) <= n {
		return s
	}
	return string([]rune(s)[:n])
}

func itoa(i int) string { return strconv.Itoa(i) }

func index(path string, i int) string { return fmt.Sprintf("%s[%d]", path, i) }

// bound is the spec's bound on tool's argument at path (catalogs/limits,
// generated from spec/): a record is held to what the tool that creates
// it accepts.
func bound(tool, path string) limits.Bound {
	for _, b := range limits.Bounds {
		if b.Tool == tool && b.Path == path {
			return b
		}
	}
	panic("importstate: the spec has no bound for " + tool + " " + path)
}

// chars refuses a string longer (in characters) than tool's bound on arg.
func (c *checker) chars(path, v, tool, arg string) {
	b := bound(tool, arg)
	if len(v) > b.Max { // a character is at least one byte: count only then
		if n := utf8.RuneCountInString(v); n > b.Max {
			c.fail(path, "must be at most %d characters (the bound of %s %s); it has %d", b.Max, tool, arg, n)
		}
	}
}

// optChars is chars for an optional string.
func (c *checker) optChars(path string, v *string, tool, arg string) {
	if v != nil {
		c.chars(path, *v, tool, arg)
	}
}

// items refuses a list with more entries than tool's bound on arg, or an
// entry longer than its bound on arg[].
func (c *checker) items(path string, v []string, tool, arg string) {
	if b := bound(tool, arg); len(v) > b.Max {
		c.fail(path, "must have at most %d entries (the bound of %s %s); it has %d", b.Max, tool, arg, len(v))
	}
	for i, s := range v {
		c.chars(index(path, i), s, tool, arg+"[]")
	}
}
