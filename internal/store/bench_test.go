package store

import (
	"context"
	"path/filepath"
	"testing"

	"github.com/agent-interop/runtime/ent"
)

// BenchmarkOpenCurrent measures Open+Close of a store whose schema version
// is current (the start-up path of every runtime process).
func BenchmarkOpenCurrent(b *testing.B) {
	path := filepath.Join(b.TempDir(), "interop.db")
	s := openT(b, path)
	seed(b, s, 100)
	s.Close()
	ctx := context.Background()
	b.ReportAllocs()
	for b.Loop() {
		s, err := Open(ctx, path)
		if err != nil {
			b.Fatal(err)
		}
		if s.Migrated() {
			b.Fatal("migrated on the fast path")
		}
		s.Close()
	}
}

// BenchmarkOpenCurrentFirstQuery adds the first query (which opens the
// SQLite connection and applies the DSN pragmas) to BenchmarkOpenCurrent:
// the cost the first tool call pays after a lazy Open.
func BenchmarkOpenCurrentFirstQuery(b *testing.B) {
	path := filepath.Join(b.TempDir(), "interop.db")
	s := openT(b, path)
	seed(b, s, 100)
	s.Close()
	ctx := context.Background()
	b.ReportAllocs()
	for b.Loop() {
		s, err := Open(ctx, path)
		if err != nil {
			b.Fatal(err)
		}
		if _, err := s.Recovery(ctx); err != nil {
			b.Fatal(err)
		}
		s.Close()
	}
}

// BenchmarkAppendOnePerTx appends one work row per write transaction.
func BenchmarkAppendOnePerTx(b *testing.B) {
	s := openT(b, filepath.Join(b.TempDir(), "interop.db"))
	ctx := context.Background()
	i := 0
	b.ReportAllocs()
	for b.Loop() {
		i++
		id := "work_b_" + itoa(i)
		if err := s.Tx(ctx, func(tx *ent.Tx) error { insertWork(b, ctx, tx, id); return nil }); err != nil {
			b.Fatal(err)
		}
	}
	b.ReportMetric(float64(b.N)/b.Elapsed().Seconds(), "appends/s")
}

// BenchmarkAppendBatched appends 100 work rows per transaction with one
// multi-row INSERT (CreateBulk); one op is one batch, appends/s counts rows.
func BenchmarkAppendBatched(b *testing.B) {
	s := openT(b, filepath.Join(b.TempDir(), "interop.db"))
	ctx := context.Background()
	const batch = 100
	n := 0
	b.ReportAllocs()
	for b.Loop() {
		if err := s.Tx(ctx, func(tx *ent.Tx) error {
			builders := make([]*ent.WorkItemCreate, batch)
			for j := range builders {
				n++
				builders[j] = tx.WorkItem.Create().SetID("work_b_" + itoa(n)).SetObjective("objective").
					SetAcceptanceCriteria([]string{"done"}).SetRisks([]string{}).SetUnresolvedQuestions([]string{}).
					SetChangedFiles([]string{}).SetCreatedAt(testNow).SetUpdatedAt(testNow)
			}
			return tx.WorkItem.CreateBulk(builders...).Exec(ctx)
		}); err != nil {
			b.Fatal(err)
		}
	}
	b.ReportMetric(float64(n)/b.Elapsed().Seconds(), "appends/s")
}
