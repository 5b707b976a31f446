package workflow

import (
	"context"
	"fmt"
	"slices"
	"sort"
	"strconv"
	"strings"
	"time"

	"entgo.io/ent/dialect/sql"

	"github.com/agent-interop/runtime/catalogs/limits"
	"github.com/agent-interop/runtime/ent"
	"github.com/agent-interop/runtime/ent/claim"
	"github.com/agent-interop/runtime/ent/evidence"
	"github.com/agent-interop/runtime/ent/handoff"
	"github.com/agent-interop/runtime/ent/review"
	"github.com/agent-interop/runtime/ent/workitem"
	"github.com/agent-interop/runtime/internal/paging"
	"github.com/agent-interop/runtime/internal/store"
)

// Graph is get_work_graph's answer: a bounded part of the coordination
// graph (a page of works, or one work's neighbourhood) with the records of
// those works and the derived sessions and edges (rules in
// docs/work-graph.md). Omitted counts what the scope holds beyond the
// answer; NextCursor pages the works.
type Graph struct {
	Works                 []Work          `json:"works"`
	Evidence              []EvidenceMeta  `json:"evidence"`
	Handoffs              []Handoff       `json:"handoffs"`
	Reviews               []Review        `json:"reviews"`
	Claims                []GraphClaim    `json:"claims"`
	Sessions              []GraphSession  `json:"sessions"`
	Edges                 []Edge          `json:"edges"`
	Omitted               GraphOmitted    `json:"omitted"`
	StateRecoveryRequired *store.Recovery `json:"stateRecoveryRequired"`
	NextCursor            string          `json:"nextCursor,omitempty"`

	src *graphSource
}

// GraphOmitted counts what the scope holds beyond the answer. Counts stop
// at 1,000 (AtLeast is then set), so counting never reads the whole store.
type GraphOmitted struct {
	Works    int  `json:"works"`
	Evidence int  `json:"evidence"`
	Handoffs int  `json:"handoffs"`
	Reviews  int  `json:"reviews"`
	Claims   int  `json:"claims"`
	Edges    int  `json:"edges"`
	AtLeast  bool `json:"atLeast,omitempty"`
	// Narrow says how to see what was left out.
	Narrow string `json:"narrow,omitempty"`
}

// GraphSession is a session named by some record ("<provider>:<nativeId>").
type GraphSession struct {
	ID       string `json:"id"`
	Provider string `json:"provider,omitempty"`
	NativeID string `json:"nativeId,omitempty"`
	// Cwd and ParentSession come from the provider layer when it knows the
	// session; they are absent otherwise.
	Cwd           string `json:"cwd,omitempty"`
	ParentSession string `json:"parentSession,omitempty"`
}

// GraphClaim is a claim as the graph shows it; status is active, released
// or expired (an active claim past its lease).
type GraphClaim struct {
	ID         string  `json:"id"`
	WorkID     string  `json:"workId"`
	SessionID  string  `json:"sessionId"`
	Resource   string  `json:"resource"`
	Kind       string  `json:"kind"`
	Mode       string  `json:"mode"`
	Status     string  `json:"status"`
	AcquiredAt string  `json:"acquiredAt"`
	ExpiresAt  string  `json:"expiresAt"`
	ReleasedAt *string `json:"releasedAt,omitempty"`
}

// Edge kinds.
const (
	EdgeHandoff             = "handoff"
	EdgeReview              = "review"
	EdgeParent              = "parent"
	EdgeEvidence            = "evidence"
	EdgeDependsOn           = "depends_on"
	EdgeVerifies            = "verifies"
	EdgeSupersedes          = "supersedes"
	EdgeBlocks              = "blocks"
	EdgeSharesWorkspaceWith = "shares_workspace_with"
	EdgeClaims              = "claims"
)

// Edge links two node IDs (session, work, evidence, handoff, review or
// claim IDs). Ref names the record an edge was derived from when that is
// not one of its ends.
type Edge struct {
	From string `json:"from"`
	To   string `json:"to"`
	Kind string `json:"kind"`
	Ref  string `json:"ref,omitempty"`
}

// Graph bounds.
const (
	// DefaultGraphLimit is the number of works of one graph answer.
	DefaultGraphLimit = limits.GetWorkGraphLimitDefault
	// DefaultGraphDepth is the neighbourhood depth from a workId.
	DefaultGraphDepth = limits.GetWorkGraphDepthDefault
	// MaxGraphDepth bounds the depth.
	MaxGraphDepth = limits.GetWorkGraphDepthMax
	// relatedCap bounds each kind of related record in one answer.
	relatedCap = 50
	// maxSessionLookups bounds the sessions the provider layer is asked
	// about in one answer; further sessions carry their IDs only.
	maxSessionLookups = 20
	// exploreCap bounds the works a neighbourhood search visits.
	exploreCap = 10000
)

// GraphInput is get_work_graph's argument.
type GraphInput struct {
	// WorkID roots the graph at one work and its neighbourhood over
	// depends_on edges (both directions) up to Depth; "" pages the works
	// the filter selects, newest first.
	WorkID string
	// Depth is the neighbourhood depth (0 means the work alone; nil means
	// DefaultGraphDepth).
	Depth *int64
	WorkFilter
	// Limit is the number of works (0 means DefaultGraphLimit).
	Limit int64
	// Cursor is a nextCursor of an earlier answer of the same scope.
	Cursor string
}

func (in GraphInput) filter(depth int) paging.Filter {
	return paging.F("workId", in.WorkID, "depth", strconv.Itoa(depth), "status", in.Status, "session", in.Session)
}

// graphSource is what one answer was built from; CutPage rebuilds a
// shorter answer from it without reading the store again.
type graphSource struct {
	filter   paging.Filter
	rooted   bool
	dist     map[string]int // rooted: each work's distance from the root
	works    []*ent.WorkItem
	counts   evidenceCounts
	evidence []*ent.Evidence
	handoffs []*ent.Handoff
	reviews  []*ent.Review
	claims   []*ent.Claim
	omitted  GraphOmitted
	more     bool
	sessions map[string]SessionInfo // lookups made (found sessions only)
	looked   map[string]bool
	now      time.Time
	recovery *store.Recovery
}

// WorkGraph answers get_work_graph: one work's neighbourhood or a page of
// works, with their evidence metadata, handoffs, reviews and claims (each
// kind capped, newest first), the sessions they name and the edges between
// what is included, from one read snapshot. Omitted counts the rest; the
// provider layer is asked only about sessions in the answer.
func (s *Service) WorkGraph(ctx context.Context, in GraphInput) (Graph, error) {
	limit, err := paging.Limit(toolWorkGraph, in.Limit, DefaultGraphLimit, MaxPageLimit)
	if err != nil {
		return Graph{}, err
	}
	depth := DefaultGraphDepth
	if in.Depth != nil {
		if *in.Depth < 0 || *in.Depth > MaxGraphDepth {
			return Graph{}, paging.Invalid(toolWorkGraph, "depth", fmt.Sprintf("must be between 0 and %d", MaxGraphDepth))
		}
		depth = int(*in.Depth)
	}
	if err := checkStatus(toolWorkGraph, in.Status); err != nil {
		return Graph{}, err
	}
	src := &graphSource{filter: in.filter(depth), rooted: in.WorkID != "", sessions: map[string]SessionInfo{}, looked: map[string]bool{}}
	err = s.st.Read(ctx, func(tx *ent.Tx) error {
		src.now = s.now()
		var err error
		if src.rooted {
			err = src.loadNeighbourhood(ctx, tx, in, depth, limit)
		} else {
			err = src.loadPage(ctx, tx, in, limit)
		}
		if err != nil {
			return err
		}
		return src.loadRelated(ctx, tx)
	})
	if err != nil {
		return Graph{}, err
	}
	if src.recovery, err = s.st.Recovery(ctx); err != nil {
		return Graph{}, err
	}
	s.lookupSessions(ctx, src, sessionIDs(src, len(src.works)))
	return src.build(len(src.works)), nil
}

// loadPage selects a keyset page of works by the filter.
func (src *graphSource) loadPage(ctx context.Context, tx *ent.Tx, in GraphInput, limit int) error {
	after, err := decodeTimeKey(toolWorkGraph, src.filter, in.Cursor)
	if err != nil {
		return err
	}
	rows, more, err := pageWorks(ctx, tx, in.WorkFilter, after, limit, false)
	if err != nil {
		return err
	}
	src.works, src.more = rows, more
	if more {
		n, capped, err := countWorksAfter(ctx, tx, in.WorkFilter, rows[len(rows)-1])
		if err != nil {
			return err
		}
		src.omitted.Works, src.omitted.AtLeast = n, capped
		src.omitted.Narrow = "pass nextCursor for the next works, or narrow with status, session or workId"
	}
	return nil
}

// countWorksAfter counts (up to countCap) the works the filter selects
// after w in page order.
func countWorksAfter(ctx context.Context, tx *ent.Tx, f WorkFilter, w *ent.WorkItem) (int, bool, error) {
	after := timeKey{at: w.UpdatedAt, id: w.ID}
	if f.Session == "" {
		// SELECT COUNT(*) FROM (SELECT 1 ... LIMIT countCap): the store
		// counts the index entries; no ID crosses the driver.
		var got []struct {
			N int `sql:"n"`
		}
		err := tx.WorkItem.Query().Modify(func(s *sql.Selector) {
			t := sql.Table(workitem.Table)
			inner := sql.Select(t.C(workitem.FieldID)).From(t)
			if f.Status != "" {
				workitem.StatusEQ(workitem.Status(f.Status))(inner)
			}
			if f.UpdatedSince != nil {
				workitem.UpdatedAtGTE(*f.UpdatedSince)(inner)
			}
			keysetBefore(workitem.FieldUpdatedAt, workitem.FieldID, after)(inner)
			inner.Limit(countCap)
			s.From(inner.As("capped")).Select(sql.As(sql.Count("*"), "n"))
		}).Scan(ctx, &got)
		if err != nil {
			return 0, false, wrapStore("count works", err)
		}
		n := 0
		if len(got) == 1 {
			n = got[0].N
		}
		return n, n >= countCap, nil
	}
	rows, _, err := pageWorksIDs(ctx, tx, f, after, countCap)
	if err != nil {
		return 0, false, err
	}
	return len(rows), len(rows) >= countCap, nil
}

// pageWorksIDs is pageWorks reading IDs only.
func pageWorksIDs(ctx context.Context, tx *ent.Tx, f WorkFilter, after timeKey, limit int) ([]string, bool, error) {
	q := func() *ent.WorkItemQuery {
		q := tx.WorkItem.Query()
		if f.Status != "" {
			q = q.Where(workitem.StatusEQ(workitem.Status(f.Status)))
		}
		if f.UpdatedSince != nil {
			q = q.Where(workitem.UpdatedAtGTE(*f.UpdatedSince))
		}
		return q.Where(keysetBefore(workitem.FieldUpdatedAt, workitem.FieldID, after)).Order(workNewestFirst()...).Limit(limit)
	}
	if f.Session == "" {
		ids, err := q().IDs(ctx)
		return ids, false, wrapStoreNil("count works", err)
	}
	src, err := q().Where(workitem.SourceSession(f.Session)).IDs(ctx)
	if err != nil {
		return nil, false, wrapStore("count works", err)
	}
	dst, err := q().Where(workitem.DestinationSession(f.Session)).IDs(ctx)
	if err != nil {
		return nil, false, wrapStore("count works", err)
	}
	seen := map[string]bool{}
	var out []string
	for _, id := range append(src, dst...) {
		if !seen[id] && len(out) < limit {
			seen[id] = true
			out = append(out, id)
		}
	}
	return out, false, nil
}

func wrapStoreNil(what string, err error) error {
	if err == nil {
		return nil
	}
	return wrapStore(what, err)
}

// loadNeighbourhood selects the root and the works within depth of it over
// depends_on edges in both directions, ordered by distance then ID, and
// the page of them after the cursor. Each level is read in chunks of IDs;
// the search stops after exploreCap works.
func (src *graphSource) loadNeighbourhood(ctx context.Context, tx *ent.Tx, in GraphInput, depth, limit int) error {
	keys, err := paging.Decode(toolWorkGraph, src.filter, in.Cursor, 2)
	if err != nil {
		return err
	}
	afterDist, afterID := -1, ""
	if keys != nil {
		d, err := strconv.Atoi(keys[0])
		if err != nil || d < 0 || keys[1] == "" {
			return paging.Invalid(toolWorkGraph, "cursor", "is malformed; pass nextCursor back unchanged or omit cursor")
		}
		afterDist, afterID = d, keys[1]
	}
	root, err := loadWork(ctx, tx, in.WorkID)
	if err != nil {
		return err
	}
	type node struct {
		id   string
		dist int
	}
	order := []node{{root.ID, 0}}
	src.dist = map[string]int{root.ID: 0}
	frontier := []string{root.ID}
	for d := 1; d <= depth && len(frontier) > 0; d++ {
		next, err := neighbours(ctx, tx, frontier, exploreCap-len(order)+1)
		if err != nil {
			return err
		}
		var level []string
		for _, id := range next {
			if _, seen := src.dist[id]; !seen {
				src.dist[id] = d
				level = append(level, id)
			}
		}
		sort.Strings(level)
		if len(order)+len(level) > exploreCap {
			level = level[:exploreCap-len(order)]
			src.omitted.AtLeast = true
		}
		for _, id := range level {
			order = append(order, node{id, d})
		}
		frontier = level
	}
	start := 0
	if afterID != "" {
		start = len(order)
		for i, n := range order {
			if n.dist > afterDist || (n.dist == afterDist && n.id > afterID) {
				start = i
				break
			}
		}
	}
	end := min(start+limit, len(order))
	ids := make([]string, 0, end-start)
	for _, n := range order[start:end] {
		ids = append(ids, n.id)
	}
	rows, err := tx.WorkItem.Query().Where(workitem.IDIn(ids...)).All(ctx)
	if err != nil {
		return wrapStore("read works", err)
	}
	if err := loadDependsOn(ctx, tx, false, rows); err != nil {
		return err
	}
	pos := map[string]int{}
	for i, id := range ids {
		pos[id] = i
	}
	sort.Slice(rows, func(i, j int) bool { return pos[rows[i].ID] < pos[rows[j].ID] })
	src.works = rows
	if end < len(order) {
		src.more = true
		src.omitted.Works = len(order) - end
		src.omitted.Narrow = "pass nextCursor for the next works of this neighbourhood, or lower depth"
	}
	return nil
}

// neighbours returns the works that depend on or are depended on by any of
// ids (at most max of them), reading the dependency table in chunks so no
// statement binds more than paging.ChunkSize values.
func neighbours(ctx context.Context, tx *ent.Tx, ids []string, max int) ([]string, error) {
	var out []string
	for _, chunk := range paging.Chunks(ids, paging.ChunkSize) {
		if len(out) >= max {
			break
		}
		// depends_on targets of the chunk, then the works depending on it
		// (served by the reverse index of the dependency table).
		fwd, err := tx.WorkItem.Query().Where(workitem.HasDependentsWith(workitem.IDIn(chunk...))).Limit(max - len(out)).IDs(ctx)
		if err != nil {
			return nil, wrapStore("read dependencies", err)
		}
		out = append(out, fwd...)
		if len(out) >= max {
			break
		}
		rev, err := tx.WorkItem.Query().Where(workitem.HasDependsOnWith(workitem.IDIn(chunk...))).Limit(max - len(out)).IDs(ctx)
		if err != nil {
			return nil, wrapStore("read dependents", err)
		}
		out = append(out, rev...)
	}
	return out, nil
}

// loadRelated reads, for the selected works, each kind of related record
// newest first up to relatedCap, and counts (up to countCap) the rest.
func (src *graphSource) loadRelated(ctx context.Context, tx *ent.Tx) error {
	ids := make([]string, len(src.works))
	for i, w := range src.works {
		ids[i] = w.ID
	}
	var err error
	if src.counts, err = embedEvidenceIDs(ctx, tx, false, src.works); err != nil {
		return err
	}
	if len(ids) == 0 {
		return nil
	}
	ev, err := tx.Evidence.Query().Where(evidence.WorkIDIn(ids...)).Limit(countCap).IDs(ctx)
	if err != nil {
		return wrapStore("count evidence", err)
	}
	src.omitted.Evidence, src.omitted.AtLeast = capCount(len(ev), src.omitted.AtLeast)
	if src.evidence, err = tx.Evidence.Query().Where(evidence.WorkIDIn(ids...)).Order(evidenceNewestFirst()...).
		Limit(relatedCap).Select(evidenceMetaFields()...).All(ctx); err != nil {
		return wrapStore("read evidence", err)
	}
	src.omitted.Evidence -= len(src.evidence)

	hn, err := tx.Handoff.Query().Where(handoff.WorkIDIn(ids...)).Limit(countCap).IDs(ctx)
	if err != nil {
		return wrapStore("count handoffs", err)
	}
	src.omitted.Handoffs, src.omitted.AtLeast = capCount(len(hn), src.omitted.AtLeast)
	if src.handoffs, err = tx.Handoff.Query().Where(handoff.WorkIDIn(ids...)).Order(handoffNewestFirst()...).Limit(relatedCap).All(ctx); err != nil {
		return wrapStore("read handoffs", err)
	}
	src.omitted.Handoffs -= len(src.handoffs)

	rn, err := tx.Review.Query().Where(review.WorkIDIn(ids...)).Limit(countCap).IDs(ctx)
	if err != nil {
		return wrapStore("count reviews", err)
	}
	src.omitted.Reviews, src.omitted.AtLeast = capCount(len(rn), src.omitted.AtLeast)
	if src.reviews, err = tx.Review.Query().Where(review.WorkIDIn(ids...)).Order(reviewNewestFirst()...).Limit(relatedCap).All(ctx); err != nil {
		return wrapStore("read reviews", err)
	}
	src.omitted.Reviews -= len(src.reviews)

	cn, err := tx.Claim.Query().Where(claim.WorkIDIn(ids...)).Limit(countCap).IDs(ctx)
	if err != nil {
		return wrapStore("count claims", err)
	}
	src.omitted.Claims, src.omitted.AtLeast = capCount(len(cn), src.omitted.AtLeast)
	if src.claims, err = tx.Claim.Query().Where(claim.WorkIDIn(ids...)).
		Order(claim.ByAcquiredAt(sql.OrderDesc()), claim.ByID(sql.OrderDesc())).Limit(relatedCap).All(ctx); err != nil {
		return wrapStore("read claims", err)
	}
	src.omitted.Claims -= len(src.claims)
	if src.omitted.Evidence+src.omitted.Handoffs+src.omitted.Reviews+src.omitted.Claims > 0 && src.omitted.Narrow == "" {
		src.omitted.Narrow = "get_work_item, list_evidence and list_claims page a work's records"
	}
	return nil
}

func capCount(n int, atLeast bool) (int, bool) { return n, atLeast || n >= countCap }

// build derives the answer for the first n selected works: their records,
// the sessions those name and the edges between included nodes.
func (src *graphSource) build(n int) Graph {
	kept := map[string]bool{}
	for _, w := range src.works[:n] {
		kept[w.ID] = true
	}
	g := Graph{
		Works:                 make([]Work, 0, n),
		Evidence:              []EvidenceMeta{},
		Handoffs:              []Handoff{},
		Reviews:               []Review{},
		Claims:                []GraphClaim{},
		Omitted:               src.omitted,
		StateRecoveryRequired: src.recovery,
		src:                   src,
	}
	r := graphRecords{works: src.works[:n]}
	for _, w := range r.works {
		g.Works = append(g.Works, toWork(w, src.counts))
	}
	cut := len(src.works) - n
	g.Omitted.Works += cut
	for _, e := range src.evidence {
		if e.WorkID != nil && kept[*e.WorkID] {
			r.evidence = append(r.evidence, e)
			g.Evidence = append(g.Evidence, toEvidenceMeta(e))
		} else {
			g.Omitted.Evidence++
		}
	}
	for _, h := range src.handoffs {
		if kept[h.WorkID] {
			r.handoffs = append(r.handoffs, h)
			g.Handoffs = append(g.Handoffs, toHandoff(h))
		} else {
			g.Omitted.Handoffs++
		}
	}
	for _, rv := range src.reviews {
		if kept[rv.WorkID] {
			r.reviews = append(r.reviews, rv)
			g.Reviews = append(g.Reviews, toReview(rv))
		} else {
			g.Omitted.Reviews++
		}
	}
	for _, c := range src.claims {
		if kept[c.WorkID] {
			r.claims = append(r.claims, c)
			g.Claims = append(g.Claims, toGraphClaim(c, src.now))
		} else {
			g.Omitted.Claims++
		}
	}
	g.Sessions = src.graphSessions(&r)
	nodes := map[string]bool{}
	for _, w := range r.works {
		nodes[w.ID] = true
	}
	for _, e := range r.evidence {
		nodes[e.ID] = true
	}
	for _, h := range r.handoffs {
		nodes[h.ID] = true
	}
	for _, rv := range r.reviews {
		nodes[rv.ID] = true
	}
	for _, s := range g.Sessions {
		nodes[s.ID] = true
	}
	for _, e := range graphEdges(&r, g.Sessions, g.Claims) {
		if nodes[e.From] && nodes[e.To] {
			g.Edges = append(g.Edges, e)
		} else {
			g.Omitted.Edges++
		}
	}
	if g.Edges == nil {
		g.Edges = []Edge{}
	}
	if src.more || cut > 0 {
		last := src.works[n-1]
		if src.rooted {
			g.NextCursor = paging.Encode(toolWorkGraph, src.filter, strconv.Itoa(src.dist[last.ID]), last.ID)
		} else {
			g.NextCursor = paging.Encode(toolWorkGraph, src.filter, keyTime(last.UpdatedAt), last.ID)
		}
		if g.Omitted.Narrow == "" {
			g.Omitted.Narrow = "pass nextCursor for the next works"
		}
	}
	return g
}

// PageLen implements paging.Cuttable: the works of the answer.
func (g Graph) PageLen() int { return len(g.Works) }

// CutPage implements paging.Cuttable: it keeps the first n works and only
// the records, sessions and edges that belong to them.
func (g Graph) CutPage(n int) any {
	if g.src == nil {
		return g
	}
	return g.src.build(n)
}

// graphRecords are the records one answer derives sessions and edges from.
type graphRecords struct {
	works    []*ent.WorkItem
	evidence []*ent.Evidence
	handoffs []*ent.Handoff
	reviews  []*ent.Review
	claims   []*ent.Claim
}

func toGraphClaim(c *ent.Claim, now time.Time) GraphClaim {
	status := string(c.Status)
	if c.Status == claim.StatusActive && !c.ExpiresAt.After(now) {
		status = "expired"
	}
	var released *string
	if c.ReleasedAt != nil {
		t := Timestamp(*c.ReleasedAt)
		released = &t
	}
	return GraphClaim{
		ID: c.ID, WorkID: c.WorkID, SessionID: c.SessionID, Resource: c.Resource,
		Kind: string(c.Kind), Mode: string(c.Mode), Status: status,
		AcquiredAt: Timestamp(c.AcquiredAt), ExpiresAt: Timestamp(c.ExpiresAt), ReleasedAt: released,
	}
}

// recordSessions collects every session ID the records name.
func recordSessions(r *graphRecords) map[string]bool {
	ids := map[string]bool{}
	add := func(p *string) {
		if p != nil && *p != "" {
			ids[*p] = true
		}
	}
	for _, w := range r.works {
		add(w.SourceSession)
		add(w.DestinationSession)
	}
	for _, e := range r.evidence {
		add(e.SessionID)
	}
	for _, h := range r.handoffs {
		add(&h.SourceSession)
		add(h.DestinationSession)
	}
	for _, rv := range r.reviews {
		add(&rv.ReviewerSessionID)
	}
	for _, c := range r.claims {
		add(&c.SessionID)
	}
	return ids
}

// sessionIDs lists the sessions the first n works' records name, sorted.
func sessionIDs(src *graphSource, n int) []string {
	kept := map[string]bool{}
	for _, w := range src.works[:n] {
		kept[w.ID] = true
	}
	r := graphRecords{works: src.works[:n]}
	for _, e := range src.evidence {
		if e.WorkID != nil && kept[*e.WorkID] {
			r.evidence = append(r.evidence, e)
		}
	}
	for _, h := range src.handoffs {
		if kept[h.WorkID] {
			r.handoffs = append(r.handoffs, h)
		}
	}
	for _, rv := range src.reviews {
		if kept[rv.WorkID] {
			r.reviews = append(r.reviews, rv)
		}
	}
	for _, c := range src.claims {
		if kept[c.WorkID] {
			r.claims = append(r.claims, c)
		}
	}
	ids := recordSessions(&r)
	out := make([]string, 0, len(ids))
	for id := range ids {
		out = append(out, id)
	}
	sort.Strings(out)
	return out
}

// lookupSessions asks the provider layer about the answer's sessions, at
// most maxSessionLookups of them (in ID order).
func (s *Service) lookupSessions(ctx context.Context, src *graphSource, ids []string) {
	if s.sessions == nil {
		return
	}
	asked := 0
	for _, id := range ids {
		if asked >= maxSessionLookups {
			return
		}
		p, n, ok := strings.Cut(id, ":")
		if !ok || p == "" || n == "" || src.looked[id] {
			continue
		}
		src.looked[id] = true
		asked++
		if info, found, err := s.sessions.LookupSession(ctx, p, n); err == nil && found {
			src.sessions[id] = info
		}
	}
}

// graphSessions lists every session the records name, sorted, with cwd
// and parent where the provider layer reported them.
func (src *graphSource) graphSessions(r *graphRecords) []GraphSession {
	ids := recordSessions(r)
	out := make([]GraphSession, 0, len(ids))
	extra := map[string]bool{}
	for id := range ids {
		gs := GraphSession{ID: id}
		if p, n, ok := strings.Cut(id, ":"); ok && p != "" && n != "" {
			gs.Provider, gs.NativeID = p, n
			if info, found := src.sessions[id]; found {
				gs.Cwd = info.Cwd
				if info.ParentNativeID != "" {
					gs.ParentSession = p + ":" + info.ParentNativeID
					if !ids[gs.ParentSession] {
						extra[gs.ParentSession] = true
					}
				}
			}
		}
		out = append(out, gs)
	}
	for id := range extra {
		p, n, _ := strings.Cut(id, ":")
		out = append(out, GraphSession{ID: id, Provider: p, NativeID: n})
	}
	sort.Slice(out, func(i, j int) bool { return out[i].ID < out[j].ID })
	return out
}

// graphEdges derives the edges; docs/work-graph.md states each rule.
func graphEdges(r *graphRecords, sessions []GraphSession, claims []GraphClaim) []Edge {
	edges := []Edge{}
	add := func(from, to, kind, ref string) {
		if from != "" && to != "" {
			edges = append(edges, Edge{From: from, To: to, Kind: kind, Ref: ref})
		}
	}
	status := map[string]workitem.Status{}
	for _, w := range r.works {
		status[w.ID] = w.Status
	}
	evidenceSession := map[string]string{}
	for _, e := range r.evidence {
		if e.SessionID != nil {
			evidenceSession[e.ID] = *e.SessionID
		}
	}
	for _, w := range r.works {
		for _, d := range w.Edges.DependsOn {
			add(w.ID, d.ID, EdgeDependsOn, "")
			// A dependency outside the answer has unknown status: its
			// depends_on edge is counted as omitted, its blocks edge is not
			// derived.
			if st, ok := status[d.ID]; ok && st != workitem.StatusAccepted {
				add(d.ID, w.ID, EdgeBlocks, "")
			}
		}
	}
	for _, e := range r.evidence {
		if e.WorkID == nil {
			continue
		}
		add(e.ID, *e.WorkID, EdgeEvidence, "")
		if e.Trust == evidence.TrustRuntimeObserved || e.Trust == evidence.TrustRepositoryVerified {
			add(e.ID, *e.WorkID, EdgeVerifies, "")
		}
	}
	for _, h := range r.handoffs {
		if h.DestinationSession != nil {
			add(h.SourceSession, *h.DestinationSession, EdgeHandoff, h.ID)
		}
	}
	for _, sup := range supersessions(r.handoffs) {
		add(sup[0], sup[1], EdgeSupersedes, "")
	}
	for _, rv := range r.reviews {
		subjects := map[string]bool{}
		for _, id := range rv.SubjectEvidenceIds {
			add(rv.ID, id, EdgeVerifies, "")
			if s := evidenceSession[id]; s != "" && s != rv.ReviewerSessionID {
				subjects[s] = true
			}
		}
		for _, s := range sortedKeys(subjects) {
			add(rv.ReviewerSessionID, s, EdgeReview, rv.ID)
		}
	}
	for _, s := range sessions {
		if s.ParentSession != "" {
			add(s.ID, s.ParentSession, EdgeParent, "")
		}
	}
	byCwd := map[string][]string{}
	for _, s := range sessions {
		if s.Cwd != "" {
			byCwd[s.Cwd] = append(byCwd[s.Cwd], s.ID)
		}
	}
	for _, cwd := range sortedKeys(byCwd) {
		ids := byCwd[cwd]
		for i := 0; i < len(ids); i++ {
			for j := i + 1; j < len(ids); j++ {
				add(ids[i], ids[j], EdgeSharesWorkspaceWith, "")
			}
		}
	}
	for _, c := range claims {
		if c.Status == "active" {
			add(c.SessionID, c.WorkID, EdgeClaims, c.ID)
		}
	}
	return edges
}

// supersessions pairs each superseded handoff with the next handoff created
// for the same work after it: [newer, superseded].
func supersessions(hs []*ent.Handoff) [][2]string {
	byWork := map[string][]*ent.Handoff{}
	for _, h := range hs {
		byWork[h.WorkID] = append(byWork[h.WorkID], h)
	}
	var out [][2]string
	for _, w := range sortedKeys(byWork) {
		list := slices.Clone(byWork[w])
		sort.Slice(list, func(i, j int) bool {
			if !list[i].CreatedAt.Equal(list[j].CreatedAt) {
				return list[i].CreatedAt.Before(list[j].CreatedAt)
			}
			return list[i].ID < list[j].ID
		})
		for i, h := range list {
			if h.Status == handoff.StatusSuperseded && i+1 < len(list) {
				out = append(out, [2]string{list[i+1].ID, h.ID})
			}
		}
	}
	return out
}

func sortedKeys[V any](m map[string]V) []string {
	keys := make([]string, 0, len(m))
	for k := range m {
		keys = append(keys, k)
	}
	sort.Strings(keys)
	return keys
}
