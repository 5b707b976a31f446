package bpe

import (
	"errors"
	"slices"
	"strings"
	"testing"
)

// tiny is a byte-level vocabulary: the bytes first, then merges in rank
// order.
func tiny(t *testing.T) *Table {
	t.Helper()
	toks := make([]string, 256)
	for b := range 256 {
		toks[b] = string([]byte{byte(b)})
	}
	toks = append(toks, "ab", "bc", "abc", "", "aa", "aaaa")
	data, err := Build(toks)
	if err != nil {
		t.Fatal(err)
	}
	tb, err := Open(string(data))
	if err != nil {
		t.Fatal(err)
	}
	return tb
}

func TestEncode(t *testing.T) {
	tb := tiny(t)
	long := ""
	for range 50 {
		long += "aab"
	}
	for _, c := range []struct {
		piece string
		want  []uint32
	}{
		{"", nil},
		{"a", []uint32{'a'}},
		{"abc", []uint32{258}},           // a token itself
		{"abcd", []uint32{258, 'd'}},     // ab (256) first, then ab+c
		{"bcab", []uint32{257, 256}},     // leftmost of equal... distinct ranks
		{"aaaaa", []uint32{261, 'a'}},    // aa, aa, then aaaa
		{"aaa", []uint32{260, 'a'}},      // the leftmost pair of equal rank
		{"xyz", []uint32{'x', 'y', 'z'}}, // no merges
	} {
		var s Scratch
		if got := tb.Encode(nil, c.piece, &s); !slices.Equal(got, c.want) {
			t.Errorf("Encode(%q) = %v, want %v", c.piece, got, c.want)
		}
		if got := tb.Count(c.piece, &s); got != len(c.want) {
			t.Errorf("Count(%q) = %d, want %d", c.piece, got, len(c.want))
		}
	}
	// The heap merge (long pieces) and the scan agree.
	var s Scratch
	want := slices.Clone(tb.Encode(nil, long[:heapFrom-3], &s))
	got := tb.Encode(nil, long, &s)
	if !slices.Equal(got[:len(want)], want) || len(got) != 100 {
		t.Errorf("Encode of %d bytes = %v", len(long), got)
	}
	if _, ok := tb.Rank(""); ok {
		t.Error("the empty rank is found")
	}
}

func TestOpenRejectsCorruptTables(t *testing.T) {
	data, err := Build([]string{"a", "b", "ab"})
	if err != nil {
		t.Fatal(err)
	}
	for name, d := range map[string]string{
		"empty":     "",
		"magic":     "xpe2" + string(data[4:]),
		"format 1":  "bpe1" + string(data[4:]),
		"truncated": string(data[:len(data)-1]),
		"longer":    string(data) + "x",
	} {
		if _, err := Open(d); !errors.Is(err, ErrCorrupt) {
			t.Errorf("%s: Open = %v, want ErrCorrupt", name, err)
		}
	}
	if _, err := Build([]string{"a", "a"}); err == nil {
		t.Error("Build accepts a token twice")
	}
	if _, err := Build([]string{"a", strings.Repeat("b", maxTokenLen+1)}); err == nil {
		t.Error("Build accepts a token longer than its length byte")
	}
}
