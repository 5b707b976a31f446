package workflow

import (
	"context"
	"sort"
	"strings"
	"time"

	"github.com/agent-interop/runtime/ent"
	"github.com/agent-interop/runtime/ent/claim"
	"github.com/agent-interop/runtime/ent/evidence"
	"github.com/agent-interop/runtime/ent/handoff"
	"github.com/agent-interop/runtime/ent/workitem"
	"github.com/agent-interop/runtime/internal/store"
)

// Graph is get_work_graph's answer: every record plus the derived sessions
// and edges (rules in docs/work-graph.md).
type Graph struct {
	Sessions              []GraphSession  `json:"sessions"`
	Works                 []Work          `json:"works"`
	Evidence              []EvidenceMeta  `json:"evidence"`
	Handoffs              []Handoff       `json:"handoffs"`
	Reviews               []Review        `json:"reviews"`
	Claims                []GraphClaim    `json:"claims"`
	Edges                 []Edge          `json:"edges"`
	StateRecoveryRequired *store.Recovery `json:"stateRecoveryRequired"`
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
// claim IDs). Ref names the record the edge was derived from when that is
// not one of its ends.
type Edge struct {
	From string `json:"from"`
	To   string `json:"to"`
	Kind string `json:"kind"`
	Ref  string `json:"ref,omitempty"`
}

// graphRecords is one consistent snapshot of the store.
type graphRecords struct {
	works    []*ent.WorkItem
	evidence []*ent.Evidence
	handoffs []*ent.Handoff
	reviews  []*ent.Review
	claims   []*ent.Claim
}

// WorkGraph returns the whole coordination graph from one read snapshot,
// with the store's recovery record (null when none).
func (s *Service) WorkGraph(ctx context.Context) (Graph, error) {
	var r graphRecords
	err := s.st.Read(ctx, func(tx *ent.Tx) error {
		var err error
		if r.works, err = withWorkEdges(tx.WorkItem.Query()).Order(workNewestFirst()...).All(ctx); err != nil {
			return wrapStore("read works", err)
		}
		if r.evidence, err = tx.Evidence.Query().Select(evidenceMetaFields()...).Order(evidenceNewestFirst()...).All(ctx); err != nil {
			return wrapStore("read evidence", err)
		}
		if r.handoffs, err = tx.Handoff.Query().Order(handoffNewestFirst()...).All(ctx); err != nil {
			return wrapStore("read handoffs", err)
		}
		if r.reviews, err = tx.Review.Query().Order(reviewNewestFirst()...).All(ctx); err != nil {
			return wrapStore("read reviews", err)
		}
		if r.claims, err = tx.Claim.Query().Order(claim.ByAcquiredAt(), claim.ByID()).All(ctx); err != nil {
			return wrapStore("read claims", err)
		}
		return nil
	})
	if err != nil {
		return Graph{}, err
	}
	rec, err := s.st.Recovery(ctx)
	if err != nil {
		return Graph{}, err
	}
	g := Graph{
		Works:                 make([]Work, len(r.works)),
		Evidence:              make([]EvidenceMeta, len(r.evidence)),
		Handoffs:              make([]Handoff, len(r.handoffs)),
		Reviews:               make([]Review, len(r.reviews)),
		Claims:                make([]GraphClaim, len(r.claims)),
		StateRecoveryRequired: rec,
	}
	for i, w := range r.works {
		g.Works[i] = toWork(w)
	}
	for i, e := range r.evidence {
		g.Evidence[i] = toEvidenceMeta(e)
	}
	for i, h := range r.handoffs {
		g.Handoffs[i] = toHandoff(h)
	}
	for i, rv := range r.reviews {
		g.Reviews[i] = toReview(rv)
	}
	now := s.now()
	for i, c := range r.claims {
		g.Claims[i] = toGraphClaim(c, now)
	}
	g.Sessions = s.graphSessions(ctx, &r)
	g.Edges = graphEdges(&r, g.Sessions, g.Claims)
	return g, nil
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

// graphSessions collects every session ID a record names, sorted, enriched
// with cwd and parent from the provider layer when it knows the session.
func (s *Service) graphSessions(ctx context.Context, r *graphRecords) []GraphSession {
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
	out := make([]GraphSession, 0, len(ids))
	extra := map[string]bool{}
	for id := range ids {
		gs := GraphSession{ID: id}
		if p, n, ok := strings.Cut(id, ":"); ok && p != "" && n != "" {
			gs.Provider, gs.NativeID = p, n
			if s.sessions != nil {
				if info, found, err := s.sessions.LookupSession(ctx, p, n); err == nil && found {
					gs.Cwd = info.Cwd
					if info.ParentNativeID != "" {
						gs.ParentSession = p + ":" + info.ParentNativeID
						if !ids[gs.ParentSession] {
							extra[gs.ParentSession] = true
						}
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
			if status[d.ID] != workitem.StatusAccepted {
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
		list := byWork[w]
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
