package claims

import (
	"path"
	"strings"
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

// span is a key range of the resource index: lo (exclusive when loOpen)
// up to hi (exclusive; "" for no bound).
type span struct {
	lo     string
	loOpen bool
	hi     string
}

// pathSpans are the index lookups that find every path claim overlapping
// a path resource p: exact matches of p and of its ancestors that contain
// it, and key ranges holding exactly the paths below p. Byte order makes
// [p+"/", p+"0") the paths below p ('0' follows '/'); "/" holds ("/", "0");
// "." holds every relative path: everything before "/" and from "0" on
// (parent paths are filtered out by the rule).
func pathSpans(p string) (exact []string, ranges []span) {
	exact = []string{p}
	for _, a := range ancestors(p) {
		if a != p && within(p, a) {
			exact = append(exact, a)
		}
	}
	switch p {
	case "/":
		ranges = []span{{lo: "/", loOpen: true, hi: "0"}}
	case ".":
		ranges = []span{{hi: "/"}, {lo: "0"}}
	default:
		ranges = []span{{lo: p + "/", hi: p + "0"}}
	}
	return exact, ranges
}
