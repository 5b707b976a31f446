package doctor

import (
	"bytes"
	"context"
	"crypto/sha256"
	"database/sql"
	"encoding/hex"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/agent-interop/runtime/internal/store"
)

// TestCheckStoreLeavesAnOlderStore: doctor only looks. A store at the
// last released schema (the runtime would upgrade it) is reported, with
// the fix that serve upgrades it, and the file is not changed.
func TestCheckStoreLeavesAnOlderStore(t *testing.T) {
	ctx := context.Background()
	snaps, err := filepath.Glob("../store/history/sqlite-*.sql")
	if err != nil || len(snaps) == 0 {
		t.Fatalf("no released SQLite schema: %v", err)
	}
	raw, err := os.ReadFile(snaps[len(snaps)-1])
	if err != nil {
		t.Fatal(err)
	}
	sum := sha256.Sum256(append([]byte("interop-store/1\n"), raw...))
	version := hex.EncodeToString(sum[:])
	if version == store.SchemaVersion() {
		t.Skip("the last released schema is this build's: nothing to upgrade")
	}
	path := filepath.Join(t.TempDir(), "interop.db")
	db, err := sql.Open("sqlite", "file:"+path)
	if err != nil {
		t.Fatal(err)
	}
	// As the older runtime left it: WAL, our application id, its stamp.
	stmts := []string{"PRAGMA journal_mode=WAL", "PRAGMA application_id = 1095324244", "PRAGMA user_version = 1",
		"CREATE TABLE interop_meta (key VARCHAR(64) NOT NULL PRIMARY KEY, value TEXT NOT NULL)",
		"INSERT INTO interop_meta (key, value) VALUES ('schema_version', '" + version + "')"}
	for _, line := range strings.Split(string(raw), "\n") {
		if line = strings.TrimSpace(line); line != "" && !strings.HasPrefix(line, "--") {
			stmts = append(stmts, line)
		}
	}
	for _, s := range stmts {
		if _, err := db.Exec(s); err != nil {
			t.Fatalf("%.60s: %v", s, err)
		}
	}
	if _, err := db.Exec("PRAGMA wal_checkpoint(TRUNCATE)"); err != nil {
		t.Fatal(err)
	}
	db.Close()
	before, _ := os.ReadFile(path)
	rep := CheckStore(func(k string) (string, bool) { return path, k == store.EnvDB }, nil)(ctx)
	if rep.Opens || !strings.Contains(rep.Error, "this command only reads") || !strings.Contains(rep.Fix, "interop-runtime serve` upgrades it") {
		t.Fatalf("report = %+v; want the older store reported, not upgraded", rep)
	}
	if after, _ := os.ReadFile(path); !bytes.Equal(before, after) {
		t.Fatal("doctor changed an older store")
	}
	s, err := store.Open(ctx, path)
	if err != nil || s.UpgradedFrom() != version {
		t.Fatalf("serve's open = %v (upgraded from %q); want the upgrade", err, s.UpgradedFrom())
	}
	s.Close()
}
