package claims

import (
	"path"
	"strings"

	"github.com/agent-interop/runtime/ent/claim"
	"github.com/agent-interop/runtime/ent/predicate"
)

// normalizeResource trims resource and, for file and directory claims,
// cleans it as a slash-separated path: backslashes become slashes, repeated
// slashes, "." and ".." elements and a trailing slash are removed. Interface
// names and workspace resources are only trimmed.
func normalizeResource(kind Kind, resource string) string {
	r := strings.TrimSpace(resource)
	switch kind {
	case KindFile, KindDirectory:
		if r == "" {
			return r
		}
		return path.Clean(strings.ReplaceAll(r, `\`, "/"))
	default:
		return r
	}
}

// overlaps reports whether two normalized claim targets cover a common
// resource.
func overlaps(aKind Kind, aRes string, bKind Kind, bRes string) bool {
	switch {
	case aKind == KindWorkspace || bKind == KindWorkspace:
		return true
	case aKind == KindInterface || bKind == KindInterface:
		return aKind == bKind && aRes == bRes
	default:
		return pathOverlap(aRes, bRes)
	}
}

// pathOverlap reports whether a and b (cleaned paths) are equal or one
// contains the other at a "/" boundary. "/" contains every absolute path;
// "." contains every relative path that does not climb out with "..".
func pathOverlap(a, b string) bool {
	return a == b || within(a, b) || within(b, a)
}

// within reports whether child lies strictly below dir.
func within(child, dir string) bool {
	switch dir {
	case "/":
		return strings.HasPrefix(child, "/") && child != "/"
	case ".":
		return !strings.HasPrefix(child, "/") && child != "." && child != ".." && !strings.HasPrefix(child, "../")
	default:
		return strings.HasPrefix(child, dir+"/")
	}
}

// conflicts reports whether a requested claim conflicts with an existing,
// still active one.
func conflicts(req Claim, held Claim) bool {
	if req.SessionID == held.SessionID {
		return false
	}
	if req.Mode == ModeSharedRead && held.Mode == ModeSharedRead {
		return false
	}
	return overlaps(req.Kind, req.Resource, held.Kind, held.Resource)
}

// candidates narrows the claims that can overlap req to a superset the
// database finds with few, cheap comparisons: every workspace claim, plus
// claims on the same name, on the path's ancestors or (by prefix) below
// it. Kinds and modes are left to conflicts, which decides exactly; a short
// query matters because parsing dominates a small SQLite query. A nil
// predicate means every claim is a candidate.
func candidates(req Claim) predicate.Claim {
	workspace := claim.KindEQ(claim.KindWorkspace)
	switch {
	case req.Kind == KindWorkspace:
		return nil
	case req.Kind == KindInterface:
		return claim.Or(workspace, claim.ResourceEQ(req.Resource))
	case req.Resource == "." || req.Resource == "/":
		return nil
	}
	return claim.Or(workspace,
		claim.ResourceIn(append(ancestors(req.Resource), req.Resource)...),
		claim.ResourceHasPrefix(req.Resource+"/"))
}

// ancestors lists the directories above a cleaned path, up to "." or "/".
func ancestors(p string) []string {
	var out []string
	for d := path.Dir(p); ; d = path.Dir(d) {
		out = append(out, d)
		if d == "." || d == "/" {
			return out
		}
	}
}
