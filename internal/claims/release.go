package claims

import (
	"context"
	"fmt"
	"strings"
	"time"

	"entgo.io/ent/dialect/sql"

	"github.com/agent-interop/runtime/catalogs/limits"
	"github.com/agent-interop/runtime/ent"
	"github.com/agent-interop/runtime/ent/claim"
	"github.com/agent-interop/runtime/internal/paging"
)

// ReleaseInput is the input of Release. An empty SessionID releases the
// claim whoever holds it.
type ReleaseInput struct {
	ClaimID   string
	SessionID string
}

// Release marks a claim released. A session other than the owner is
// refused with an *OwnershipError. Releasing an already released claim
// changes nothing and returns it as it is; an expired claim is marked
// released like an active one.
func (s *Service) Release(ctx context.Context, in ReleaseInput) (Claim, error) {
	id := strings.TrimSpace(in.ClaimID)
	caller := strings.TrimSpace(in.SessionID)
	if id == "" {
		return Claim{}, invalidf("claimId must not be blank")
	}
	var out Claim
	err := s.tx(ctx, func(tx *ent.Tx) error {
		now := s.now()
		row, err := tx.Claim.Get(ctx, id)
		if ent.IsNotFound(err) {
			return &NotFoundError{What: "claim", ID: id}
		}
		if err != nil {
			return fmt.Errorf("read claim %s: %w", id, err)
		}
		if caller != "" && caller != row.SessionID {
			return &OwnershipError{ClaimID: id, Owner: row.SessionID, Caller: caller}
		}
		if row.Status == claim.StatusReleased {
			out = view(row, now)
			return nil
		}
		row, err = row.Update().
			SetStatus(claim.StatusReleased).
			SetReleasedAt(now).
			Save(ctx)
		if err != nil {
			return fmt.Errorf("release claim %s: %w", id, err)
		}
		out = view(row, now)
		return nil
	})
	if err != nil {
		return Claim{}, err
	}
	return out, nil
}

// ListInput filters and pages List.
type ListInput struct {
	// WorkID keeps only the claims of one work item.
	WorkID string
	// Session keeps only the claims of one session.
	Session string
	// ActiveOnly keeps only claims that are active now (not released, not
	// expired).
	ActiveOnly bool
	// Limit is the page size (0 means DefaultListLimit, at most
	// MaxListLimit).
	Limit int64
	// Cursor is a nextCursor of an earlier page of the same filter.
	Cursor string
}

// Page sizes of List.
const (
	DefaultListLimit = limits.ListClaimsLimitDefault
	MaxListLimit     = limits.ListClaimsLimitMax
)

const toolList = "list_claims"

// Page is one page of List: claims, newest acquisition first, and the
// cursor of the next page while more exist.
type Page struct {
	Claims     []Claim `json:"claims"`
	NextCursor string  `json:"nextCursor,omitempty"`

	filter paging.Filter
}

// PageLen implements paging.Cuttable.
func (p Page) PageLen() int { return len(p.Claims) }

// CutPage implements paging.Cuttable.
func (p Page) CutPage(n int) any {
	last := p.Claims[n-1]
	p.Claims = p.Claims[:n]
	p.NextCursor = listCursor(p.filter, last)
	return p
}

func listCursor(f paging.Filter, c Claim) string {
	return paging.Encode(toolList, f, c.AcquiredAt.Format(time.RFC3339Nano), c.ID)
}

// List returns one page of claims, newest acquisition first, keyset-paged
// on (acquired_at, id) over an index per filter. An active claim's lease
// is at most MaxTTLSeconds, so ActiveOnly reads only the claims acquired
// within that window.
func (s *Service) List(ctx context.Context, in ListInput) (Page, error) {
	limit, err := paging.Limit(toolList, in.Limit, DefaultListLimit, MaxListLimit)
	if err != nil {
		return Page{}, err
	}
	work, session := strings.TrimSpace(in.WorkID), strings.TrimSpace(in.Session)
	active := "false"
	if in.ActiveOnly {
		active = "true"
	}
	f := paging.F("workId", work, "session", session, "activeOnly", active)
	keys, err := paging.Decode(toolList, f, in.Cursor, 2)
	if err != nil {
		return Page{}, err
	}
	now := s.now()
	q := s.client.Claim.Query()
	if work != "" {
		q = q.Where(claim.WorkID(work))
	}
	if session != "" {
		q = q.Where(claim.SessionID(session))
	}
	if in.ActiveOnly {
		q = q.Where(claim.StatusEQ(claim.StatusActive), claim.ExpiresAtGT(now),
			claim.AcquiredAtGT(now.Add(-MaxTTLSeconds*time.Second)))
	}
	if keys != nil {
		at, err := time.Parse(time.RFC3339Nano, keys[0])
		if err != nil || keys[1] == "" {
			return Page{}, paging.Invalid(toolList, "cursor", "is malformed; pass nextCursor back unchanged or omit cursor")
		}
		q = q.Where(keysetOlder(at, keys[1]))
	}
	rows, err := q.Order(claim.ByAcquiredAt(sql.OrderDesc()), claim.ByID(sql.OrderDesc())).Limit(limit + 1).All(ctx)
	if err != nil {
		return Page{}, fmt.Errorf("list claims: %w", err)
	}
	out := Page{Claims: make([]Claim, 0, min(len(rows), limit)), filter: f}
	for _, r := range rows[:min(len(rows), limit)] {
		out.Claims = append(out.Claims, view(r, now))
	}
	if len(rows) > limit {
		out.NextCursor = listCursor(f, out.Claims[len(out.Claims)-1])
	}
	return out, nil
}

var _ paging.Cuttable = Page{}
