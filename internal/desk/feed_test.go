package desk

import (
	"context"
	"testing"
	"time"

	"github.com/coder/quartz"

	"github.com/agent-interop/runtime/internal/store"
	"github.com/agent-interop/runtime/internal/testutil/pgtest"
)

// TestChangeCounterMovesOnACommit: the change feed's counter (SQLite's
// data_version, PostgreSQL's snapshot) answers on the store's dialect and
// moves when another connection commits; so the feed signals a write
// instead of falling back to waking its streams on every poll.
func TestChangeCounterMovesOnACommit(t *testing.T) {
	pgtest.EachDialect(t, func(t *testing.T, location string) {
		ctx := context.Background()
		st, err := store.Open(ctx, location)
		if err != nil {
			t.Fatal(err)
		}
		t.Cleanup(func() { st.Close() })
		f := newFeed(st.DB(), st.Dialect(), quartz.NewMock(t), time.Millisecond)
		conn, err := st.DB().Conn(ctx)
		if err != nil {
			t.Fatal(err)
		}
		defer conn.Close()
		read := func() string {
			t.Helper()
			var v string
			if err := conn.QueryRowContext(ctx, f.probe).Scan(&v); err != nil {
				t.Fatalf("%s: %v", f.probe, err)
			}
			return v
		}
		before := read()
		// Another connection commits (the pinned one above stays open).
		if _, err := st.Client().ProviderSession.Create().SetProvider("codex").SetNativeID("t").
			SetFirstSeenAt(time.Now()).SetLastSeenAt(time.Now()).Save(ctx); err != nil {
			t.Fatal(err)
		}
		if after := read(); after == before {
			t.Fatalf("%s stayed %q across a commit", f.probe, before)
		}
	})
}
