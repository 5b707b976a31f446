package workflow

import (
	"context"
	"database/sql"
	"errors"
	"fmt"
	"strings"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"entgo.io/ent/dialect"
	"modernc.org/sqlite"
	sqlite3 "modernc.org/sqlite/lib"

	"github.com/agent-interop/runtime/ent"
	"github.com/agent-interop/runtime/ent/workitem"
	"github.com/agent-interop/runtime/internal/argv"
	"github.com/agent-interop/runtime/internal/paging"
	"github.com/agent-interop/runtime/internal/store"
)

// pageAll pages list_work_items to the end with limit, calling between
// after each page, and returns the IDs in delivery order.
func pageAll(t *testing.T, f *fixture, in ListWorksInput, between func()) []string {
	t.Helper()
	var ids []string
	for pages := 0; ; pages++ {
		if pages > 10000 {
			t.Fatal("paging never ends")
		}
		l, err := f.svc.ListWorks(f.ctx, in)
		if err != nil {
			t.Fatalf("ListWorks(%+v): %v", in, err)
		}
		for _, w := range l.Works {
			ids = append(ids, w.ID)
		}
		if l.NextCursor == "" {
			return ids
		}
		if len(l.Works) != int(in.Limit) {
			t.Fatalf("a page with a next cursor has %d works, want %d", len(l.Works), in.Limit)
		}
		in.Cursor = l.NextCursor
		if between != nil {
			between()
		}
	}
}

// TestListWorksStableUnderConcurrentInserts pages while other writers keep
// adding works (some at the same instant as existing ones): every work that
// existed before the first page is delivered exactly once, in order, and no
// work created meanwhile shows up behind the cursor.
func TestListWorksStableUnderConcurrentInserts(t *testing.T) {
	f := newFixture(t)
	before := map[string]bool{}
	for i := range 60 {
		if i%3 == 0 {
			f.clock.Advance(time.Millisecond) // groups of equal updatedAt: the ID breaks ties
		}
		before[f.work(fmt.Sprintf("existing %d", i)).ID] = true
	}
	// created holds the works whose creation started after the first page
	// was answered: none of them may show up behind the cursor.
	created := map[string]bool{}
	var mu sync.Mutex
	var firstDone atomic.Bool
	stop := make(chan struct{})
	done := make(chan struct{})
	go func() {
		defer close(done)
		for i := 0; ; i++ {
			select {
			case <-stop:
				return
			default:
			}
			f.clock.Advance(time.Millisecond)
			after := firstDone.Load()
			w, err := f.svc.CreateWork(f.ctx, CreateWorkInput{Objective: fmt.Sprintf("concurrent %d", i), AcceptanceCriteria: []string{"x"}})
			if err != nil {
				t.Errorf("concurrent create: %v", err)
				return
			}
			if after {
				mu.Lock()
				created[w.ID] = true
				mu.Unlock()
			}
		}
	}()
	// One synchronous insert between every two pages, so the test does not
	// depend on the goroutine getting scheduled.
	between := func() {
		w, err := f.svc.CreateWork(f.ctx, CreateWorkInput{Objective: "between pages", AcceptanceCriteria: []string{"x"}})
		if err != nil {
			t.Fatal(err)
		}
		mu.Lock()
		created[w.ID] = true
		mu.Unlock()
	}
	first, err := f.svc.ListWorks(f.ctx, ListWorksInput{Limit: 7})
	if err != nil {
		t.Fatal(err)
	}
	firstDone.Store(true)
	seen := map[string]bool{}
	var order []string
	for _, w := range first.Works {
		seen[w.ID] = true
		order = append(order, w.ID)
	}
	rest := pageAll(t, f, ListWorksInput{Limit: 7, Cursor: first.NextCursor}, between)
	close(stop)
	<-done
	for _, id := range rest {
		if seen[id] {
			t.Fatalf("work %s delivered twice", id)
		}
		seen[id] = true
		order = append(order, id)
		mu.Lock()
		isNew := created[id]
		mu.Unlock()
		if isNew {
			t.Fatalf("work %s created after the first page appeared behind the cursor", id)
		}
	}
	for id := range before {
		if !seen[id] {
			t.Fatalf("existing work %s was never delivered", id)
		}
	}
	// Delivery order is the keyset order: updatedAt, then ID, descending.
	rows := f.st.Client().WorkItem.Query().AllX(f.ctx)
	at := map[string]time.Time{}
	for _, r := range rows {
		at[r.ID] = r.UpdatedAt
	}
	for i := 1; i < len(order); i++ {
		a, b := order[i-1], order[i]
		if at[a].Before(at[b]) || (at[a].Equal(at[b]) && a < b) {
			t.Fatalf("order broken at %d: %s (%v) before %s (%v)", i, a, at[a], b, at[b])
		}
	}
}

func TestListWorksFilters(t *testing.T) {
	f := newFixture(t)
	src, dst := "codex:a", "claude-code:b"
	a := f.work("a")
	f.clock.Advance(time.Second)
	b, err := f.svc.CreateWork(f.ctx, CreateWorkInput{Objective: "b", AcceptanceCriteria: []string{"x"}, SourceSession: &src})
	if err != nil {
		t.Fatal(err)
	}
	f.clock.Advance(time.Second)
	c := f.work("c")
	f.st.Client().WorkItem.UpdateOneID(c.ID).SetDestinationSession(src).SetStatus("blocked").ExecX(f.ctx)
	f.st.Client().WorkItem.UpdateOneID(a.ID).SetDestinationSession(dst).ExecX(f.ctx)
	mid := t0.Add(time.Second)
	tests := []struct {
		name string
		f    WorkFilter
		want []string
	}{
		{"all", WorkFilter{}, []string{c.ID, b.ID, a.ID}},
		{"status", WorkFilter{Status: "blocked"}, []string{c.ID}},
		{"status none", WorkFilter{Status: "accepted"}, nil},
		{"session as source or destination", WorkFilter{Session: src}, []string{c.ID, b.ID}},
		{"other session", WorkFilter{Session: dst}, []string{a.ID}},
		{"updated since", WorkFilter{UpdatedSince: &mid}, []string{c.ID, b.ID}},
		{"combined", WorkFilter{Session: src, Status: "open"}, []string{b.ID}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			for _, limit := range []int64{1, 2, 100} {
				got := pageAll(t, f, ListWorksInput{WorkFilter: tt.f, Limit: limit}, nil)
				if strings.Join(got, ",") != strings.Join(tt.want, ",") {
					t.Errorf("limit %d: got %v, want %v", limit, got, tt.want)
				}
			}
		})
	}
}

// wantArgError checks err is a tool error naming field.
func wantArgError(t *testing.T, err error, field, contains string) {
	t.Helper()
	var ae *argv.Errors
	if !errors.As(err, &ae) || len(ae.Fields) != 1 || ae.Fields[0].Field != field {
		t.Fatalf("err = %v, want an argument error naming %s", err, field)
	}
	if !strings.Contains(err.Error(), contains) {
		t.Fatalf("err = %q, want it to contain %q", err, contains)
	}
}

func TestCursorsAreRefusedWhenForeignStaleOrMalformed(t *testing.T) {
	f := newFixture(t)
	for i := range 5 {
		w := f.work(fmt.Sprintf("w%d", i))
		f.evidence(w.ID, "codex:x", i)
		f.evidence(w.ID, "codex:x", i+10)
	}
	works, err := f.svc.ListWorks(f.ctx, ListWorksInput{Limit: 2})
	if err != nil || works.NextCursor == "" {
		t.Fatalf("first page: %+v %v", works, err)
	}
	ev, err := f.svc.ListEvidence(f.ctx, ListEvidenceInput{Limit: 2})
	if err != nil || ev.NextCursor == "" {
		t.Fatalf("evidence page: %+v %v", ev, err)
	}
	_, err = f.svc.ListWorks(f.ctx, ListWorksInput{Limit: 2, Cursor: ev.NextCursor})
	wantArgError(t, err, "cursor", "was issued by list_evidence")
	_, err = f.svc.ListEvidence(f.ctx, ListEvidenceInput{Limit: 2, Cursor: works.NextCursor})
	wantArgError(t, err, "cursor", "was issued by list_work_items")
	_, err = f.svc.ListWorks(f.ctx, ListWorksInput{Limit: 2, Cursor: works.NextCursor, WorkFilter: WorkFilter{Status: "open"}})
	wantArgError(t, err, "cursor", "other filter arguments")
	for _, bad := range []string{"x", "!!!", works.NextCursor[:len(works.NextCursor)-3], paging.Encode(toolListWorks, WorkFilter{}.paging(), "not a time", "work_x"), strings.Repeat("A", 5000)} {
		_, err = f.svc.ListWorks(f.ctx, ListWorksInput{Limit: 2, Cursor: bad})
		wantArgError(t, err, "cursor", "")
	}
	// A cursor with a different page size is fine (limit is not a filter).
	if _, err := f.svc.ListWorks(f.ctx, ListWorksInput{Limit: 3, Cursor: works.NextCursor}); err != nil {
		t.Fatalf("cursor with another limit: %v", err)
	}
	for _, limit := range []int64{-1, 101, 1 << 40} {
		_, err = f.svc.ListWorks(f.ctx, ListWorksInput{Limit: limit})
		wantArgError(t, err, "limit", "between 1 and 100")
	}
	_, err = f.svc.ListWorks(f.ctx, ListWorksInput{WorkFilter: WorkFilter{Status: "done"}})
	wantArgError(t, err, "status", "one of open")
	if l, err := f.svc.ListWorks(f.ctx, ListWorksInput{}); err != nil || len(l.Works) != 5 {
		t.Fatalf("limit 0 (decoder bypassed) = %d works, %v; want the default page", len(l.Works), err)
	}
	// A detail cursor is bound to its work.
	other := f.work("other")
	d, err := f.svc.GetWork(f.ctx, GetWorkInput{WorkID: works.Works[0].ID, Limit: 1})
	if err != nil || d.NextCursor == "" {
		t.Fatalf("detail page: %+v %v", d, err)
	}
	_, err = f.svc.GetWork(f.ctx, GetWorkInput{WorkID: other.ID, Limit: 1, Cursor: d.NextCursor})
	wantArgError(t, err, "cursor", "other filter arguments")
}

// TestGetWorkPagesEveryRelatedRecordOnce pages a work's related records of
// three kinds with one cursor, also when the server cuts pages short.
func TestGetWorkPagesEveryRelatedRecordOnce(t *testing.T) {
	f := newFixture(t)
	w := f.work("w")
	want := map[string]bool{}
	for i := range 23 {
		f.clock.Advance(time.Millisecond)
		want[f.evidence(w.ID, "codex:x", i).ID] = true
	}
	for range 3 {
		f.clock.Advance(time.Millisecond)
		h, err := f.svc.CreateHandoff(f.ctx, f.handoffInput(w.ID))
		if err != nil {
			t.Fatal(err)
		}
		want[h.ID] = true
	}
	for range 12 {
		f.clock.Advance(time.Millisecond)
		rv, err := f.svc.RecordReview(f.ctx, RecordReviewInput{WorkID: w.ID, ReviewerSessionID: "cursor:r", Findings: []Finding{}, Verdict: "approve"})
		if err != nil {
			t.Fatal(err)
		}
		want[rv.ID] = true
		want[rv.EvidenceID] = true // a review records evidence too
	}
	for _, cut := range []int{0, 4, 13} {
		t.Run(fmt.Sprint("cut ", cut), func(t *testing.T) {
			got := map[string]bool{}
			cursor := ""
			for pages := 0; pages < 100; pages++ {
				d, err := f.svc.GetWork(f.ctx, GetWorkInput{WorkID: w.ID, Limit: 10, Cursor: cursor})
				if err != nil {
					t.Fatal(err)
				}
				if d.Work.ID != w.ID {
					t.Fatalf("page %d lacks the work", pages)
				}
				if cut > 0 && d.PageLen() > cut {
					d = d.CutPage(cut).(WorkDetail)
					if d.NextCursor == "" || d.PageLen() != cut {
						t.Fatalf("cut page: %d records, cursor %q", d.PageLen(), d.NextCursor)
					}
				}
				for _, e := range d.Evidence {
					if e.Data != nil {
						t.Fatal("modern detail carries evidence data")
					}
					add(t, got, e.ID)
				}
				for _, h := range d.Handoffs {
					add(t, got, h.ID)
				}
				for _, r := range d.Reviews {
					add(t, got, r.ID)
				}
				if d.NextCursor == "" {
					break
				}
				cursor = d.NextCursor
			}
			if len(got) != len(want) {
				t.Fatalf("delivered %d records, want %d", len(got), len(want))
			}
			for id := range want {
				if !got[id] {
					t.Fatalf("record %s never delivered", id)
				}
			}
		})
	}
	full, err := f.svc.GetWork(f.ctx, GetWorkInput{WorkID: w.ID, FullEvidence: true})
	if err != nil || full.Evidence[0].Data == nil {
		t.Fatalf("full evidence (legacy shape) lacks data: %v", err)
	}
}

func add(t *testing.T, seen map[string]bool, id string) {
	t.Helper()
	if seen[id] {
		t.Fatalf("record %s delivered twice", id)
	}
	seen[id] = true
}

// TestEmbeddedEvidenceIDsAreBounded: a work with many evidence records
// lists its newest ones and the count, never all of them.
func TestEmbeddedEvidenceIDsAreBounded(t *testing.T) {
	f := newFixture(t)
	w := f.work("w")
	var last string
	for i := range MaxEmbeddedEvidenceIDs + 5 {
		f.clock.Advance(time.Millisecond)
		last = f.evidence(w.ID, "", i).ID
	}
	l, err := f.svc.ListWorks(f.ctx, ListWorksInput{})
	if err != nil {
		t.Fatal(err)
	}
	p := l.Works[0]
	if len(p.EvidenceIDs) != MaxEmbeddedEvidenceIDs || p.EvidenceCount != MaxEmbeddedEvidenceIDs+5 || p.EvidenceIDs[len(p.EvidenceIDs)-1] != last {
		t.Fatalf("preview lists %d evidence IDs (count %d, last %s)", len(p.EvidenceIDs), p.EvidenceCount, p.EvidenceIDs[len(p.EvidenceIDs)-1])
	}
}

func TestWorkGraphNeighbourhood(t *testing.T) {
	f := newFixture(t, func(o *Options) { o.Sessions = fakeSessions{"codex:a": {Cwd: "/repo"}} })
	// root <- a1 <- a2 <- a3, and root depends on d1; plus an unrelated work.
	d1 := f.work("d1")
	root := f.work("root", d1.ID)
	a1 := f.work("a1", root.ID)
	a2 := f.work("a2", a1.ID)
	a3 := f.work("a3", a2.ID)
	f.work("unrelated")
	f.evidence(root.ID, "codex:a", "diff")
	depth := func(d int64) *int64 { return &d }
	ids := func(g Graph) string {
		var out []string
		for _, w := range g.Works {
			out = append(out, w.ID)
		}
		return strings.Join(out, ",")
	}
	tests := []struct {
		depth int64
		want  []string
	}{
		{0, []string{root.ID}},
		{1, []string{root.ID, d1.ID, a1.ID}},
		{3, []string{root.ID, d1.ID, a1.ID, a2.ID, a3.ID}},
	}
	for _, tt := range tests {
		g, err := f.svc.WorkGraph(f.ctx, GraphInput{WorkID: root.ID, Depth: depth(tt.depth)})
		if err != nil {
			t.Fatal(err)
		}
		want := map[string]bool{}
		for _, id := range tt.want {
			want[id] = true
		}
		if len(g.Works) != len(tt.want) || g.Works[0].ID != root.ID {
			t.Fatalf("depth %d: works %s, want %v", tt.depth, ids(g), tt.want)
		}
		for _, w := range g.Works {
			if !want[w.ID] {
				t.Fatalf("depth %d: unexpected work %s", tt.depth, w.ID)
			}
		}
		for _, e := range g.Edges {
			if e.Kind == EdgeDependsOn && (!want[e.From] || !want[e.To]) {
				t.Fatalf("depth %d: edge to a work outside the answer: %+v", tt.depth, e)
			}
		}
		if tt.depth == 0 && (g.Omitted.Edges != 1 || g.NextCursor != "") { // depends_on to d1 (a1 is outside: its edge is not read)
			t.Fatalf("depth 0: omitted %+v cursor %q", g.Omitted, g.NextCursor)
		}
	}
	// Paging a neighbourhood: limit 2 of 5 works, then the rest.
	g, err := f.svc.WorkGraph(f.ctx, GraphInput{WorkID: root.ID, Depth: depth(3), Limit: 2})
	if err != nil || len(g.Works) != 2 || g.NextCursor == "" || g.Omitted.Works != 3 || g.Omitted.Narrow == "" {
		t.Fatalf("first graph page: %s omitted %+v cursor %q err %v", ids(g), g.Omitted, g.NextCursor, err)
	}
	seen := map[string]bool{}
	for cursor := ""; ; {
		g, err := f.svc.WorkGraph(f.ctx, GraphInput{WorkID: root.ID, Depth: depth(3), Limit: 2, Cursor: cursor})
		if err != nil {
			t.Fatal(err)
		}
		for _, w := range g.Works {
			add(t, seen, w.ID)
		}
		if g.NextCursor == "" {
			break
		}
		cursor = g.NextCursor
	}
	if len(seen) != 5 {
		t.Fatalf("neighbourhood pages delivered %d works, want 5", len(seen))
	}
	// The session of the root's evidence was looked up (cwd known).
	g, _ = f.svc.WorkGraph(f.ctx, GraphInput{WorkID: root.ID, Depth: depth(0)})
	if len(g.Sessions) != 1 || g.Sessions[0].Cwd != "/repo" {
		t.Fatalf("sessions = %+v", g.Sessions)
	}
	// A cut keeps only the kept works' records.
	g, _ = f.svc.WorkGraph(f.ctx, GraphInput{WorkID: root.ID, Depth: depth(1)})
	cut := g.CutPage(1).(Graph)
	if len(cut.Works) != 1 || len(cut.Evidence) != 1 || cut.NextCursor == "" || cut.Omitted.Works != 2 {
		t.Fatalf("cut graph: %d works %d evidence omitted %+v cursor %q", len(cut.Works), len(cut.Evidence), cut.Omitted, cut.NextCursor)
	}
	if _, err := f.svc.WorkGraph(f.ctx, GraphInput{WorkID: "work_missing"}); err == nil || !strings.Contains(err.Error(), "Unknown work work_missing") {
		t.Fatalf("unknown root: %v", err)
	}
	_, err = f.svc.WorkGraph(f.ctx, GraphInput{WorkID: root.ID, Depth: depth(4)})
	wantArgError(t, err, "depth", "between 0 and 3")
}

// TestRelatedRecordsAreCappedWithCounts: the graph of a work with more
// records than an answer carries lists the newest and counts the rest.
func TestRelatedRecordsAreCappedWithCounts(t *testing.T) {
	f := newFixture(t)
	w := f.work("w")
	for i := range relatedCap + 7 {
		f.clock.Advance(time.Millisecond)
		f.evidence(w.ID, "", i)
	}
	g, err := f.svc.WorkGraph(f.ctx, GraphInput{WorkID: w.ID})
	if err != nil {
		t.Fatal(err)
	}
	if len(g.Evidence) != relatedCap || g.Omitted.Evidence != 7 || g.Omitted.Narrow == "" {
		t.Fatalf("evidence %d, omitted %+v", len(g.Evidence), g.Omitted)
	}
}

// TestManyWorksBeyondSQLiteVariableLimit is the more-works-than-SQL-variables
// case: with a dependency on every work, listing, the graph and the
// streamed whole-store graph all work (0.3.x's eager loading bound one
// SQL variable per work and failed with "too many SQL variables" past
// 32,766 works). On SQLite the store's connections get a bound-variable
// limit of 999 (SQLite's default before 3.32), so 2,000 works break the
// same rule that 33,000 break at the default limit; on PostgreSQL
// (the postgres tier) it seeds the 33,000.
func TestManyWorksBeyondSQLiteVariableLimit(t *testing.T) {
	if testing.Short() {
		t.Skip("seeds thousands of works")
	}
	f := newFixture(t)
	n, batch := 33000, 1000
	if f.st.Dialect() == dialect.SQLite {
		const maxVars = 999
		limitVariables(t, f.st, maxVars)
		// Twice the limit, and past DefaultGraphLimit+countCap so the
		// graph's count still stops at its cap.
		n, batch = 2*maxVars+2, 50 // a bulk insert binds a variable per column of every row
	}
	c := f.st.Client()
	at := t0
	ids := make([]string, n)
	for start := 0; start < n; start += batch {
		err := f.st.Tx(f.ctx, func(tx *ent.Tx) error {
			var b []*ent.WorkItemCreate
			for i := start; i < min(start+batch, n); i++ {
				ids[i] = fmt.Sprintf("work_%06d", i)
				c := tx.WorkItem.Create().SetID(ids[i]).SetObjective("o").SetAcceptanceCriteria([]string{"x"}).
					SetRisks([]string{}).SetUnresolvedQuestions([]string{}).SetChangedFiles([]string{}).
					SetCreatedAt(at).SetUpdatedAt(at.Add(time.Duration(i) * time.Millisecond))
				if i > 0 {
					// Work i depends on work i-1: ent's bulk create
					// inserts the batch's works, then its edges in one
					// INSERT (the first one's target is in the previous
					// batch), instead of one UPDATE per edge.
					c.AddDependsOnIDs(ids[i-1])
				}
				b = append(b, c)
			}
			return tx.WorkItem.CreateBulk(b...).Exec(f.ctx)
		})
		if err != nil {
			t.Fatal(err)
		}
	}
	if got := c.WorkItem.Query().CountX(f.ctx); got != n {
		t.Fatalf("seeded %d works", got)
	}
	if got := c.WorkItem.Query().Where(workitem.HasDependsOn()).CountX(f.ctx); got != n-1 {
		t.Fatalf("seeded %d works with a dependency, want %d", got, n-1)
	}
	if f.st.Dialect() == dialect.SQLite {
		// 0.3.x's eager load of every work's dependencies, past the limit.
		if _, err := c.WorkItem.Query().WithDependsOn().All(f.ctx); err == nil || !strings.Contains(err.Error(), "too many SQL variables") {
			t.Fatalf("eager loading %d works' dependencies: %v, want too many SQL variables", n, err)
		}
	}
	total := 0
	for cursor := ""; ; {
		l, err := f.svc.ListWorks(f.ctx, ListWorksInput{Limit: 100, Cursor: cursor})
		if err != nil {
			t.Fatalf("after %d works: %v", total, err)
		}
		total += len(l.Works)
		if l.NextCursor == "" {
			break
		}
		cursor = l.NextCursor
		if total > 3000 {
			break // the rest is the same query; a full pass runs in the stream below
		}
	}
	g, err := f.svc.WorkGraph(f.ctx, GraphInput{})
	if err != nil || len(g.Works) != DefaultGraphLimit || g.Omitted.Works != countCap || !g.Omitted.AtLeast {
		t.Fatalf("graph page: %d works omitted %+v err %v", len(g.Works), g.Omitted, err)
	}
	g, err = f.svc.WorkGraph(f.ctx, GraphInput{WorkID: ids[n/2], Depth: ptrInt(3), Limit: 100})
	if err != nil || len(g.Works) != 7 {
		t.Fatalf("neighbourhood: %d works, %v", len(g.Works), err)
	}
	var sink countingSink
	if err := f.svc.StreamGraph(f.ctx, &sink); err != nil {
		t.Fatal(err)
	}
	if sink.works != n || sink.edges < n-1 {
		t.Fatalf("streamed %d works, %d edges", sink.works, sink.edges)
	}
}

// limitVariables lowers SQLite's bound-variable limit to limit on every
// connection st will use: its pool is capped at the two connections this
// opens, sets and checks (a statement binding limit+1 variables fails).
func limitVariables(t *testing.T, st *store.Store, limit int) {
	t.Helper()
	db := st.DB()
	db.SetMaxOpenConns(2)
	db.SetMaxIdleConns(2)
	ctx := context.Background()
	args := make([]any, limit+1)
	query := "SELECT " + strings.Repeat("?, ", limit) + "?"
	var conns []*sql.Conn
	for range 2 {
		c, err := db.Conn(ctx)
		if err != nil {
			t.Fatal(err)
		}
		conns = append(conns, c)
		if _, err := sqlite.Limit(c, sqlite3.SQLITE_LIMIT_VARIABLE_NUMBER, limit); err != nil {
			t.Fatal(err)
		}
		if _, err := c.ExecContext(ctx, query, args...); err == nil || !strings.Contains(err.Error(), "too many SQL variables") {
			t.Fatalf("%d variables on a connection limited to %d: %v", limit+1, limit, err)
		}
	}
	for _, c := range conns {
		_ = c.Close()
	}
}

func ptrInt(v int64) *int64 { return &v }

type countingSink struct{ works, edges int }

func (s *countingSink) Recovery(*store.Recovery) error { return nil }
func (s *countingSink) Work(Work) error                { s.works++; return nil }
func (s *countingSink) Evidence(EvidenceMeta) error    { return nil }
func (s *countingSink) Handoff(Handoff) error          { return nil }
func (s *countingSink) Review(Review) error            { return nil }
func (s *countingSink) Claim(GraphClaim) error         { return nil }
func (s *countingSink) Session(GraphSession) error     { return nil }
func (s *countingSink) Edge(Edge) error                { s.edges++; return nil }
