package store

import (
	"context"
	"errors"
	"fmt"
	"strings"
	"sync"
	"testing"

	"github.com/coder/quartz"
	"github.com/jackc/pgx/v5"

	"github.com/agent-interop/runtime/ent"
	"github.com/agent-interop/runtime/ent/conversation"
	"github.com/agent-interop/runtime/internal/testutil/pgtest"
	"github.com/agent-interop/runtime/internal/testutil/wait"
)

func TestIsPostgresAndRedactDSN(t *testing.T) {
	tests := []struct {
		in       string
		postgres bool
		redacted string
		password bool
	}{
		{in: "/home/u/interop.db"},
		{in: "postgresfile.db"},
		{in: "postgres://app:s3cret@db.example:5432/interop?sslmode=verify-full", postgres: true,
			redacted: "postgres://app:xxxxx@db.example:5432/interop?sslmode=verify-full", password: true},
		{in: "POSTGRESQL://app@db/interop", postgres: true, redacted: "postgresql://app@db/interop"},
		{in: "postgres://db/interop?password=s3cret&sslpassword=k3y", postgres: true,
			redacted: "postgres://db/interop?password=xxxxx&sslpassword=xxxxx", password: true},
	}
	for _, tt := range tests {
		if got := IsPostgres(tt.in); got != tt.postgres {
			t.Errorf("IsPostgres(%q) = %v", tt.in, got)
		}
		if !tt.postgres {
			continue
		}
		if got := RedactDSN(tt.in); !strings.EqualFold(got, tt.redacted) || strings.Contains(got, "s3cret") || strings.Contains(got, "k3y") {
			t.Errorf("RedactDSN(%q) = %q, want %q", tt.in, got, tt.redacted)
		}
		if got := HasPassword(tt.in); got != tt.password {
			t.Errorf("HasPassword(%q) = %v", tt.in, got)
		}
	}
}

func TestRebind(t *testing.T) {
	pg := &Store{dialect: "postgres"}
	lite := &Store{dialect: "sqlite3"}
	tests := []struct{ in, want string }{
		{"SELECT a FROM t WHERE x = ? AND y = ?", "SELECT a FROM t WHERE x = $1 AND y = $2"},
		{"VALUES (?1, ?2, ?12, ?1)", "VALUES ($1, $2, $12, $1)"},
		{"SELECT '?' , ? FROM t", "SELECT '?' , $1 FROM t"},
		{"SELECT 1", "SELECT 1"},
	}
	for _, tt := range tests {
		if got := pg.Rebind(tt.in); got != tt.want {
			t.Errorf("Rebind(%q) = %q, want %q", tt.in, got, tt.want)
		}
		if got := lite.Rebind(tt.in); got != tt.in {
			t.Errorf("SQLite Rebind changed %q to %q", tt.in, got)
		}
	}
}

// pgExec runs statements on a database of the shared cluster as the
// application role, outside any Store.
func pgExec(t *testing.T, dsn string, stmts ...string) {
	t.Helper()
	ctx := context.Background()
	conn, err := pgx.Connect(ctx, dsn)
	if err != nil {
		t.Fatal(err)
	}
	defer conn.Close(ctx)
	for _, s := range stmts {
		if _, err := conn.Exec(ctx, s); err != nil {
			t.Fatalf("%s: %v", s, err)
		}
	}
}

func pgStrings(t *testing.T, dsn, query string) []string {
	t.Helper()
	ctx := context.Background()
	conn, err := pgx.Connect(ctx, dsn)
	if err != nil {
		t.Fatal(err)
	}
	defer conn.Close(ctx)
	rows, err := conn.Query(ctx, query)
	if err != nil {
		t.Fatal(err)
	}
	out, err := pgx.CollectRows(rows, pgx.RowTo[string])
	if err != nil {
		t.Fatal(err)
	}
	return out
}

const pgTablesQuery = "SELECT table_name::text FROM information_schema.tables WHERE table_schema = current_schema() ORDER BY 1"

func TestPostgresCreatesOnceAndSkipsWhenCurrent(t *testing.T) {
	dsn := pgtest.Database(t)
	var wg sync.WaitGroup
	stores := make([]*Store, 4)
	errs := make([]error, 4)
	for i := range stores { // four runtimes starting at once on an empty database
		wg.Add(1)
		go func() {
			defer wg.Done()
			stores[i], errs[i] = Open(context.Background(), dsn)
		}()
	}
	wg.Wait()
	migrated := 0
	for i, s := range stores {
		if errs[i] != nil {
			t.Fatalf("open %d: %v", i, errs[i])
		}
		if s.Migrated() {
			migrated++
		}
		if s.Dialect() != "postgres" || !s.Shared() || s.Path() != "" || strings.Contains(s.Location(), pgtest.Shared(t).AppPassword()) {
			t.Fatalf("store %d: dialect %q shared %v path %q location %q", i, s.Dialect(), s.Shared(), s.Path(), s.Location())
		}
		s.Close()
	}
	if migrated != 1 {
		t.Fatalf("%d of 4 concurrent opens created the schema, want exactly 1", migrated)
	}
	if got := pgStrings(t, dsn, "SELECT value FROM interop_meta WHERE key = 'schema_version'"); len(got) != 1 || got[0] != postgresVersion.Get() {
		t.Fatalf("stored version %v, want %s", got, postgresVersion.Get())
	}
	s := openT(t, dsn)
	if s.Migrated() {
		t.Fatal("a current database was migrated again")
	}
}

func TestPostgresRefusesAnotherSchemaVersionUntouched(t *testing.T) {
	dsn := pgtest.Database(t)
	openT(t, dsn).Close()
	pgExec(t, dsn, "UPDATE interop_meta SET value = 'old' WHERE key = 'schema_version'",
		"INSERT INTO conversations (id, title, created_at, updated_at) VALUES ('c1', 'kept', now(), now())")
	tables := pgStrings(t, dsn, pgTablesQuery)
	_, err := Open(context.Background(), dsn)
	if !errors.Is(err, ErrSchemaMismatch) || !strings.Contains(err.Error(), "leaves the database untouched") ||
		strings.Contains(err.Error(), pgtest.Shared(t).AppPassword()) {
		t.Fatalf("Open = %v, want ErrSchemaMismatch without the password", err)
	}
	if got := pgStrings(t, dsn, "SELECT value FROM interop_meta WHERE key = 'schema_version'"); len(got) != 1 || got[0] != "old" {
		t.Fatalf("version after refusal = %v", got)
	}
	if got := pgStrings(t, dsn, pgTablesQuery); strings.Join(got, ",") != strings.Join(tables, ",") {
		t.Fatalf("tables changed: %v -> %v", tables, got)
	}
	if got := pgStrings(t, dsn, "SELECT title FROM conversations"); len(got) != 1 || got[0] != "kept" {
		t.Fatalf("rows after refusal = %v", got)
	}
}

func TestPostgresRefusesForeignDatabaseUntouched(t *testing.T) {
	dsn := pgtest.Database(t)
	pgExec(t, dsn, "CREATE TABLE users (id integer PRIMARY KEY, name text)")
	_, err := Open(context.Background(), dsn)
	if !errors.Is(err, ErrForeignStore) || !strings.Contains(err.Error(), "users") {
		t.Fatalf("Open(foreign) = %v", err)
	}
	if got := pgStrings(t, dsn, pgTablesQuery); strings.Join(got, ",") != "users" {
		t.Fatalf("foreign database changed: tables %v", got)
	}
}

// TestTxRetriesSerializationFailures: read-modify-write transactions from
// many goroutines and two stores lose no update (SQLite queues them;
// PostgreSQL aborts all but one of each conflicting set and Tx runs the
// losers again).
func TestTxRetriesSerializationFailures(t *testing.T) {
	pgtest.EachDialect(t, func(t *testing.T, location string) {
		a, b := openContending(t, location), openContending(t, location)
		ctx := context.Background()
		if err := a.Tx(ctx, func(tx *ent.Tx) error {
			return tx.Conversation.Create().SetID("counter").SetTitle("c").SetCreatedAt(testNow).SetUpdatedAt(testNow).Exec(ctx)
		}); err != nil {
			t.Fatal(err)
		}
		const workers, each = 8, 10
		var wg sync.WaitGroup
		errs := make(chan error, workers)
		for w := range workers {
			s := a
			if w%2 == 1 {
				s = b
			}
			wg.Add(1)
			go func() {
				defer wg.Done()
				for range each {
					err := s.Tx(ctx, func(tx *ent.Tx) error {
						c, err := tx.Conversation.Get(ctx, "counter")
						if err != nil {
							return err
						}
						return tx.Conversation.UpdateOneID("counter").SetLastSequence(c.LastSequence + 1).Exec(ctx)
					})
					if err != nil {
						errs <- err
						return
					}
				}
			}()
		}
		wg.Wait()
		close(errs)
		for err := range errs {
			t.Fatal(err)
		}
		c := a.Client().Conversation.Query().Where(conversation.ID("counter")).OnlyX(ctx)
		if c.LastSequence != workers*each {
			t.Fatalf("counter = %d after %d increments: updates were lost", c.LastSequence, workers*each)
		}
	})
}

// TestPostgresConnectionLostMidTransaction: the server ends the backend
// while a write transaction is open; the call fails with a *ConnLostError
// naming the store without its password, nothing of it is stored, and the
// next call reconnects and succeeds.
func TestPostgresConnectionLostMidTransaction(t *testing.T) {
	c := pgtest.Shared(t)
	dsn := pgtest.Database(t)
	s := openT(t, dsn)
	ctx := context.Background()
	err := s.Tx(ctx, func(tx *ent.Tx) error {
		insertWork(t, ctx, tx, "work_lost")
		if n, err := c.TerminateConnections(ctx, pgtest.DatabaseName(dsn)); err != nil || n == 0 {
			return fmt.Errorf("terminate: %d, %v", n, err)
		}
		_, err := tx.WorkItem.Query().Count(ctx)
		return err
	})
	var lost *ConnLostError
	if !errors.As(err, &lost) || !strings.Contains(err.Error(), "nothing of this call was written") ||
		strings.Contains(err.Error(), c.AppPassword()) || !strings.Contains(err.Error(), "xxxxx") {
		t.Fatalf("Tx across a terminated backend = %v", err)
	}
	if err := s.Tx(ctx, func(tx *ent.Tx) error { insertWork(t, ctx, tx, "work_after"); return nil }); err != nil {
		t.Fatalf("the call after the drop did not reconnect: %v", err)
	}
	ids := s.Client().WorkItem.Query().IDsX(ctx)
	if len(ids) != 1 || ids[0] != "work_after" {
		t.Fatalf("stored %v, want only work_after", ids)
	}
}

// TestPostgresIdleConnectionDropReconnects: pooled connections the server
// ended while idle cost at most the next call (which then fails with
// *ConnLostError; pgx usually notices first and reconnects), never more.
func TestPostgresIdleConnectionDropReconnects(t *testing.T) {
	c := pgtest.Shared(t)
	dsn := pgtest.Database(t)
	s := openT(t, dsn)
	ctx := context.Background()
	seedT := func(id string) error {
		return s.Tx(ctx, func(tx *ent.Tx) error { insertWork(t, ctx, tx, id); return nil })
	}
	if err := seedT("work_1"); err != nil {
		t.Fatal(err)
	}
	if n, err := c.TerminateConnections(ctx, pgtest.DatabaseName(dsn)); err != nil || n == 0 {
		t.Fatalf("terminate: %d, %v", n, err)
	}
	var lost *ConnLostError
	if _, err := s.Client().WorkItem.Query().Count(ctx); err != nil && !errors.As(err, &lost) {
		t.Fatalf("first call after the drop: %v", err)
	}
	if err := seedT("work_2"); err != nil {
		t.Fatalf("second call after the drop: %v", err)
	}
	if n := s.Client().WorkItem.Query().CountX(ctx); n != 2 {
		t.Fatalf("rows = %d, want 2", n)
	}
}

// TestPostgresCommitUnknownIsNotRetried: the connection breaks after the
// server executed COMMIT and before the answer arrived. Tx reports a
// *CommitUnknownError (the change may be stored), does not run the
// transaction again, and the change is in fact stored exactly once.
func TestPostgresCommitUnknownIsNotRetried(t *testing.T) {
	c := pgtest.Shared(t)
	dsn := pgtest.Database(t)
	openT(t, dsn).Close()
	proxy, err := c.NewProxy()
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { proxy.Close() })
	s := openT(t, proxy.Rewrite(dsn))
	ctx := context.Background()
	runs := 0
	proxy.DropNextCommit()
	err = s.Tx(ctx, func(tx *ent.Tx) error {
		runs++
		insertWork(t, ctx, tx, "work_maybe")
		return nil
	})
	var unknown *CommitUnknownError
	if !errors.As(err, &unknown) || !strings.Contains(err.Error(), "may or may not have been stored") ||
		strings.Contains(err.Error(), c.AppPassword()) {
		t.Fatalf("Tx with the commit answer lost = %v", err)
	}
	if runs != 1 || proxy.Dropped() != 1 {
		t.Fatalf("transaction ran %d times, %d connections dropped", runs, proxy.Dropped())
	}
	direct := openT(t, dsn)
	if ids := direct.Client().WorkItem.Query().IDsX(ctx); len(ids) != 1 || ids[0] != "work_maybe" {
		t.Fatalf("stored %v: the commit did reach the server, so the row must be there once", ids)
	}
	if _, err := s.Client().WorkItem.Query().Count(ctx); err != nil && !errors.As(err, new(*ConnLostError)) {
		t.Fatalf("call after the unknown commit: %v", err)
	}
	if n, err := s.Client().WorkItem.Query().Count(ctx); err != nil || n != 1 {
		t.Fatalf("the store did not reconnect: %d, %v", n, err)
	}
}

// TestPostgresUnreachable: a lazily opened team store answers nothing
// until its server does, each call failing with the reason; an eager open
// fails with it. The password never appears.
func TestPostgresUnreachable(t *testing.T) {
	dsn := "postgres://app:Sup3rS3cret@127.0.0.1:1/interop?sslmode=disable&connect_timeout=5"
	ctx := context.Background()
	s, err := Open(ctx, dsn, WithLazyConnect())
	if err != nil {
		t.Fatalf("lazy open contacted the server: %v", err)
	}
	defer s.Close()
	var lost *ConnLostError
	cctx, cancel := context.WithTimeout(ctx, wait.Process)
	defer cancel()
	for _, err := range []error{
		s.Check(cctx),
		s.Tx(cctx, func(tx *ent.Tx) error { return nil }),
		func() error { _, err := s.Client().WorkItem.Query().Count(cctx); return err }(),
	} {
		if !errors.As(err, &lost) || strings.Contains(err.Error(), "Sup3rS3cret") || !strings.Contains(err.Error(), "127.0.0.1") {
			t.Fatalf("call on an unreachable store = %v", err)
		}
	}
	if _, err := Open(cctx, dsn); !errors.As(err, &lost) || strings.Contains(err.Error(), "Sup3rS3cret") {
		t.Fatalf("eager open of an unreachable store = %v", err)
	}
}

// openContending opens a store whose retry backoff runs on the real
// clock: what these tests check is that real concurrent writers spread out
// in real time (a mock that fires every backoff at once would make them
// collide again and again).
func openContending(t *testing.T, location string) *Store {
	t.Helper()
	return openT(t, location, WithClock(quartz.NewReal()))
}

// openRetrying opens a store whose clock fires every retry backoff timer
// as soon as it is armed (the mock stands still otherwise).
func openRetrying(t *testing.T, location string) *Store {
	t.Helper()
	clock := fixedClock(t)
	trap := clock.Trap().NewTimer("store", "retry")
	ctx, cancel := context.WithCancel(context.Background())
	done := make(chan struct{})
	go func() {
		defer close(done)
		for {
			call, err := trap.Wait(ctx)
			if err != nil {
				return
			}
			if call.Release(ctx) != nil {
				return
			}
			clock.AdvanceNext()
		}
	}()
	t.Cleanup(func() { cancel(); <-done; trap.Close() })
	return openT(t, location, WithClock(clock))
}

// TestConcurrentIdempotentWritersGetTheRecord: writers on two stores
// race to create the record of one key (look it up, create it when
// missing, as an idempotent write does); every one of them answers with
// the one record, none with "busy" or a unique violation.
func TestConcurrentIdempotentWritersGetTheRecord(t *testing.T) {
	pgtest.EachDialect(t, func(t *testing.T, location string) {
		a, b := openContending(t, location), openContending(t, location)
		ctx := context.Background()
		const writers, keys = 6, 10
		var wg sync.WaitGroup
		errs := make(chan error, writers*keys)
		for w := range writers {
			s := a
			if w%2 == 1 {
				s = b
			}
			wg.Add(1)
			go func() {
				defer wg.Done()
				for k := range keys {
					id := fmt.Sprintf("idem-%d", k)
					var got *ent.Conversation
					err := s.Tx(ctx, func(tx *ent.Tx) error {
						c, err := tx.Conversation.Get(ctx, id)
						if err == nil {
							got = c
							return nil
						}
						if !ent.IsNotFound(err) {
							return err
						}
						got, err = tx.Conversation.Create().SetID(id).SetTitle(fmt.Sprintf("by %d", w)).
							SetCreatedAt(testNow).SetUpdatedAt(testNow).Save(ctx)
						return err
					})
					if err != nil {
						errs <- fmt.Errorf("writer %d, %s: %w", w, id, err)
						return
					}
					if got == nil || got.ID != id {
						errs <- fmt.Errorf("writer %d, %s: got %+v", w, id, got)
					}
				}
			}()
		}
		wg.Wait()
		close(errs)
		for err := range errs {
			t.Error(err)
		}
		if n := a.Client().Conversation.Query().CountX(ctx); n != keys {
			t.Fatalf("%d records for %d keys", n, keys)
		}
	})
}

// TestPostgresAbortedTransactionNamesTheCause: code that goes on after a
// failed statement gets, from the next statement and from the commit,
// the error that aborted the transaction, never PostgreSQL's "current
// transaction is aborted" (25P02): a duplicate key names the constraint; a
// terminated backend is a *ConnLostError (nothing written, never an
// unknown commit).
func TestPostgresAbortedTransactionNamesTheCause(t *testing.T) {
	c := pgtest.Shared(t)
	dsn := pgtest.Database(t)
	s := openRetrying(t, dsn)
	ctx := context.Background()
	if err := s.Tx(ctx, func(tx *ent.Tx) error { insertWork(t, ctx, tx, "work_dup"); return nil }); err != nil {
		t.Fatal(err)
	}
	err := s.Tx(ctx, func(tx *ent.Tx) error {
		_ = tx.WorkItem.Create().SetID("work_dup").SetObjective("again").SetAcceptanceCriteria([]string{"done"}).
			SetRisks([]string{}).SetUnresolvedQuestions([]string{}).SetChangedFiles([]string{}).
			SetCreatedAt(testNow).SetUpdatedAt(testNow).Exec(ctx) // the error is dropped
		_, err := tx.WorkItem.Query().Count(ctx)
		return err
	})
	if err == nil || strings.Contains(err.Error(), "25P02") || !strings.Contains(err.Error(), "23505") {
		t.Fatalf("Tx after a swallowed duplicate key = %v, want the unique violation", err)
	}
	// The statement error is dropped and fn returns nil: the commit fails
	// with it.
	err = s.Tx(ctx, func(tx *ent.Tx) error {
		_ = tx.WorkItem.Create().SetID("work_dup").SetObjective("again").SetAcceptanceCriteria([]string{"done"}).
			SetRisks([]string{}).SetUnresolvedQuestions([]string{}).SetChangedFiles([]string{}).
			SetCreatedAt(testNow).SetUpdatedAt(testNow).Exec(ctx)
		return nil
	})
	var unknown *CommitUnknownError
	if err == nil || errors.As(err, &unknown) || strings.Contains(err.Error(), "25P02") || !strings.Contains(err.Error(), "23505") {
		t.Fatalf("commit after a swallowed duplicate key = %v, want the unique violation", err)
	}
	err = s.Tx(ctx, func(tx *ent.Tx) error {
		insertWork(t, ctx, tx, "work_lost")
		if n, err := c.TerminateConnections(ctx, pgtest.DatabaseName(dsn)); err != nil || n == 0 {
			return fmt.Errorf("terminate: %d, %v", n, err)
		}
		_, _ = tx.WorkItem.Query().Count(ctx) // the error is dropped
		_, err := tx.WorkItem.Query().Count(ctx)
		return err
	})
	var lost *ConnLostError
	if !errors.As(err, &lost) || errors.As(err, &unknown) || strings.Contains(err.Error(), "25P02") {
		t.Fatalf("Tx across a terminated backend = %v, want *ConnLostError", err)
	}
	if ids := s.Client().WorkItem.Query().IDsX(ctx); len(ids) != 1 || ids[0] != "work_dup" {
		t.Fatalf("stored %v, want only work_dup", ids)
	}
}
