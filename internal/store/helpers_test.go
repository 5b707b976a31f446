package store

import (
	"context"
	"os"
	"strconv"
	"testing"

	"github.com/agent-interop/runtime/ent"
)

func itoa(i int) string { return strconv.Itoa(i) }

func insertWork(t testing.TB, ctx context.Context, tx *ent.Tx, id string) {
	t.Helper()
	if err := tx.WorkItem.Create().SetID(id).SetObjective("objective " + id).
		SetAcceptanceCriteria([]string{"done"}).SetRisks([]string{}).SetUnresolvedQuestions([]string{}).
		SetChangedFiles([]string{}).SetCreatedAt(testNow).SetUpdatedAt(testNow).Exec(ctx); err != nil {
		t.Fatalf("insert %s: %v", id, err)
	}
}

func seed(t testing.TB, s *Store, n int) {
	t.Helper()
	ctx := context.Background()
	if err := s.Tx(ctx, func(tx *ent.Tx) error {
		base := tx.WorkItem.Query().CountX(ctx)
		for i := 0; i < n; i++ {
			insertWork(t, ctx, tx, "work_seed_"+itoa(base+i))
		}
		return nil
	}); err != nil {
		t.Fatal(err)
	}
	if _, err := s.DB().Exec("PRAGMA wal_checkpoint(TRUNCATE)"); err != nil {
		t.Fatal(err)
	}
}

// damagePages overwrites every page after the first with garbage, keeping
// the header valid so only SQLite's own reads can notice.
func damagePages(t testing.TB, path string) {
	t.Helper()
	data, err := os.ReadFile(path)
	if err != nil {
		t.Fatal(err)
	}
	for i := 4096; i < len(data); i++ {
		data[i] = byte(i*7 + 3)
	}
	if err := os.WriteFile(path, data, 0o600); err != nil {
		t.Fatal(err)
	}
	os.Remove(path + "-wal")
	os.Remove(path + "-shm")
}
