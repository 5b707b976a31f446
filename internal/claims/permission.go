package claims

import (
	"context"
	"fmt"
	"path/filepath"
	"runtime"
	"strings"
	"time"

	"github.com/agent-interop/runtime/ent/claim"
)

// EditConflict is an active exclusive claim of another session that covers
// a file a permission request would edit.
type EditConflict struct {
	ClaimID   string    `json:"claimId"`
	WorkID    string    `json:"workId"`
	Holder    string    `json:"holder"`
	Resource  string    `json:"resource"`
	Kind      Kind      `json:"kind"`
	ExpiresAt time.Time `json:"expiresAt"`
	Path      string    `json:"path"`
}

// EditConflicts returns the active exclusive claims held by sessions other
// than sessionID ("provider:nativeId") that cover one of paths, which that
// session asks to edit. Paths are absolute or relative to workspace (the
// session's working directory). A claim resource may be absolute or
// relative to the work's workspace; both sides are compared after
// resolving symlinks, so /tmp/x and /private/tmp/x, or a symlinked
// checkout, are the same file. The path overlap rule is the one claims use
// among themselves.
//
// The claims compared are found by index, not by reading every active
// claim: the relative claims (and workspace claims) that overlap a path's
// workspace-relative form, through the overlap lookup of Acquire; and the
// absolute exclusive claims (a key range of the resource index), whose
// symlinks must be resolved before they can be compared.
func (s *Service) EditConflicts(ctx context.Context, sessionID, workspace string, paths []string) ([]EditConflict, error) {
	if len(paths) == 0 {
		return nil, nil
	}
	now := s.now()
	absolute, err := s.absoluteExclusive(ctx, sessionID, now)
	if err != nil {
		return nil, err
	}
	ws := resolveExisting(workspace)
	var out []EditConflict
	for _, p := range paths {
		abs, rel := editTarget(ws, p)
		held := absolute
		if rel != "" {
			near, err := overlapping(ctx, s.client, OverlapQuery{Kind: KindFile, Resource: normalizeResource(KindFile, rel),
				ExcludeSession: sessionID, ExclusiveOnly: true, Limit: scanCap}, now)
			if err != nil {
				return nil, err
			}
			held = append(append([]Claim(nil), absolute...), near...)
		}
		seen := map[string]bool{}
		for _, c := range held {
			if seen[c.ID] || c.SessionID == sessionID || c.Mode != ModeExclusive || c.Kind == KindInterface {
				continue
			}
			seen[c.ID] = true
			if claimCovers(c, abs, rel) {
				out = append(out, EditConflict{ClaimID: c.ID, WorkID: c.WorkID, Holder: c.SessionID, Resource: c.Resource, Kind: c.Kind, ExpiresAt: c.ExpiresAt, Path: p})
			}
		}
	}
	return out, nil
}

// absoluteExclusive reads the active exclusive claims of other sessions on
// absolute resources: the key range of "/..." in the resource index (and,
// on Windows, drive paths).
func (s *Service) absoluteExclusive(ctx context.Context, sessionID string, now time.Time) ([]Claim, error) {
	abs := claim.And(claim.ResourceGTE("/"), claim.ResourceLT("0"))
	if runtime.GOOS == "windows" {
		abs = claim.Or(abs, claim.ResourceContains(":/"))
	}
	q := s.client.Claim.Query().Where(claim.StatusEQ(claim.StatusActive), claim.ExpiresAtGT(now), abs, claim.ModeEQ(claim.ModeExclusive))
	if sessionID != "" {
		q = q.Where(claim.SessionIDNEQ(sessionID))
	}
	rows, err := q.All(ctx)
	if err != nil {
		return nil, fmt.Errorf("read absolute claims: %w", err)
	}
	out := make([]Claim, 0, len(rows))
	for _, r := range rows {
		if v := view(r, now); v.Status == StatusActive {
			out = append(out, v)
		}
	}
	return out, nil
}

// editTarget resolves a requested path: its absolute resolved form and,
// when it lies in the workspace, its slash path relative to it ("" when it
// does not).
func editTarget(ws, p string) (abs, rel string) {
	if !filepath.IsAbs(p) && ws != "" {
		p = filepath.Join(ws, p)
	}
	abs = resolveExisting(p)
	if ws != "" {
		if r, err := filepath.Rel(ws, abs); err == nil && r != ".." && !strings.HasPrefix(r, ".."+string(filepath.Separator)) {
			rel = filepath.ToSlash(r)
		}
	}
	return filepath.ToSlash(abs), rel
}

// claimCovers decides with the claims' own overlap rule, on the absolute
// form for an absolute resource and on the workspace-relative form for a
// relative one. A workspace claim covers its (absolute) directory, or, when
// it names no absolute path, every file of the session's workspace.
func claimCovers(c Claim, abs, rel string) bool {
	res := c.Resource
	if c.Kind == KindWorkspace {
		if filepath.IsAbs(res) {
			return overlaps(KindDirectory, filepath.ToSlash(resolveExisting(res)), KindFile, abs)
		}
		return rel != ""
	}
	if filepath.IsAbs(res) {
		return overlaps(c.Kind, normalizeResource(c.Kind, filepath.ToSlash(resolveExisting(res))), KindFile, abs)
	}
	return rel != "" && overlaps(c.Kind, res, KindFile, normalizeResource(KindFile, rel))
}

// resolveExisting returns p cleaned with the symlinks of its deepest
// existing ancestor resolved (a file about to be created does not exist).
func resolveExisting(p string) string {
	if p == "" {
		return ""
	}
	p = filepath.Clean(p)
	var rest []string
	for cur := p; ; {
		if real, err := filepath.EvalSymlinks(cur); err == nil {
			return filepath.Join(append([]string{real}, rest...)...)
		}
		parent := filepath.Dir(cur)
		if parent == cur {
			return p
		}
		rest = append([]string{filepath.Base(cur)}, rest...)
		cur = parent
	}
}
