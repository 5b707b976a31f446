package store

import (
	"database/sql"
	"math/rand/v2"
	"path/filepath"
	"strings"
	"testing"
	"time"
)

// TestParseTimeAsTheDriver reads times stored as text from a
// DATETIME column with modernc's driver under the store's DSN time
// parameters, and wants ParseTime to read the same instants: the
// layout the store writes (random times, every fraction length), the
// driver's other layouts, and texts that are no time, which both refuse.
func TestParseTimeAsTheDriver(t *testing.T) {
	db, err := sql.Open("sqlite", "file:"+filepath.Join(t.TempDir(), "t.db")+"?_time_format=sqlite&_timezone=UTC")
	if err != nil {
		t.Fatal(err)
	}
	defer db.Close()
	if _, err := db.Exec(`CREATE TABLE t (i INTEGER PRIMARY KEY, at DATETIME)`); err != nil {
		t.Fatal(err)
	}
	texts := []string{
		"2026-12-03 08:22:33.4+00:00", "2026-12-03 08:22:33+00:00", "2026-12-03 08:22:33.123456789+00:00",
		"2026-12-03 08:22:33.1234567891+00:00", "2026-12-03 08:22:33,5+00:00", "2026-12-03 08:22:33.+00:00",
		"2024-02-29 23:59:59.999+00:00", "2023-02-29 10:00:00+00:00", "2026-04-31 10:00:00+00:00",
		"2026-13-01 10:00:00+00:00", "2026-12-03 24:00:00+00:00", "2026-12-03 23:60:00+00:00",
		"2026-12-03 23:59:60+00:00", "0000-01-01 00:00:00+00:00", "9999-12-31 23:59:59.999999999+00:00",
		"2026-12-03 08:22:33.4+02:00", "2026-12-03 08:22:33.4-07:30", "2026-12-03T08:22:33.4+00:00",
		"2026-12-03 08:22:33.4", "2026-12-03T08:22:33Z", "2026-12-03 08:22", "2026-12-03",
		"2026-12-03 08:22:33.4 +0000 UTC", "2026-12-03 08:22:33.4 +0100 CET m=+0.000000001",
		"2026-1-03 08:22:33+00:00", "2026-12-03 8:22:33+00:00", "2026-12-03 08:22:3a+00:00",
		"2026-12-03 08:22:33.4x+00:00", "x026-12-03 08:22:33+00:00", "not a time", "",
	}
	rng := rand.New(rand.NewPCG(3, 12))
	for i := range 2000 {
		at := time.Unix(rng.Int64N(1<<35), rng.Int64N(1e9)).UTC()
		at = at.Truncate(time.Duration([]int64{1, 10, 1000, 1e6, 1e8, 1e9}[i%6]))
		texts = append(texts, at.Format("2006-01-02 15:04:05.999999999-07:00"))
	}
	for i, s := range texts {
		if _, err := db.Exec(`INSERT INTO t (i, at) VALUES (?, ?)`, i, s); err != nil {
			t.Fatal(err)
		}
	}
	rows, err := db.Query(`SELECT i, at FROM t ORDER BY i`)
	if err != nil {
		t.Fatal(err)
	}
	defer rows.Close()
	for rows.Next() {
		var i int
		var v any
		if err := rows.Scan(&i, &v); err != nil {
			t.Fatal(err)
		}
		got, err := ParseTime(texts[i])
		switch want, isTime := v.(time.Time); {
		case !isTime && err == nil:
			t.Errorf("ParseTime(%q) = %v, the driver reads no time (%T %v)", texts[i], got, v, v)
		case isTime && err != nil:
			t.Errorf("ParseTime(%q): %v, the driver reads %v", texts[i], err, want)
		case isTime && !got.Equal(want):
			t.Errorf("ParseTime(%q) = %v, the driver reads %v", texts[i], got, want)
		}
	}
	if err := rows.Err(); err != nil {
		t.Fatal(err)
	}
}

// TestAppendTimeRoundTrip: ParseTime reads what AppendTime writes, and
// PostgreSQL's text form of the same instant.
func TestAppendTimeRoundTrip(t *testing.T) {
	for _, ts := range []time.Time{
		time.Date(2026, 11, 30, 6, 1, 2, 0, time.UTC),
		time.Date(2026, 1, 2, 3, 4, 5, 123456789, time.UTC),
		time.Date(999, 1, 2, 3, 4, 5, 100, time.FixedZone("x", 3600)),
	} {
		s := string(AppendTime(nil, ts))
		if got, err := ParseTime(s); err != nil || !got.Equal(ts) || got.Location() != time.UTC {
			t.Errorf("%v -> %q -> %v, %v", ts, s, got, err)
		}
		pg := strings.TrimSuffix(s, ":00") // "…+00", as PostgreSQL writes a timestamptz in UTC
		if got, err := ParseTime(pg); err != nil || !got.Equal(ts) {
			t.Errorf("%v -> %q -> %v, %v", ts, pg, got, err)
		}
	}
}
