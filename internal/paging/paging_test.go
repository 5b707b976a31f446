package paging

import (
	"encoding/base64"
	"encoding/json"
	"errors"
	"strings"
	"testing"

	"github.com/agent-interop/runtime/internal/argv"
)

func field(t *testing.T, err error) string {
	t.Helper()
	var ae *argv.Errors
	if !errors.As(err, &ae) || len(ae.Fields) != 1 {
		t.Fatalf("err = %v, want one argument error", err)
	}
	return ae.Fields[0].Field
}

func TestCursorRoundTripAndRefusals(t *testing.T) {
	f := F("status", "open", "session", "")
	c := Encode("list_work_items", f, "2026-01-02T03:04:05.678Z", "work_1")
	keys, err := Decode("list_work_items", F("status", "open", "session", ""), c, 2)
	if err != nil || len(keys) != 2 || keys[0] != "2026-01-02T03:04:05.678Z" || keys[1] != "work_1" {
		t.Fatalf("round trip: %v %v", keys, err)
	}
	if keys, err := Decode("list_work_items", f, "", 2); err != nil || keys != nil {
		t.Fatalf("empty cursor = %v, %v; want the first page", keys, err)
	}
	raw := func(d doc) string {
		b, _ := json.Marshal(d)
		return base64.RawURLEncoding.EncodeToString(b)
	}
	tests := []struct {
		name, cursor, want string
	}{
		{"another tool", c, "was issued by list_work_items, not list_claims"},
		{"other filters", Encode("list_claims", F("status", "blocked"), "a", "b"), "other filter arguments"},
		{"not base64", "%%%", "malformed"},
		{"not JSON", base64.RawURLEncoding.EncodeToString([]byte("nope")), "malformed"},
		{"no tool", raw(doc{V: version, K: []string{"a", "b"}}), "malformed"},
		{"other version", raw(doc{V: version + 1, T: "list_claims", F: F().digest(), K: []string{"a", "b"}}), "another runtime version"},
		{"wrong key count", Encode("list_claims", F(), "a"), "malformed"},
		{"too long", strings.Repeat("A", maxCursorLen+1), "too long"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			filter := F()
			if tt.name == "another tool" {
				filter = f
			}
			_, err := Decode("list_claims", filter, tt.cursor, 2)
			if field(t, err) != "cursor" || !strings.Contains(err.Error(), tt.want) || !strings.Contains(err.Error(), "list_claims") {
				t.Fatalf("err = %v, want cursor refused with %q", err, tt.want)
			}
		})
	}
	// Filter digests separate values that would collide when joined.
	if F("a", "bc").digest() == F("ab", "c").digest() || F("a", "").digest() == F("a").digest() {
		t.Fatal("filter digests collide")
	}
}

func TestLimitAndSince(t *testing.T) {
	for _, tt := range []struct {
		n    int64
		want int
		ok   bool
	}{{0, 20, true}, {1, 1, true}, {100, 100, true}, {101, 0, false}, {-1, 0, false}} {
		got, err := Limit("list_x", tt.n, 20, 100)
		if (err == nil) != tt.ok || got != tt.want {
			t.Errorf("Limit(%d) = %d, %v", tt.n, got, err)
		}
		if err != nil && field(t, err) != "limit" {
			t.Errorf("Limit(%d) error names %s", tt.n, field(t, err))
		}
	}
	s := "2026-01-02T03:04:05.5+02:00"
	at, err := Since("list_x", "updatedSince", &s)
	if err != nil || at.Location().String() != "UTC" || at.Hour() != 1 {
		t.Fatalf("Since = %v, %v", at, err)
	}
	bad := "yesterday"
	if _, err := Since("list_x", "updatedSince", &bad); field(t, err) != "updatedSince" {
		t.Fatal(err)
	}
	if at, err := Since("list_x", "updatedSince", nil); at != nil || err != nil {
		t.Fatal("nil since filters")
	}
}

func TestAfterKeyIsStableWhenItemsAreAddedAtTheFront(t *testing.T) {
	id := func(s string) string { return s }
	list := []string{"e", "d", "c", "b", "a"} // a provider's newest-first listing
	page, more, found := AfterKey(list, id, "", 2)
	if strings.Join(page, "") != "ed" || !more || !found {
		t.Fatalf("first page %v %v %v", page, more, found)
	}
	list = append([]string{"g", "f"}, list...) // two new sessions arrive
	page, more, found = AfterKey(list, id, "d", 2)
	if strings.Join(page, "") != "cb" || !more || !found {
		t.Fatalf("second page %v %v %v", page, more, found)
	}
	page, more, _ = AfterKey(list, id, "b", 2)
	if strings.Join(page, "") != "a" || more {
		t.Fatalf("last page %v %v", page, more)
	}
	if _, _, found := AfterKey(list, id, "zz", 2); found {
		t.Fatal("a vanished cursor record was found")
	}
	sorted := []string{"a", "c", "e", "g"}
	page, more = AfterSorted(sorted, id, "d", 2) // "d" was deleted: the next greater key follows
	if strings.Join(page, "") != "eg" || more {
		t.Fatalf("AfterSorted = %v %v", page, more)
	}
}

func TestChunksBoundEveryINList(t *testing.T) {
	ids := make([]int, 32767*2+5)
	chunks := Chunks(ids, 0)
	total := 0
	for _, c := range chunks {
		if len(c) > ChunkSize || len(c) == 0 {
			t.Fatalf("chunk of %d", len(c))
		}
		total += len(c)
	}
	if total != len(ids) {
		t.Fatalf("chunks hold %d of %d", total, len(ids))
	}
}
