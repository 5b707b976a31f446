package events

import (
	"context"
	"strings"
	"testing"

	"github.com/agent-interop/runtime/internal/providers"
	"github.com/agent-interop/runtime/internal/testutil/teststore"
)

// TestPagesCarryANextCursorWhileEventsFollow: a page answers nextCursor
// only while stored events follow it; the cursor resumes exactly after the
// page (also after the server cut it) and belongs to its session.
func TestPagesCarryANextCursorWhileEventsFollow(t *testing.T) {
	st := teststore.Open(t)
	l := NewLog(st, LogOptions{})
	ctx := context.Background()
	for i := 1; i <= 25; i++ {
		if _, err := l.Append(ctx, providers.Codex, "t1", 1, []providers.NativeEvent{ev("e", i)}); err != nil {
			t.Fatal(err)
		}
	}
	var seqs []int64
	after := int64(0)
	for pages := 0; ; pages++ {
		p, err := l.Page(ctx, providers.Codex, "t1", after, 10)
		if err != nil {
			t.Fatal(err)
		}
		for _, e := range p.Events {
			seqs = append(seqs, e.Sequence)
		}
		if p.NextCursor == "" {
			if p.Next != 25 {
				t.Fatalf("last page ends at %d", p.Next)
			}
			break
		}
		if pages == 0 {
			cut := p.CutPage(4).(Page)
			seqs = seqs[:4]
			p = cut
		}
		next, ok, err := CursorSequence(providers.Codex, "t1", p.NextCursor)
		if err != nil || !ok || next != p.Next {
			t.Fatalf("cursor resumes at %d (%v, %v), page next is %d", next, ok, err, p.Next)
		}
		after = next
	}
	for i, s := range seqs {
		if s != int64(i+1) {
			t.Fatalf("sequences %v are not 1..25 once each", seqs)
		}
	}
	p, _ := l.Page(ctx, providers.Codex, "t1", 0, 10)
	if _, _, err := CursorSequence(providers.Codex, "t2", p.NextCursor); err == nil || !strings.Contains(err.Error(), "cursor") {
		t.Fatalf("another session's cursor: %v", err)
	}
}
