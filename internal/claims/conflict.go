package claims

import (
	"context"
	"fmt"
	"sort"
	"time"

	"entgo.io/ent/dialect/sql"

	"github.com/agent-interop/runtime/ent"
	"github.com/agent-interop/runtime/ent/claim"
	"github.com/agent-interop/runtime/ent/predicate"
)

// OverlapQuery asks for the active claims that would conflict with a
// claim on Resource: claims of other sessions than ExcludeSession that
// overlap it (the package rules), exclusive ones only when ExclusiveOnly
// is set (what a shared_read request conflicts with; without it, what an
// exclusive request conflicts with).
type OverlapQuery struct {
	Kind     Kind
	Resource string
	// ExcludeSession's own claims never conflict ("" excludes none).
	ExcludeSession string
	ExclusiveOnly  bool
	// Limit bounds the answer (0 means 1).
	Limit int
}

// Overlapping returns up to q.Limit active claims that conflict with q,
// oldest acquisition first (the order in which Acquire names a winner).
// It is the lookup Acquire runs inside its write transaction, and the one
// the permission layer asks before allowing an edit of a path ("is it
// held exclusively by another session?": Kind file, ExclusiveOnly).
//
// The lookup is indexed and does not grow with the number of claims: the
// resource and its ancestors are exact lookups and the paths below it one
// range scan of the (status, resource, expires_at) index, plus the active
// workspace claims through (status, kind, expires_at). Only a workspace
// request (which overlaps everything) reads every active claim.
func (s *Service) Overlapping(ctx context.Context, q OverlapQuery) ([]Claim, error) {
	q.Resource = normalizeResource(q.Kind, q.Resource)
	if q.Resource == "" {
		return nil, invalidf("resource must not be blank")
	}
	return overlapping(ctx, s.client, q, s.now())
}

// scanCap bounds the conflicting rows one lookup reads unordered.
const scanCap = 1000

// overlapping runs the lookup on c (a client or a transaction's client).
func overlapping(ctx context.Context, c *ent.Client, q OverlapQuery, now time.Time) ([]Claim, error) {
	limit := max(q.Limit, 1)
	base := []predicate.Claim{claim.StatusEQ(claim.StatusActive), claim.ExpiresAtGT(now)}
	if q.ExcludeSession != "" {
		base = append(base, claim.SessionIDNEQ(q.ExcludeSession))
	}
	if q.ExclusiveOnly {
		base = append(base, claim.ModeEQ(claim.ModeExclusive))
	}
	var lookups [][]predicate.Claim
	with := func(ps ...predicate.Claim) {
		lookups = append(lookups, append(append([]predicate.Claim{}, base...), ps...))
	}
	switch q.Kind {
	case KindWorkspace:
		with()
	// The resource lookups do not filter on kind in SQL: a kind condition
	// tempts the planner to walk every active claim of that kind instead
	// of the resource index. The rule below drops the few rows of another
	// kind that share a name.
	case KindInterface:
		with(claim.KindEQ(claim.KindWorkspace))
		with(claim.ResourceEQ(q.Resource))
	default:
		with(claim.KindEQ(claim.KindWorkspace))
		exact, ranges := pathSpans(q.Resource)
		with(claim.ResourceIn(exact...))
		for _, r := range ranges {
			var ps []predicate.Claim
			if q.Resource == "." {
				// "." holds relative paths but not ".." or what is below it.
				ps = append(ps, claim.Not(claim.Or(claim.ResourceEQ(".."),
					claim.And(claim.ResourceGTE("../"), claim.ResourceLT("..0")))))
			}
			switch {
			case r.loOpen:
				ps = append(ps, claim.ResourceGT(r.lo))
			case r.lo != "":
				ps = append(ps, claim.ResourceGTE(r.lo))
			}
			if r.hi != "" {
				ps = append(ps, claim.ResourceLT(r.hi))
			}
			with(ps...)
		}
	}
	req := Claim{Kind: q.Kind, Resource: q.Resource, SessionID: q.ExcludeSession, Mode: ModeExclusive}
	if q.ExclusiveOnly {
		req.Mode = ModeSharedRead
	}
	var found []Claim
	seen := map[string]bool{}
	for _, ps := range lookups {
		// Unordered, so the planner searches the resource (or kind) index
		// instead of walking the acquisition order; every row found is a
		// conflict, so there are few. Only a lookup with more than
		// scanCap conflicts asks the database for the oldest ones.
		rows, err := c.Claim.Query().Where(ps...).Limit(scanCap + 1).All(ctx)
		if err == nil && len(rows) > scanCap {
			rows, err = c.Claim.Query().Where(ps...).Order(claim.ByAcquiredAt(), claim.ByID()).Limit(limit).All(ctx)
		}
		if err != nil {
			return nil, fmt.Errorf("read active claims: %w", err)
		}
		for _, r := range rows {
			v := view(r, now)
			// The rule decides exactly (e.g. "." does not hold "../x"), and
			// the clock is checked again so it does not depend on how the
			// driver compares stored times.
			if seen[v.ID] || v.Status != StatusActive || !conflicts(req, v) {
				continue
			}
			seen[v.ID] = true
			found = append(found, v)
		}
	}
	sort.Slice(found, func(i, j int) bool {
		if !found[i].AcquiredAt.Equal(found[j].AcquiredAt) {
			return found[i].AcquiredAt.Before(found[j].AcquiredAt)
		}
		return found[i].ID < found[j].ID
	})
	if len(found) > limit {
		found = found[:limit]
	}
	return found, nil
}

// keysetOlder is the newest-first keyset condition (acquired_at, id) <
// (at, id) as one row-value comparison over an index.
func keysetOlder(at time.Time, id string) predicate.Claim {
	return func(s *sql.Selector) {
		s.Where(sql.CompositeLT([]string{s.C(claim.FieldAcquiredAt), s.C(claim.FieldID)}, at, id))
	}
}
