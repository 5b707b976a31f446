package desk

import (
	"context"
	"fmt"
	"slices"
	"strconv"
	"strings"
	"time"

	"github.com/agent-interop/runtime/ent"
	"github.com/agent-interop/runtime/ent/claim"
	"github.com/agent-interop/runtime/ent/evidence"
	"github.com/agent-interop/runtime/ent/handoff"
	"github.com/agent-interop/runtime/ent/predicate"
	"github.com/agent-interop/runtime/ent/review"
	"github.com/agent-interop/runtime/ent/workitem"
	"github.com/agent-interop/runtime/internal/paging"
)

// ---- work

// WorkFilter selects work items.
type WorkFilter struct {
	Status  string
	Session string // a source or destination session ("<provider>:<nativeId>")
	Query   string // a substring of the objective, or an id
	Sort    string // "" (most recently updated first), "created" or "status"
	Cursor  string
	Limit   int
}

// Work sorts: newest update first (the default), newest first by
// creation, or grouped by status (in workStatuses order, each group most
// recently updated first).
var workSorts = []string{"updated", "created", "status"}

// WorkRow is one work item in a listing.
type WorkRow struct {
	ID          string
	Objective   string
	Status      string
	Source      string
	Destination string
	Created     time.Time
	Updated     time.Time
	// Blocked is set for an open item with an unfinished dependency.
	Blocked bool
}

// Shown is the status the desk shows: blocked for an open item that waits
// on a dependency.
func (w WorkRow) Shown() string {
	if w.Blocked {
		return "blocked"
	}
	return w.Status
}

// DOMID is the row's element id.
func (w WorkRow) DOMID() string { return domID("w-", w.ID) }

// Fingerprint changes when anything shown for the row changes.
func (w WorkRow) Fingerprint() string {
	return fmt.Sprint(w.Status, w.Blocked, w.Objective, w.Updated.UnixNano())
}

// WorkPage is a page of work items in the filter's order. Start is the
// position of its first row among the items the filter selects (1 on the
// first page), counted in the store.
type WorkPage struct {
	Rows  []WorkRow
	Next  string
	Start int
}

// Work statuses, for the filter.
var workStatuses = []string{"open", "in_progress", "blocked", "accepted", "rejected"}

// workKey is where a page of work items resumes: the status group (sort by
// status only), and the sort time and id of the previous page's last row.
type workKey struct {
	group int
	at    time.Time
	id    string
}

// workGroups are the status filters a listing reads one after the other:
// every status in order when sorted by status without a status filter,
// else the one filter ("" for any status).
func workGroups(f WorkFilter) []string {
	if f.Sort == "status" && f.Status == "" {
		return workStatuses
	}
	return []string{f.Status}
}

// workTimeColumn is the time column a sort reads, most recent first.
func workTimeColumn(sort string) string {
	if sort == "created" {
		return workitem.FieldCreatedAt
	}
	return workitem.FieldUpdatedAt
}

func decodeWorkKey(pf paging.Filter, f WorkFilter) (workKey, bool, error) {
	if f.Sort != "status" {
		at, id, set, err := timeKeys(cursorWork, pf, f.Cursor)
		return workKey{at: at, id: id}, set, err
	}
	keys, err := paging.Decode(cursorWork, pf, f.Cursor, 3)
	if err != nil || keys == nil {
		return workKey{}, false, err
	}
	g, gerr := strconv.Atoi(keys[0])
	at, terr := time.Parse(time.RFC3339Nano, keys[1])
	if gerr != nil || terr != nil || g < 0 || g >= len(workGroups(f)) || keys[2] == "" {
		return workKey{}, false, paging.Invalid(cursorWork, "cursor", "is malformed; use the page's Next link or start again from the first page")
	}
	return workKey{group: g, at: at, id: keys[2]}, true, nil
}

// work is a page of work items in the filter's order, read with a keyset
// in the store: (updated_at, id) or (created_at, id) newest first, each
// over its index; sorted by status, the same keyset within one status
// after another (at most one read per status, over the (status,
// updated_at, id) index). The open and blocked filters depend on the
// items' dependencies and are checked in the statement; the open items of
// the page that wait on an unfinished dependency are marked Blocked (one
// query for the page's ids). Past the first page, the page's position is
// a count of the items before it, over the same indexes.
func (r *reader) work(ctx context.Context, f WorkFilter) (WorkPage, error) {
	limit := clampLimit(f.Limit)
	f.Query = strings.TrimSpace(f.Query)
	f.Session = strings.TrimSpace(f.Session)
	if !slices.Contains(workSorts, f.Sort) || f.Sort == "updated" {
		f.Sort = ""
	}
	pf := paging.F("status", f.Status, "session", f.Session, "q", f.Query, "sort", f.Sort)
	key, set, err := decodeWorkKey(pf, f)
	if err != nil {
		return WorkPage{}, err
	}
	col := workTimeColumn(f.Sort)
	groups := workGroups(f)
	type found struct {
		w     *ent.WorkItem
		group int
	}
	var list []found
	for g := key.group; g < len(groups) && len(list) <= limit; g++ {
		q := r.workQuery(f, groups[g])
		if set && g == key.group {
			q = q.Where(olderThan[predicate.WorkItem](col, workitem.FieldID, key.at, key.id))
		}
		ws, err := q.Order(ent.Desc(col), ent.Desc(workitem.FieldID)).Limit(limit+1-len(list)).
			Select(workitem.FieldID, workitem.FieldObjective, workitem.FieldStatus, workitem.FieldSourceSession,
				workitem.FieldDestinationSession, workitem.FieldCreatedAt, workitem.FieldUpdatedAt).All(ctx)
		if err != nil {
			return WorkPage{}, fmt.Errorf("list work items: %w", err)
		}
		for _, w := range ws {
			list = append(list, found{w, g})
		}
	}
	page := WorkPage{Start: 1}
	if len(list) > limit {
		list = list[:limit]
		last := list[len(list)-1]
		at := last.w.UpdatedAt
		if f.Sort == "created" {
			at = last.w.CreatedAt
		}
		if f.Sort == "status" {
			page.Next = paging.Encode(cursorWork, pf, strconv.Itoa(last.group), keyTime(at), last.w.ID)
		} else {
			page.Next = paging.Encode(cursorWork, pf, keyTime(at), last.w.ID)
		}
	}
	for _, fw := range list {
		page.Rows = append(page.Rows, workRow(fw.w))
	}
	if set {
		before, err := r.workBefore(ctx, f, groups, key)
		if err != nil {
			return WorkPage{}, err
		}
		page.Start = before + 1
	}
	return page, r.markBlocked(ctx, page.Rows)
}

// workQuery selects the filter's items of one status group ("" for any).
func (r *reader) workQuery(f WorkFilter, status string) *ent.WorkItemQuery {
	q := r.client.WorkItem.Query().Where(workWhere(f, f.Query)...)
	if status != "" {
		q = q.Where(statusWhere(status))
	}
	return q
}

// workBefore counts the items that come before key in the filter's order:
// those of the earlier status groups, and those of key's group at or
// after its sort time and id. Each is a COUNT over the sort's index.
func (r *reader) workBefore(ctx context.Context, f WorkFilter, groups []string, key workKey) (int, error) {
	n := 0
	for g := 0; g <= key.group; g++ {
		q := r.workQuery(f, groups[g])
		if g == key.group {
			q = q.Where(workitem.Not(olderThan[predicate.WorkItem](workTimeColumn(f.Sort), workitem.FieldID, key.at, key.id)))
		}
		c, err := q.Count(ctx)
		if err != nil {
			return 0, fmt.Errorf("count the work items before the page: %w", err)
		}
		n += c
	}
	return n, nil
}

// unfinished selects work items that are not done: open, in progress or
// blocked (accepted and rejected items are finished).
func unfinished() predicate.WorkItem {
	return workitem.StatusIn(workitem.StatusOpen, workitem.StatusInProgress, workitem.StatusBlocked)
}

// waiting selects open items with an unfinished dependency: the desk shows
// them as blocked.
func waiting() predicate.WorkItem {
	return workitem.And(workitem.StatusEQ(workitem.StatusOpen), workitem.HasDependsOnWith(unfinished()))
}

// statusWhere is the status filter of the desk: "open" leaves out the
// items waiting on a dependency, "blocked" takes them in.
func statusWhere(status string) predicate.WorkItem {
	switch status {
	case "open":
		return workitem.And(workitem.StatusEQ(workitem.StatusOpen), workitem.Not(workitem.HasDependsOnWith(unfinished())))
	case "blocked":
		return workitem.Or(workitem.StatusEQ(workitem.StatusBlocked), waiting())
	}
	return workitem.StatusEQ(workitem.Status(status))
}

// workWhere are the filter's predicates but its status and cursor.
func workWhere(f WorkFilter, text string) []predicate.WorkItem {
	var ps []predicate.WorkItem
	if text != "" {
		ps = append(ps, workitem.Or(workitem.ObjectiveContains(text), workitem.ID(text)))
	}
	if s := strings.TrimSpace(f.Session); s != "" {
		ps = append(ps, workitem.Or(workitem.SourceSession(s), workitem.DestinationSession(s)))
	}
	return ps
}

// markBlocked marks the open rows that wait on an unfinished dependency.
func (r *reader) markBlocked(ctx context.Context, rows []WorkRow) error {
	var open []string
	for _, w := range rows {
		if w.Status == "open" {
			open = append(open, w.ID)
		}
	}
	if len(open) == 0 {
		return nil
	}
	ids, err := r.waitingAmong(ctx, open)
	if err != nil {
		return err
	}
	for i := range rows {
		rows[i].Blocked = slices.Contains(ids, rows[i].ID)
	}
	return nil
}

// waitingAmong returns which of the open work items ids wait on an
// unfinished dependency (shown as blocked).
func (r *reader) waitingAmong(ctx context.Context, ids []string) ([]string, error) {
	if len(ids) == 0 {
		return nil, nil
	}
	out, err := r.client.WorkItem.Query().Where(workitem.IDIn(ids...), workitem.HasDependsOnWith(unfinished())).IDs(ctx)
	if err != nil {
		return nil, fmt.Errorf("read which work items wait on a dependency: %w", err)
	}
	return out, nil
}

// markBlockedNodes shows as blocked the open nodes of a graph that wait on
// an unfinished dependency, as the lists do.
func (r *reader) markBlockedNodes(ctx context.Context, nodes []GraphNode) error {
	var open []string
	for _, n := range nodes {
		if n.Status == "open" {
			open = append(open, n.ID)
		}
	}
	ids, err := r.waitingAmong(ctx, open)
	if err != nil {
		return err
	}
	for i := range nodes {
		if nodes[i].Status == "open" && slices.Contains(ids, nodes[i].ID) {
			nodes[i].Status = "blocked"
		}
	}
	return nil
}

// StatusCount is how many items of a list have one status.
type StatusCount struct {
	Status string
	N      int
}

// WorkCounts are the counts per status of the items a filter selects
// (whatever its status), computed in the store: one GROUP BY and one
// count of the open items waiting on a dependency (shown as blocked).
type WorkCounts struct {
	Tally  // Counts in workStatuses order
	Filter WorkFilter
	OOB    string
}

// Tally is a list's counts per status and their total, shared by every
// view that counts (Work, Receipts, Sessions).
type Tally struct {
	Counts []StatusCount
	Total  int
}

// of is the count of one status ("" for all).
func (c Tally) of(status string) int {
	if status == "" {
		return c.Total
	}
	for _, sc := range c.Counts {
		if sc.Status == status {
			return sc.N
		}
	}
	return 0
}

func (r *reader) workCounts(ctx context.Context, f WorkFilter) (WorkCounts, error) {
	text := strings.TrimSpace(f.Query)
	var groups []struct {
		Status string `json:"status"`
		Count  int    `json:"count"`
	}
	if err := r.client.WorkItem.Query().Where(workWhere(f, text)...).GroupBy(workitem.FieldStatus).
		Aggregate(ent.Count()).Scan(ctx, &groups); err != nil {
		return WorkCounts{}, fmt.Errorf("count work items by status: %w", err)
	}
	wait, err := r.client.WorkItem.Query().Where(workWhere(f, text)...).Where(waiting()).Count(ctx)
	if err != nil {
		return WorkCounts{}, fmt.Errorf("count work items waiting on a dependency: %w", err)
	}
	by := map[string]int{}
	out := WorkCounts{Filter: f}
	for _, g := range groups {
		by[g.Status] += g.Count
		out.Total += g.Count
	}
	by["open"] -= wait
	by["blocked"] += wait
	for _, st := range workStatuses {
		out.Counts = append(out.Counts, StatusCount{Status: st, N: by[st]})
	}
	return out, nil
}

func workRow(w *ent.WorkItem) WorkRow {
	return WorkRow{
		ID: w.ID, Objective: w.Objective, Status: string(w.Status),
		Source: deref(w.SourceSession), Destination: deref(w.DestinationSession), Created: w.CreatedAt, Updated: w.UpdatedAt,
	}
}

func deref(p *string) string {
	if p == nil {
		return ""
	}
	return *p
}

// WorkDetail is one work item with its neighbourhood and records.
type WorkDetail struct {
	WorkRow
	Acceptance   []string
	Risks        []string
	Questions    []string
	ChangedFiles []string
	Graph        Graph
	Evidence     []EvidenceRow
	Handoffs     []HandoffRow
	Reviews      []ReviewRow
	Claims       []ClaimRow
	MoreEvidence bool
	MoreHandoffs bool
	MoreReviews  bool
	MoreClaims   bool
	// Usage totals the turns of its sessions and its handoffs' sessions
	// (usage.go; set by the page).
	Usage string
}

// EvidenceRow is one evidence record (its data is not loaded).
type EvidenceRow struct {
	ID, Kind, Trust, Session, Summary, Hash string
	Bytes                                   int
	Captured                                time.Time
}

// HandoffRow is one handoff and its lifecycle state.
type HandoffRow struct {
	ID, Source, Destination, Objective, Status, Continuation string
	Tokens, Budget                                           int
	Omitted                                                  []string
	Created, Updated                                         time.Time
}

// ReviewRow is one review.
type ReviewRow struct {
	ID, Reviewer, Verdict, Provenance string
	Findings                          int
	Blocking                          int
	Subjects                          []string
	Created                           time.Time
}

// perWorkLimit bounds each list of a work item's page.
const perWorkLimit = 50

func (r *reader) workItem(ctx context.Context, id string, depth int) (WorkDetail, error) {
	w, err := r.client.WorkItem.Get(ctx, id)
	if ent.IsNotFound(err) {
		return WorkDetail{}, errNotFound
	}
	if err != nil {
		return WorkDetail{}, fmt.Errorf("read work %s: %w", id, err)
	}
	d := WorkDetail{WorkRow: workRow(w), Acceptance: w.AcceptanceCriteria, Risks: w.Risks,
		Questions: w.UnresolvedQuestions, ChangedFiles: w.ChangedFiles}
	one := []WorkRow{d.WorkRow}
	if err := r.markBlocked(ctx, one); err != nil {
		return d, err
	}
	d.WorkRow = one[0]
	if d.Graph, err = r.neighbourhood(ctx, w, depth); err != nil {
		return d, err
	}
	evs, err := r.client.Evidence.Query().Where(evidence.WorkID(id)).
		Order(ent.Desc(evidence.FieldCapturedAt), ent.Desc(evidence.FieldID)).Limit(perWorkLimit+1).
		Select(evidence.FieldKind, evidence.FieldTrust, evidence.FieldSessionID, evidence.FieldSummary,
			evidence.FieldContentHash, evidence.FieldDataBytes, evidence.FieldCapturedAt).All(ctx)
	if err != nil {
		return d, fmt.Errorf("read the evidence of %s: %w", id, err)
	}
	if len(evs) > perWorkLimit {
		evs, d.MoreEvidence = evs[:perWorkLimit], true
	}
	for _, e := range evs {
		d.Evidence = append(d.Evidence, EvidenceRow{ID: e.ID, Kind: string(e.Kind), Trust: string(e.Trust), Session: deref(e.SessionID),
			Summary: e.Summary, Hash: e.ContentHash, Bytes: e.DataBytes, Captured: e.CapturedAt})
	}
	hs, err := r.client.Handoff.Query().Where(handoff.WorkID(id)).
		Order(ent.Desc(handoff.FieldCreatedAt), ent.Desc(handoff.FieldID)).Limit(perWorkLimit + 1).All(ctx)
	if err != nil {
		return d, fmt.Errorf("read the handoffs of %s: %w", id, err)
	}
	if len(hs) > perWorkLimit {
		hs, d.MoreHandoffs = hs[:perWorkLimit], true
	}
	for _, h := range hs {
		row := HandoffRow{ID: h.ID, Source: h.SourceSession, Destination: deref(h.DestinationSession), Objective: h.Objective,
			Status: string(h.Status), Tokens: h.ContextTokens, Budget: h.TokenBudget, Omitted: h.OmittedFields,
			Created: h.CreatedAt, Updated: h.UpdatedAt}
		if h.ContinuationState != nil {
			row.Continuation = string(*h.ContinuationState)
		}
		d.Handoffs = append(d.Handoffs, row)
	}
	rs, err := r.client.Review.Query().Where(review.WorkID(id)).
		Order(ent.Desc(review.FieldCreatedAt), ent.Desc(review.FieldID)).Limit(perWorkLimit + 1).All(ctx)
	if err != nil {
		return d, fmt.Errorf("read the reviews of %s: %w", id, err)
	}
	if len(rs) > perWorkLimit {
		rs, d.MoreReviews = rs[:perWorkLimit], true
	}
	for _, rv := range rs {
		row := ReviewRow{ID: rv.ID, Reviewer: rv.ReviewerSessionID, Verdict: string(rv.Verdict), Provenance: string(rv.Provenance),
			Findings: len(rv.Findings), Subjects: rv.SubjectEvidenceIds, Created: rv.CreatedAt}
		for _, f := range rv.Findings {
			if f.Severity == "blocking" {
				row.Blocking++
			}
		}
		d.Reviews = append(d.Reviews, row)
	}
	cs, err := r.client.Claim.Query().Where(claim.WorkID(id)).
		Order(ent.Desc(claim.FieldAcquiredAt), ent.Desc(claim.FieldID)).Limit(perWorkLimit + 1).All(ctx)
	if err != nil {
		return d, fmt.Errorf("read the claims of %s: %w", id, err)
	}
	if len(cs) > perWorkLimit {
		cs, d.MoreClaims = cs[:perWorkLimit], true
	}
	now := r.clock.Now()
	for _, c := range cs {
		d.Claims = append(d.Claims, claimRow(c, now))
	}
	return d, nil
}

// ---- claims

// ClaimFilter selects active claims.
type ClaimFilter struct {
	Resource string // a substring of the resource
	Session  string
	Cursor   string
	Limit    int
}

func (f ClaimFilter) paging() paging.Filter {
	return paging.F("resource", strings.TrimSpace(f.Resource), "session", strings.TrimSpace(f.Session))
}

// ClaimRow is one claim.
type ClaimRow struct {
	ID, WorkID, Session, Resource, Kind, Mode, Status string
	Acquired, Expires                                 time.Time
	Released                                          *time.Time
	Conflicts                                         []ConflictRow
}

// DOMID is the row's element id.
func (c ClaimRow) DOMID() string { return "c-" + c.ID }

func claimRow(c *ent.Claim, now time.Time) ClaimRow {
	row := ClaimRow{ID: c.ID, WorkID: c.WorkID, Session: c.SessionID, Resource: c.Resource, Kind: string(c.Kind),
		Mode: string(c.Mode), Status: string(c.Status), Acquired: c.AcquiredAt, Expires: c.ExpiresAt, Released: c.ReleasedAt}
	if row.Status == "active" && !now.Before(c.ExpiresAt) {
		row.Status = "expired"
	}
	return row
}

// ClaimPage is a page of active claims ordered by resource, with the
// requests that were refused because of them.
type ClaimPage struct {
	Rows      []ClaimRow
	Next      string
	Conflicts []ConflictRow // the most recent refusals, newest first
	At        time.Time
	// Start and Total: the position of the first row and how many active
	// claims the filter selects, both counted in the store.
	Start, Total int
}

// Position is where the page stands among the active claims.
func (p ClaimPage) Position() Position { return position("claims", p.Start, len(p.Rows), p.Total) }

// claims pages the active claims by (resource, id) on the claims'
// (status, resource, expires_at) index. claims.List pages by acquisition
// time instead, and cannot look for part of a resource, which is what this
// view is for: which resources are held, and by whom.
func (r *reader) claims(ctx context.Context, f ClaimFilter) (ClaimPage, error) {
	limit := clampLimit(f.Limit)
	pf := f.paging()
	keys, err := paging.Decode(cursorClaims, pf, f.Cursor, 2)
	if err != nil {
		return ClaimPage{}, err
	}
	now := r.clock.Now()
	q := r.client.Claim.Query().Where(claim.StatusEQ(claim.StatusActive), claim.ExpiresAtGT(now))
	if s := strings.TrimSpace(f.Resource); s != "" {
		q = q.Where(claim.ResourceContains(s))
	}
	if s := strings.TrimSpace(f.Session); s != "" {
		q = q.Where(claim.SessionID(s))
	}
	page := ClaimPage{At: now, Start: 1}
	if page.Total, err = q.Clone().Count(ctx); err != nil {
		return ClaimPage{}, fmt.Errorf("count active claims: %w", err)
	}
	if keys != nil {
		res, id := keys[0], keys[1]
		after := claim.Or(claim.ResourceGT(res), claim.And(claim.Resource(res), claim.IDGT(id)))
		before, err := q.Clone().Where(claim.Not(after)).Count(ctx)
		if err != nil {
			return ClaimPage{}, fmt.Errorf("count the active claims before the page: %w", err)
		}
		page.Start = before + 1
		q = q.Where(after)
	}
	list, err := q.Order(ent.Asc(claim.FieldResource), ent.Asc(claim.FieldID)).Limit(limit + 1).All(ctx)
	if err != nil {
		return ClaimPage{}, fmt.Errorf("read active claims: %w", err)
	}
	if len(list) > limit {
		list = list[:limit]
		last := list[len(list)-1]
		page.Next = paging.Encode(cursorClaims, pf, last.Resource, last.ID)
	}
	ids := make([]string, len(list))
	for i, c := range list {
		page.Rows = append(page.Rows, claimRow(c, now))
		ids[i] = c.ID
	}
	byHeld, err := r.conflictsOf(ctx, ids)
	if err != nil {
		return page, err
	}
	for i := range page.Rows {
		page.Rows[i].Conflicts = byHeld[page.Rows[i].ID]
	}
	page.Conflicts, err = r.recentConflicts(ctx, maxRecentConflicts)
	return page, err
}
