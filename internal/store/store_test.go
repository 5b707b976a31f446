package store

import (
	"bytes"
	"context"
	"database/sql"
	"errors"
	"io/fs"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/coder/quartz"

	"github.com/agent-interop/runtime/ent"
	"github.com/agent-interop/runtime/internal/store/internal/ddl"
	"github.com/agent-interop/runtime/internal/testutil/pgtest"
	"github.com/agent-interop/runtime/internal/testutil/testclock"
	"github.com/agent-interop/runtime/internal/testutil/wait"
)

// fixedClock is a fake clock standing at testNow.
func fixedClock(t testing.TB) *quartz.Mock {
	return testclock.At(t, testNow)
}

var testNow = time.UnixMilli(1_700_000_000_123).UTC()

func openT(t testing.TB, path string, opts ...Option) *Store {
	t.Helper()
	s, err := Open(context.Background(), path, append([]Option{WithClock(fixedClock(t))}, opts...)...)
	if err != nil {
		t.Fatalf("Open(%s): %v", path, err)
	}
	t.Cleanup(func() { s.Close() })
	return s
}

func TestResolvePath(t *testing.T) {
	tests := []struct {
		name string
		env  map[string]string
		want string
		err  string
	}{
		{name: "override", env: map[string]string{"INTEROP_DB": "/tmp/x.db", "HOME": "/home/u"}, want: "/tmp/x.db"},
		{name: "team store URL kept as is", env: map[string]string{"INTEROP_DB": " postgres://app@db:5432/interop ", "HOME": "/home/u"}, want: "postgres://app@db:5432/interop"},
		{name: "blank override ignored", env: map[string]string{"INTEROP_DB": "", "HOME": "/home/u"}, want: "/home/u/.agent-interop-runtime/interop.db"},
		{name: "default", env: map[string]string{"HOME": "/home/u"}, want: "/home/u/.agent-interop-runtime/interop.db"},
		{name: "userprofile", env: map[string]string{"USERPROFILE": "/users/u"}, want: "/users/u/.agent-interop-runtime/interop.db"},
		{name: "nothing", env: map[string]string{}, err: "neither INTEROP_DB nor HOME"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			got, err := ResolvePath(func(k string) (string, bool) { v, ok := tt.env[k]; return v, ok })
			if tt.err != "" {
				if err == nil || !strings.Contains(err.Error(), tt.err) {
					t.Fatalf("err = %v, want %q", err, tt.err)
				}
				return
			}
			if err != nil || got != tt.want {
				t.Fatalf("ResolvePath = %q, %v; want %q", got, err, tt.want)
			}
		})
	}
}

func TestOpenCreatesWithModesAndSkipsMigrationWhenCurrent(t *testing.T) {
	dir := filepath.Join(t.TempDir(), "state")
	path := filepath.Join(dir, "interop.db")
	s := openT(t, path)
	if !s.Migrated() {
		t.Fatal("first open did not migrate")
	}
	if rec := recoveryT(t, s); rec != nil {
		t.Fatalf("fresh store reports recovery %+v", rec)
	}
	for p, want := range map[string]os.FileMode{dir: 0o700, path: 0o600} {
		fi, err := os.Stat(p)
		if err != nil {
			t.Fatal(err)
		}
		if fi.Mode().Perm() != want {
			t.Errorf("%s mode %v, want %v", p, fi.Mode().Perm(), want)
		}
	}
	var journal string
	if err := s.DB().QueryRow("PRAGMA journal_mode").Scan(&journal); err != nil || journal != "wal" {
		t.Errorf("journal_mode = %q, %v", journal, err)
	}
	var fk int
	if err := s.DB().QueryRow("PRAGMA foreign_keys").Scan(&fk); err != nil || fk != 1 {
		t.Errorf("foreign_keys = %d, %v", fk, err)
	}
	s.Close()

	h, err := inspectHeader(path)
	if err != nil || h.kind != fileOurs || h.userVersion != versionStamp(SchemaVersion()) {
		t.Fatalf("header = %+v, %v; want ours with the current stamp", h, err)
	}
	s2 := openT(t, path)
	if s2.Migrated() {
		t.Fatal("second open of a current store ran the migration")
	}
	if rec := recoveryT(t, s2); rec != nil {
		t.Fatalf("recovery on fast path = %+v", rec)
	}
}

func TestOpenRefusesAnotherSchemaVersionAndLeavesTheFile(t *testing.T) {
	path := filepath.Join(t.TempDir(), "interop.db")
	s := openT(t, path)
	ctx := context.Background()
	if err := writeMeta(ctx, s.DB(), metaSchemaVersion, "old"); err != nil {
		t.Fatal(err)
	}
	if err := stampVersion(ctx, s.DB(), "0123abcd"); err != nil {
		t.Fatal(err)
	}
	s.Close()
	before, err := os.ReadFile(path)
	if err != nil {
		t.Fatal(err)
	}
	_, err = Open(ctx, path)
	if !errors.Is(err, ErrSchemaMismatch) || !strings.Contains(err.Error(), "leaves the file untouched") {
		t.Fatalf("Open = %v, want ErrSchemaMismatch", err)
	}
	after, _ := os.ReadFile(path)
	if !bytes.Equal(before, after) {
		t.Fatal("a refused store file was modified")
	}
}

// TestSchemaSQLIsCurrent fails when schema.sql or schema_postgres.sql no
// longer matches what ent's migration renders for the ent schema: run go
// generate ./internal/store.
func TestSchemaSQLIsCurrent(t *testing.T) {
	all, err := ddl.GenerateAll(context.Background())
	if err != nil {
		t.Fatal(err)
	}
	for name, have := range map[string]string{"sqlite3": schemaSQL, "postgres": postgresSchemaSQL} {
		if want, ok := all[name]; !ok || string(want) != have {
			t.Errorf("the %s DDL embedded in internal/store is stale; run: go generate ./internal/store", name)
		}
	}
}

func TestOpenCorruptFileIsMovedAsideAndReported(t *testing.T) {
	tests := []struct {
		name    string
		content func(t *testing.T, path string)
		opts    []Option
		reason  string
	}{
		{name: "garbage", content: func(t *testing.T, path string) {
			os.WriteFile(path, []byte(strings.Repeat("not a database ", 40)), 0o600)
		}, reason: "not a SQLite database"},
		{name: "short", content: func(t *testing.T, path string) {
			os.WriteFile(path, []byte("SQLite format 3\x00"), 0o600)
		}, reason: "not a SQLite database"},
		{name: "damaged pages", content: func(t *testing.T, path string) {
			s := openT(t, path)
			seed(t, s, 200)
			s.Close()
			damagePages(t, path)
		}, opts: []Option{WithIntegrityCheck()}, reason: ""},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			path := filepath.Join(t.TempDir(), "interop.db")
			tt.content(t, path)
			before, _ := os.ReadFile(path)
			s := openT(t, path, tt.opts...)
			rec := recoveryT(t, s)
			if rec == nil || !rec.Required || rec.File != path {
				t.Fatalf("recovery = %+v", rec)
			}
			if !strings.HasPrefix(rec.PreservedFile, path+".corrupt-1700000000123") {
				t.Errorf("preserved file %q", rec.PreservedFile)
			}
			if tt.reason != "" && !strings.Contains(rec.Reason, tt.reason) {
				t.Errorf("reason %q, want %q", rec.Reason, tt.reason)
			}
			kept, err := os.ReadFile(rec.PreservedFile)
			if err != nil || string(kept) != string(before) {
				t.Fatalf("preserved copy differs from the original (%v)", err)
			}
			// The new store works and keeps reporting the recovery after a reopen.
			seed(t, s, 1)
			s.Close()
			s2 := openT(t, path)
			if got := recoveryT(t, s2); got == nil || got.PreservedFile != rec.PreservedFile {
				t.Fatalf("recovery after reopen = %+v", got)
			}
			if err := s2.AcknowledgeRecovery(context.Background()); err != nil {
				t.Fatal(err)
			}
			s2.Close()
			if got := recoveryT(t, openT(t, path)); got != nil {
				t.Fatalf("recovery after acknowledge = %+v", got)
			}
		})
	}
}

func TestOpenRefusesForeignDatabase(t *testing.T) {
	tests := []struct {
		name  string
		setup []string
	}{
		{name: "other tables", setup: []string{"CREATE TABLE users (id INTEGER PRIMARY KEY, name TEXT)", "INSERT INTO users VALUES (1, 'x')"}},
		{name: "other application id", setup: []string{"PRAGMA application_id = 1234", "CREATE TABLE t (x)"}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			path := filepath.Join(t.TempDir(), "other.db")
			db, err := sql.Open("sqlite", path)
			if err != nil {
				t.Fatal(err)
			}
			for _, q := range tt.setup {
				if _, err := db.Exec(q); err != nil {
					t.Fatal(err)
				}
			}
			db.Close()
			before, _ := os.ReadFile(path)
			_, err = Open(context.Background(), path, WithClock(fixedClock(t)))
			if !errors.Is(err, ErrForeignStore) || !strings.Contains(err.Error(), "refusing to use or replace it") {
				t.Fatalf("Open(foreign) err = %v", err)
			}
			after, _ := os.ReadFile(path)
			if string(before) != string(after) {
				t.Fatal("foreign file was modified")
			}
			matches, _ := filepath.Glob(path + ".corrupt-*")
			if len(matches) != 0 {
				t.Fatalf("foreign file moved aside: %v", matches)
			}
		})
	}
}

func TestOpenAcceptsEmptyFile(t *testing.T) {
	path := filepath.Join(t.TempDir(), "interop.db")
	if err := os.WriteFile(path, nil, 0o644); err != nil {
		t.Fatal(err)
	}
	s := openT(t, path)
	if recoveryT(t, s) != nil {
		t.Fatal("empty file reported as recovery")
	}
	fi, _ := os.Stat(path)
	if fi.Mode().Perm() != 0o600 {
		t.Errorf("mode %v not tightened to 0600", fi.Mode().Perm())
	}
}

func TestTxRollsBackOnErrorAndPanic(t *testing.T) {
	pgtest.EachDialect(t, testTxRollsBackOnErrorAndPanic)
}

func testTxRollsBackOnErrorAndPanic(t *testing.T, location string) {
	s := openT(t, location)
	ctx := context.Background()
	boom := errors.New("boom")
	err := s.Tx(ctx, func(tx *ent.Tx) error {
		insertWork(t, ctx, tx, "work_1")
		return boom
	})
	if !errors.Is(err, boom) {
		t.Fatalf("Tx err = %v", err)
	}
	func() {
		defer func() { recover() }()
		_ = s.Tx(ctx, func(tx *ent.Tx) error {
			insertWork(t, ctx, tx, "work_2")
			panic("boom")
		})
	}()
	if n := s.Client().WorkItem.Query().CountX(ctx); n != 0 {
		t.Fatalf("rows after rollback = %d", n)
	}
	if err := s.Tx(ctx, func(tx *ent.Tx) error { insertWork(t, ctx, tx, "work_3"); return nil }); err != nil {
		t.Fatal(err)
	}
	if n := s.Client().WorkItem.Query().CountX(ctx); n != 1 {
		t.Fatalf("rows after commit = %d", n)
	}
}

func TestTwoStoresOnOneFile(t *testing.T) {
	pgtest.EachDialect(t, testTwoStoresOnOneDatabase)
}

func testTwoStoresOnOneDatabase(t *testing.T, location string) {
	a, b := openT(t, location), openT(t, location)
	ctx := context.Background()
	errs := make(chan error, 2)
	for i, s := range []*Store{a, b} {
		go func() {
			for j := 0; j < 50; j++ {
				id := "work_" + string(rune('a'+i)) + "_" + itoa(j)
				if err := s.Tx(ctx, func(tx *ent.Tx) error { insertWork(t, ctx, tx, id); return nil }); err != nil {
					errs <- err
					return
				}
			}
			errs <- nil
		}()
	}
	for range 2 {
		if err := <-errs; err != nil {
			t.Fatal(err)
		}
	}
	if n := a.Client().WorkItem.Query().CountX(ctx); n != 100 {
		t.Fatalf("rows = %d, want 100", n)
	}
}

func recoveryT(t testing.TB, s *Store) *Recovery {
	t.Helper()
	r, err := s.Recovery(context.Background())
	if err != nil {
		t.Fatalf("Recovery: %v", err)
	}
	return r
}

// TestRecoveryReadsTheStoreOnlyWhenMarked: a store's recovery state is
// read from its meta table only while the recovery marker beside it says
// a record may be pending. Without one, Recovery opens nothing (a new
// store stays an empty file); the move-aside writes it, the
// acknowledgement removes it, and a slow-path Open (doctor's integrity
// check) writes it for a record an earlier build left without one.
func TestRecoveryReadsTheStoreOnlyWhenMarked(t *testing.T) {
	dir := t.TempDir()
	fresh := filepath.Join(dir, "fresh.db")
	s := openT(t, fresh, WithLazyConnect())
	if rec := recoveryT(t, s); rec != nil {
		t.Fatalf("recovery of a new store = %+v", rec)
	}
	if info, err := os.Stat(fresh); err != nil || info.Size() != 0 {
		t.Fatalf("Recovery created the new store (size %v, %v); it must read nothing", info.Size(), err)
	}

	path := filepath.Join(dir, "interop.db")
	if err := os.WriteFile(path, []byte(strings.Repeat("not a database ", 40)), 0o600); err != nil {
		t.Fatal(err)
	}
	// A link planted at the marker's name: the marker replaces the link,
	// and what it points to is not written.
	victim := filepath.Join(dir, "victim")
	if err := os.WriteFile(victim, []byte("keep"), 0o600); err != nil {
		t.Fatal(err)
	}
	linked := os.Symlink(victim, path+recoveryMarkerSuffix) == nil
	s1 := openT(t, path) // moves the file aside, records the recovery
	rec := recoveryT(t, s1)
	s1.Close()
	if rec == nil {
		t.Fatal("no recovery recorded for a file that is not a database")
	}
	marker, err := os.ReadFile(path + recoveryMarkerSuffix)
	if err != nil || !strings.Contains(string(marker), rec.PreservedFile) {
		t.Fatalf("recovery marker = %q, %v; want one naming %s", marker, err, rec.PreservedFile)
	}
	if kept, _ := os.ReadFile(victim); linked && string(kept) != "keep" {
		t.Fatalf("the marker was written through a link: the linked file holds %q", kept)
	}
	if got := recoveryT(t, openT(t, path)); got == nil || got.PreservedFile != rec.PreservedFile {
		t.Fatalf("recovery read by the next process = %+v", got)
	}

	// A record without its marker (left by an earlier build): the fast
	// path does not see it; the integrity check's slow path restores it.
	if err := os.Remove(path + recoveryMarkerSuffix); err != nil {
		t.Fatal(err)
	}
	if got := recoveryT(t, openT(t, path)); got != nil {
		t.Fatalf("fast path without a marker read the store: %+v", got)
	}
	if got := recoveryT(t, openT(t, path, WithIntegrityCheck())); got == nil {
		t.Fatal("the integrity check's Open did not report the record")
	}
	if _, err := os.Stat(path + recoveryMarkerSuffix); err != nil {
		t.Fatalf("the integrity check's Open did not restore the marker: %v", err)
	}

	s2 := openT(t, path)
	if err := s2.AcknowledgeRecovery(context.Background()); err != nil {
		t.Fatal(err)
	}
	s2.Close()
	if _, err := os.Stat(path + recoveryMarkerSuffix); !errors.Is(err, fs.ErrNotExist) {
		t.Fatalf("the marker outlived the acknowledgement: %v", err)
	}
	if got := recoveryT(t, openT(t, path)); got != nil {
		t.Fatalf("recovery after the acknowledgement = %+v", got)
	}
}

// A damaged file with a current header is never replaced on the fast path:
// queries fail with a clear error and the file stays where it is.
func TestFastPathNeverReplacesDamagedFile(t *testing.T) {
	path := filepath.Join(t.TempDir(), "interop.db")
	s := openT(t, path)
	seed(t, s, 200)
	s.Close()
	damagePages(t, path)
	// A recovery may be pending (its marker is there), so Recovery reads
	// the damaged meta table.
	if err := os.WriteFile(path+recoveryMarkerSuffix, nil, 0o600); err != nil {
		t.Fatal(err)
	}
	before, _ := os.ReadFile(path)
	s2 := openT(t, path)
	_, err := s2.Recovery(context.Background())
	if err == nil || !strings.Contains(err.Error(), "is damaged") {
		t.Fatalf("Recovery on damaged file err = %v", err)
	}
	s2.Close()
	after, _ := os.ReadFile(path)
	if string(before) != string(after) {
		t.Fatal("damaged file changed on the fast path")
	}
}

func TestCheckpointsRunInBackground(t *testing.T) {
	clock := fixedClock(t)
	s := openT(t, filepath.Join(t.TempDir(), "interop.db"), WithClock(clock))
	var pages int
	if err := s.DB().QueryRow("PRAGMA wal_autocheckpoint").Scan(&pages); err != nil || pages != autoCheckpointBackstop {
		t.Fatalf("wal_autocheckpoint = %d, %v", pages, err)
	}
	ctx, cancel := context.WithTimeout(context.Background(), wait.InProcess)
	defer cancel()
	seed(t, s, 0) // seed truncates the WAL
	before := s.checkpoints.Load()
	if err := s.Tx(ctx, func(tx *ent.Tx) error { insertWork(t, ctx, tx, "work_ckpt"); return nil }); err != nil {
		t.Fatal(err)
	}
	// Nothing runs before the delay has passed on the store's clock.
	wait.For(t, "the checkpoint delay to be armed after the commit", wait.InProcess, func() bool {
		d, ok := clock.Peek()
		return ok && d == checkpointDelay
	})
	if n := s.checkpoints.Load(); n != before {
		t.Fatalf("%d checkpoints ran before the delay passed", n-before)
	}
	testclock.Pass(ctx, clock, checkpointDelay)
	wait.For(t, "a background checkpoint after a committed write", wait.InProcess, func() bool { return s.checkpoints.Load() > before })
}

// TestOpenWithoutCreate: WithoutCreate refuses a missing file with
// ErrNoStore naming the path and creates neither the file nor its
// directory; an existing store opens as usual.
func TestOpenWithoutCreate(t *testing.T) {
	dir := filepath.Join(t.TempDir(), "missing")
	path := filepath.Join(dir, "x.db")
	_, err := Open(context.Background(), path, WithoutCreate())
	if !errors.Is(err, ErrNoStore) || !strings.Contains(err.Error(), path) {
		t.Fatalf("err = %v, want ErrNoStore naming %s", err, path)
	}
	if _, err := os.Stat(dir); !os.IsNotExist(err) {
		t.Fatalf("%s exists after the refused open (err %v)", dir, err)
	}
	st, err := Open(context.Background(), path)
	if err != nil {
		t.Fatal(err)
	}
	st.Close()
	st, err = Open(context.Background(), path, WithoutCreate())
	if err != nil {
		t.Fatalf("existing store: %v", err)
	}
	st.Close()
}
