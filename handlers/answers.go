package handlers

import (
	"encoding/json"
	"time"
)

// The answers_*.go files map the services' records to the answer types
// generated from the spec's output schemas (catalogs, spec/records.yaml):
// one function per record. A field the spec marks optional is a pointer,
// nil when the service leaves it out; a required list is never nil. A
// paged answer carries the service page's own cut (paging.Cuttable) in its
// Cut, so the server's answer guard cuts the service's page, with its
// cursor, and the cut page is mapped again. This file holds the helpers.

// answer maps a service's answer with convert, or passes its error on:
// answer(convert)(svc.Call(...)).
func answer[S, A any](convert func(S) *A) func(S, error) (*A, error) {
	return func(v S, err error) (*A, error) {
		if err != nil {
			return nil, err
		}
		return convert(v), nil
	}
}

// record is answer for a converter to a record value.
func record[S, A any](convert func(S) A) func(S, error) (*A, error) {
	return func(v S, err error) (*A, error) {
		if err != nil {
			return nil, err
		}
		a := convert(v)
		return &a, nil
	}
}

// opt is a pointer to v, or nil for its zero value: a field the service
// leaves out when it is empty.
func opt[T comparable](v T) *T {
	var zero T
	if v == zero {
		return nil
	}
	return &v
}

// list is s, or an empty list for nil: a required list is never null.
func list[T any](s []T) []T {
	if s == nil {
		return []T{}
	}
	return s
}

// mapList converts every record of s; the result is never nil.
func mapList[S, D any](s []S, f func(S) D) []D {
	out := make([]D, len(s))
	for i, v := range s {
		out[i] = f(v)
	}
	return out
}

// nonEmpty is a pointer to s, or nil for an empty list: an optional list
// the service leaves out when it is empty.
func nonEmpty[T any](s []T) *[]T {
	if len(s) == 0 {
		return nil
	}
	return &s
}

// given is a pointer to build(), or nil when the value is not present.
func given[T any](present bool, build func() T) *T {
	if !present {
		return nil
	}
	v := build()
	return &v
}

// ptrTo converts *p, or is nil.
func ptrTo[S, D any](p *S, f func(S) D) *D {
	if p == nil {
		return nil
	}
	v := f(*p)
	return &v
}

func toInt64(v int) int64 { return int64(v) }

// timeText is t as encoding/json writes a time.Time (RFC 3339 with
// nanoseconds as needed).
func timeText(t time.Time) string { return t.Format(time.RFC3339Nano) }

func timePtr(t *time.Time) *string { return ptrTo(t, timeText) }

// rawOpt is raw, or nil when it is empty (left out).
func rawOpt(raw json.RawMessage) any {
	if len(raw) == 0 {
		return nil
	}
	return raw
}

// mapOpt is m, or nil when it is empty (left out).
func mapOpt(m map[string]any) any {
	if len(m) == 0 {
		return nil
	}
	return m
}
