package claims_test

import (
	"context"
	"errors"
	"fmt"
	"math/rand/v2"
	"strconv"
	"strings"
	"sync"
	"testing"
	"time"

	"entgo.io/ent/dialect"
	entsql "entgo.io/ent/dialect/sql"

	"github.com/agent-interop/runtime/ent"
	"github.com/agent-interop/runtime/ent/claim"
	"github.com/agent-interop/runtime/internal/claims"
	"github.com/agent-interop/runtime/internal/testutil/teststore"
)

// activeClaims reads what the overlap check read before it was indexed:
// every unexpired active claim, oldest first.
func activeClaims(t *testing.T, client *ent.Client, now time.Time) []*ent.Claim {
	t.Helper()
	rows, err := client.Claim.Query().Where(claim.StatusEQ(claim.StatusActive), claim.ExpiresAtGT(now)).
		Order(ent.Asc(claim.FieldAcquiredAt), ent.Asc(claim.FieldID)).All(context.Background())
	if err != nil {
		t.Fatal(err)
	}
	return rows
}

// oldCheck is the overlap check as it was before it was indexed: of the
// active claims (activeClaims), the ones the rule says conflict, oldest
// first. The indexed lookup must name the same claims.
func oldCheck(rows []*ent.Claim, req claims.Claim) []string {
	var out []string
	for _, r := range rows {
		h := claims.Claim{ID: r.ID, SessionID: r.SessionID, Resource: r.Resource, Kind: claims.Kind(r.Kind), Mode: claims.Mode(r.Mode)}
		if claims.Conflicts(req, h) {
			out = append(out, r.ID)
		}
	}
	return out
}

// TestIndexedOverlapMatchesOldCheck compares the indexed lookup with the
// old full scan on random corpora of claims (paths with tricky neighbours
// in byte order, ".", "/", "..", interfaces, workspaces, expired and
// released claims) and requests on every path in turn (random kind, mode
// and session): same conflicts, same claim named. The corpus does not
// change while a round's requests run (a granted claim is deleted at
// once), so the old scan reads it once per round.
func TestIndexedOverlapMatchesOldCheck(t *testing.T) {
	ctx := context.Background()
	s, client, clock := newService(t)
	rng := rand.New(rand.NewPCG(7, 8))
	paths := []string{".", "/", "..", "../x", "../x/y", "..a", ".a", "src", "src/", "src/a", "src/a/b.go", "src/a/b.go/c",
		"src/ab", "src/a!", "src/a.", "src/a-b", "src/a0", "src0", "/repo", "/repo/x", "/repo0", "/repo/x/y",
		"a%b", "a_b", "SRC", "s/r/c/d/e/f", "x/../y", "./src/a", `src\a\b.go`, "src//a"}
	kinds := []claims.Kind{claims.KindFile, claims.KindDirectory, claims.KindDirectory, claims.KindInterface, claims.KindWorkspace}
	modes := []claims.Mode{claims.ModeExclusive, claims.ModeSharedRead}
	sessions := []string{"codex:a", "codex:b", "cursor:c", "opencode:d"}
	pickOn := func(path string) claims.Claim {
		return claims.Claim{
			SessionID: sessions[rng.IntN(len(sessions))], Kind: kinds[rng.IntN(len(kinds))],
			Mode: modes[rng.IntN(len(modes))], Resource: path,
		}
	}
	pick := func() claims.Claim { return pickOn(paths[rng.IntN(len(paths))]) }
	const rounds, requests = 60, 24 // every path 48 times, on 60 corpora
	checked, conflicting := 0, 0
	for round := range rounds {
		if _, err := client.Claim.Delete().Exec(ctx); err != nil {
			t.Fatal(err)
		}
		now := clock.Now()
		for i := range 1 + rng.IntN(25) {
			h := pick()
			// Stored as Acquire stores them: normalized, so the lookup
			// and the old scan see the same rows.
			h.Resource = claims.Normalize(h.Kind, h.Resource)
			id := fmt.Sprintf("claim_%02d_%02d", round, i)
			acquired := now.Add(-time.Duration(rng.IntN(3000)) * time.Second)
			expires := acquired.Add(time.Duration(30+rng.IntN(3600)) * time.Second)
			c := client.Claim.Create().SetID(id).SetWorkID("work_a").SetSessionID(h.SessionID).SetResource(h.Resource).
				SetKind(claimKind(h.Kind)).SetMode(claimMode(h.Mode)).SetAcquiredAt(acquired).SetExpiresAt(expires)
			if rng.IntN(8) == 0 {
				c = c.SetStatus(claim.StatusReleased).SetReleasedAt(now)
			}
			if err := c.Exec(ctx); err != nil {
				t.Fatal(err)
			}
		}
		rows := activeClaims(t, client, now)
		for i := range requests {
			req := pickOn(paths[(round*requests+i)%len(paths)])
			req.Resource = claims.Normalize(req.Kind, req.Resource)
			if req.Resource == "" {
				continue
			}
			want := oldCheck(rows, req)
			got, err := s.Overlapping(ctx, claims.OverlapQuery{Kind: req.Kind, Resource: req.Resource,
				ExcludeSession: req.SessionID, ExclusiveOnly: req.Mode == claims.ModeSharedRead, Limit: 3})
			if err != nil {
				t.Fatal(err)
			}
			var gotIDs []string
			for _, c := range got {
				gotIDs = append(gotIDs, c.ID)
			}
			if n := min(3, len(want)); strings.Join(gotIDs, ",") != strings.Join(want[:n], ",") {
				t.Fatalf("round %d: request %+v: indexed lookup %v, old check %v", round, req, gotIDs, want[:n])
			}
			// Acquire names the oldest conflict, exactly as before.
			c, err := s.Acquire(ctx, claims.AcquireInput{WorkID: "work_b", SessionID: req.SessionID, Kind: req.Kind, Mode: req.Mode, Resource: req.Resource})
			var ce *claims.ConflictError
			switch {
			case len(want) == 0 && err != nil:
				t.Fatalf("round %d: %+v refused (%v), old check found no conflict", round, req, err)
			case len(want) > 0 && (!errors.As(err, &ce) || ce.Held.ID != want[0]):
				t.Fatalf("round %d: %+v: acquire %v, old check names %s", round, req, err, want[0])
			}
			if err == nil {
				client.Claim.DeleteOneID(c.ID).ExecX(ctx)
			} else {
				conflicting++
			}
			checked++
		}
	}
	if conflicting == 0 || conflicting == checked {
		t.Fatalf("corpus not mixed: %d of %d requests conflicted", conflicting, checked)
	}
}

// recordingDriver records every query a client runs.
type recordingDriver struct {
	dialect.Driver
	mu      sync.Mutex
	queries []recorded
}

type recorded struct {
	query string
	args  []any
}

func (d *recordingDriver) Query(ctx context.Context, query string, args, v any) error {
	d.record(query, args)
	return d.Driver.Query(ctx, query, args, v)
}

func (d *recordingDriver) Tx(ctx context.Context) (dialect.Tx, error) {
	tx, err := d.Driver.Tx(ctx)
	if err != nil {
		return nil, err
	}
	return &recordingTx{Tx: tx, d: d}, nil
}

// recordingTx records the queries of a transaction.
type recordingTx struct {
	dialect.Tx
	d *recordingDriver
}

func (t *recordingTx) Query(ctx context.Context, query string, args, v any) error {
	t.d.record(query, args)
	return t.Tx.Query(ctx, query, args, v)
}

func (d *recordingDriver) record(query string, args any) {
	d.mu.Lock()
	defer d.mu.Unlock()
	a, _ := args.([]any)
	d.queries = append(d.queries, recorded{query, a})
}

func (d *recordingDriver) take() []recorded {
	d.mu.Lock()
	defer d.mu.Unlock()
	q := d.queries
	d.queries = nil
	return q
}

// recordingStore serves the service a client over the recording driver.
type recordingStore struct{ client *ent.Client }

func (r recordingStore) Client() *ent.Client { return r.client }
func (r recordingStore) Tx(ctx context.Context, fn func(tx *ent.Tx) error) error {
	tx, err := r.client.Tx(ctx)
	if err != nil {
		return err
	}
	if err := fn(tx); err != nil {
		_ = tx.Rollback()
		return err
	}
	return tx.Commit()
}

// TestOverlapLookupNeverScansClaims runs the lookups of every request kind
// against 5,000 active claims and asks SQLite for each statement's plan:
// every read of the claims table must search an index, never scan it.
func TestOverlapLookupNeverScansClaims(t *testing.T) {
	ctx := context.Background()
	st := teststore.Open(t)
	if st.Dialect() != dialect.SQLite {
		t.Skip("asks SQLite for query plans; on PostgreSQL the same statements run against the same indexes")
	}
	seedWork(t, st.Client(), "work_a")
	clock := newClock(t)
	err := st.Tx(ctx, func(tx *ent.Tx) error {
		var b []*ent.ClaimCreate
		for i := range 5000 {
			b = append(b, tx.Claim.Create().SetID("claim_"+strconv.Itoa(i)).SetWorkID("work_a").SetSessionID("codex:held").
				SetResource(fmt.Sprintf("held/%d/f.go", i)).SetAcquiredAt(t0).SetExpiresAt(t0.Add(time.Hour)))
			if len(b) == 500 {
				if err := tx.Claim.CreateBulk(b...).Exec(ctx); err != nil {
					return err
				}
				b = nil
			}
		}
		return nil
	})
	if err != nil {
		t.Fatal(err)
	}
	rec := &recordingDriver{Driver: entsql.OpenDB(dialect.SQLite, st.DB())}
	s := claims.New(recordingStore{client: ent.NewClient(ent.Driver(rec))}, claims.WithClock(clock))
	requests := []claims.AcquireInput{
		{Resource: "src/a/b.go"},
		{Resource: "src/a", Kind: claims.KindDirectory},
		{Resource: "/abs/x", Kind: claims.KindDirectory},
		{Resource: "/", Kind: claims.KindDirectory},
		{Resource: "AuthService", Kind: claims.KindInterface},
		{Resource: "src/a/b.go", Mode: claims.ModeSharedRead},
	}
	planned := 0
	for _, in := range requests {
		in.WorkID, in.SessionID = "work_a", "codex:new"
		if _, err := s.Acquire(ctx, in); err != nil {
			t.Fatalf("%+v: %v", in, err)
		}
		for _, q := range rec.take() {
			if !strings.Contains(q.query, "`claims`") || !strings.HasPrefix(q.query, "SELECT") {
				continue
			}
			rows, err := st.DB().QueryContext(ctx, "EXPLAIN QUERY PLAN "+q.query, q.args...)
			if err != nil {
				t.Fatal(err)
			}
			var plan []string
			for rows.Next() {
				var id, parent, notused int
				var detail string
				if err := rows.Scan(&id, &parent, &notused, &detail); err != nil {
					t.Fatal(err)
				}
				plan = append(plan, detail)
			}
			rows.Close()
			planned++
			if !strings.Contains(strings.Join(plan, ";"), "USING") {
				t.Errorf("%+v: %s\nuses no index: %v", in, q.query, plan)
			}
			joined := strings.Join(plan, ";")
			if _, where, _ := strings.Cut(q.query, " WHERE "); strings.Contains(where, "`resource`") && !strings.Contains(joined, "claim_status_resource_expires_at") {
				t.Errorf("%+v: %s\nlooks the resource up without the resource index: %v", in, q.query, plan)
			}
			for _, p := range plan {
				if strings.HasPrefix(p, "SCAN claims") || strings.HasPrefix(p, "SCAN `claims`") {
					t.Errorf("%+v: %s\nscans the claims table: %v", in, q.query, plan)
				}
			}
		}
	}
	// Each request runs a workspace lookup, the resource's own lookups and
	// the work check: well over one statement per request.
	if planned < 2*len(requests) {
		t.Fatalf("only %d claim queries were planned", planned)
	}
}
