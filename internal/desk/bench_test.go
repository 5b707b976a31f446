package desk

import (
	"context"
	"fmt"
	"net/http"
	"net/http/httptest"
	"path/filepath"
	"testing"
	"time"

	"github.com/agent-interop/runtime/ent"
	"github.com/agent-interop/runtime/ent/operation"
	"github.com/agent-interop/runtime/internal/testutil/pgtest"
)

// seedOperations adds n operations over 100 sessions, in batches.
func seedOperations(b *testing.B, f *fixture, n int) {
	b.Helper()
	ctx := context.Background()
	const batch = 500
	for start := 0; start < n; start += batch {
		var bs []*ent.OperationCreate
		for i := start; i < min(start+batch, n); i++ {
			at := f.now.Add(time.Duration(i) * time.Millisecond)
			bs = append(bs, f.ent().Operation.Create().SetID(fmt.Sprintf("op_%08d", i)).SetIdempotencyKey(fmt.Sprintf("k%08d", i)).
				SetProvider("codex").SetNativeID(fmt.Sprintf("thread-%d", i%100)).SetOperation("send").
				SetStatus(operation.StatusCompleted).SetCreatedAt(at).SetUpdatedAt(at))
		}
		if err := f.ent().Operation.CreateBulk(bs...).Exec(ctx); err != nil {
			b.Fatal(err)
		}
	}
	for i := range 100 {
		if _, err := f.ent().ProviderSession.Create().SetProvider("codex").SetNativeID(fmt.Sprintf("thread-%d", i)).
			SetFirstSeenAt(f.now).SetLastSeenAt(f.now).Save(ctx); err != nil {
			b.Fatal(err)
		}
	}
}

// BenchmarkPages serves the first page of receipts (50 rows) and of
// sessions (50 rows, each with its liveness inference) at two store sizes,
// on both dialects: keyset pages cost the same whatever the size of the
// store.
func BenchmarkPages(b *testing.B) {
	for _, dialect := range []string{pgtest.SQLite, pgtest.Postgres} {
		for _, n := range []int{1_000, 100_000} {
			location := filepath.Join(b.TempDir(), "interop.db")
			if dialect == pgtest.Postgres {
				location = pgtest.Database(b)
			}
			f := newFixtureAt(b, location, func(o *Options) { o.RateLimit = -1 })
			seedOperations(b, f, n)
			benchPages(b, f, fmt.Sprintf("%s/operations=%d", dialect, n))
		}
	}
}

func benchPages(b *testing.B, f *fixture, name string) {
	for _, page := range []string{"/desk/receipts", "/desk/sessions", "/desk/receipts?status=completed&provider=codex"} {
		b.Run(name+page, func(b *testing.B) {
			req := httptest.NewRequest(http.MethodGet, page, nil)
			req.Header.Set("Authorization", "Bearer "+testToken)
			req.Host = "127.0.0.1"
			for b.Loop() {
				rec := httptest.NewRecorder()
				f.h.ServeHTTP(rec, req)
				if rec.Code != http.StatusOK {
					b.Fatalf("%d", rec.Code)
				}
			}
		})
	}
}

// BenchmarkRender renders a receipts page of 50 rows with no store: the
// cost of the HTML alone (markup.Writer), which BenchmarkPages includes.
func BenchmarkRender(b *testing.B) {
	rows := make([]ReceiptRow, 50)
	for i := range rows {
		at := time.Date(2026, 1, 2, 3, 4, 5, i, time.UTC)
		rows[i] = ReceiptRow{ID: fmt.Sprintf("op_%08d", i), Provider: "codex", NativeID: fmt.Sprintf("thread-%d", i), Operation: "send",
			Status: "completed", Created: at, Updated: at}
	}
	pd := pageData{Title: "Receipts", Nav: "receipts", Live: Base + "/live/receipts", Now: time.Date(2026, 1, 2, 3, 4, 5, 0, time.UTC),
		Data: receiptsView{Page: ReceiptPage{Rows: rows}, States: receiptStates, Operations: []string{"send", "cancel", "permission"},
			Tail: listTail{ID: "receipt-rows", Base: Base + "/receipts", Next: "abc"}, Position: Position{ID: "receipts", From: 1, To: 50, Total: 1000}}}
	for b.Loop() {
		if _, err := renderPage("receipts", pd); err != nil {
			b.Fatal(err)
		}
	}
}
