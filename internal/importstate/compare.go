package importstate

import (
	"encoding/json"
	"fmt"
	"slices"
	"strings"
	"time"

	"github.com/agent-interop/runtime/internal/workflow"
)

// fieldDiff is one field whose stored value differs from the file's.
type fieldDiff struct {
	Field string
	Store string
	File  string
}

// comparer collects the fields in which a stored record differs from the
// record a file holds.
type comparer struct{ diffs []fieldDiff }

func (c *comparer) add(field string, store, file any) {
	c.diffs = append(c.diffs, fieldDiff{Field: field, Store: show(store), File: show(file)})
}

func (c *comparer) str(field, store, file string) {
	if store != file {
		c.add(field, store, file)
	}
}

func (c *comparer) ptr(field string, store, file *string) {
	if deref(store) != deref(file) {
		c.add(field, deref(store), deref(file))
	}
}

func (c *comparer) list(field string, store, file []string) {
	if !slices.Equal(nonNil(store), nonNil(file)) {
		c.add(field, store, file)
	}
}

func (c *comparer) time(field string, store, file time.Time) {
	if !store.Truncate(time.Millisecond).Equal(file.Truncate(time.Millisecond)) {
		c.add(field, workflow.Timestamp(store), workflow.Timestamp(file))
	}
}

func (c *comparer) timePtr(field string, store, file *time.Time) {
	switch {
	case store == nil && file == nil:
	case store == nil || file == nil:
		c.add(field, store, file)
	default:
		c.time(field, *store, *file)
	}
}

func (c *comparer) num(field string, store, file int64) {
	if store != file {
		c.add(field, store, file)
	}
}

// json compares two values by their JSON encoding.
func (c *comparer) json(field string, store, file any) {
	a, _ := json.Marshal(store)
	b, _ := json.Marshal(file)
	if string(a) != string(b) {
		c.add(field, json.RawMessage(a), json.RawMessage(b))
	}
}

func deref(s *string) string {
	if s == nil {
		return ""
	}
	return *s
}

func nonNil(s []string) []string {
	if s == nil {
		return []string{}
	}
	return s
}

// show renders a value for a message, cut to 80 characters.
func show(v any) string {
	var s string
	switch x := v.(type) {
	case string:
		s = fmt.Sprintf("%q", x)
	case *time.Time:
		if x == nil {
			return "none"
		}
		s = workflow.Timestamp(*x)
	case json.RawMessage:
		s = string(x)
	default:
		b, err := json.Marshal(x)
		if err != nil {
			s = fmt.Sprint(x)
		} else {
			s = string(b)
		}
	}
	if s == "null" || s == `""` {
		return "none"
	}
	if r := []rune(s); len(r) > 80 {
		s = string(r[:77]) + "..."
	}
	return strings.ReplaceAll(s, "\n", `\n`)
}
