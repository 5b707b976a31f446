package security

import (
	"context"
	"errors"
	"fmt"
	"path/filepath"
	"sort"
	"strings"
	"sync"
)

// EnvProjectRoots is the environment variable holding extra approved roots
// as an OS path list.
const EnvProjectRoots = "INTEROP_PROJECT_ROOTS"

// ErrNotApproved is returned for a path outside every approved root.
var ErrNotApproved = errors.New("Path is outside every approved project root")

// LookupEnv is the signature of os.LookupEnv, injected so that nothing reads
// the process environment behind the caller's back.
type LookupEnv func(key string) (string, bool)

// Roots is the set of approved roots: the workspaces the runtime knows
// (Freebuff projects, provider session working directories), added with
// [Roots.Add], plus the configured INTEROP_PROJECT_ROOTS list. It is safe for
// concurrent use.
type Roots struct {
	mu         sync.RWMutex
	configured []string
	ignored    []string
	known      map[string]struct{}
	workspaces WorkspaceLookup
}

// WorkspaceLookup reports whether dir is the working directory of a
// provider session the runtime has seen (in any process sharing the store).
type WorkspaceLookup func(ctx context.Context, dir string) (bool, error)

// SetWorkspaceLookup makes the working directories of known sessions
// approved roots too. It is set once while the runtime is assembled.
func (r *Roots) SetWorkspaceLookup(fn WorkspaceLookup) {
	r.mu.Lock()
	defer r.mu.Unlock()
	r.workspaces = fn
}

// Directory returns the resolved form of the absolute directory dir when it
// is an approved root or lies inside one (configured in
// INTEROP_PROJECT_ROOTS, added, or the working directory of a known
// session), for use as the root of reads and listings. Containment is
// decided on resolved paths: a symlink inside a root that leads out is not
// inside it.
func (r *Roots) Directory(ctx context.Context, dir string) (string, error) {
	if !filepath.IsAbs(dir) || strings.ContainsRune(dir, 0) {
		return "", ErrNotApproved
	}
	clean := filepath.Clean(dir)
	real, err := filepath.EvalSymlinks(clean)
	if err != nil {
		return "", ErrNotApproved
	}
	for _, candidate := range r.List() {
		rc, err := filepath.EvalSymlinks(candidate)
		if err != nil {
			continue
		}
		if _, err := insideRoot(rc, real); err == nil {
			return real, nil
		}
	}
	r.mu.RLock()
	lookup := r.workspaces
	r.mu.RUnlock()
	if lookup != nil {
		for _, form := range []string{clean, real} {
			ok, err := lookup(ctx, form)
			if err != nil {
				return "", fmt.Errorf("look up known session workspaces: %w", err)
			}
			if ok {
				if form != string(filepath.Separator) {
					_ = r.Add(clean)
				}
				return real, nil
			}
		}
	}
	return "", ErrNotApproved
}

// NewRoots builds the approved roots from lookup (normally os.LookupEnv).
// Relative entries and the file-system root are ignored and reported by
// [Roots.Ignored].
func NewRoots(lookup LookupEnv) *Roots {
	r := &Roots{known: map[string]struct{}{}}
	if lookup == nil {
		return r
	}
	raw, ok := lookup(EnvProjectRoots)
	if !ok {
		return r
	}
	for _, p := range filepath.SplitList(raw) {
		p = strings.TrimSpace(p)
		if p == "" {
			continue
		}
		if !filepath.IsAbs(p) || filepath.Clean(p) == string(filepath.Separator) {
			r.ignored = append(r.ignored, p)
			continue
		}
		r.configured = append(r.configured, filepath.Clean(p))
	}
	return r
}

// Add approves known workspaces. Relative paths and the file-system root are
// refused.
func (r *Roots) Add(paths ...string) error {
	r.mu.Lock()
	defer r.mu.Unlock()
	var errs []error
	for _, p := range paths {
		if !filepath.IsAbs(p) || filepath.Clean(p) == string(filepath.Separator) {
			errs = append(errs, fmt.Errorf("approve root %q: not an absolute project directory", p))
			continue
		}
		r.known[filepath.Clean(p)] = struct{}{}
	}
	return errors.Join(errs...)
}

// List returns every approved root (configured and known), cleaned, sorted
// and de-duplicated.
func (r *Roots) List() []string {
	r.mu.RLock()
	defer r.mu.RUnlock()
	seen := map[string]struct{}{}
	out := []string{}
	for _, p := range r.configured {
		if _, ok := seen[p]; !ok {
			seen[p] = struct{}{}
			out = append(out, p)
		}
	}
	for p := range r.known {
		if _, ok := seen[p]; !ok {
			seen[p] = struct{}{}
			out = append(out, p)
		}
	}
	sort.Strings(out)
	return out
}

// Ignored returns configured entries that were not usable roots.
func (r *Roots) Ignored() []string {
	r.mu.RLock()
	defer r.mu.RUnlock()
	return append([]string(nil), r.ignored...)
}

// Locate returns the approved root that contains the absolute path abs and
// abs relative to it. Containment is decided on resolved paths (symlinks
// followed) for the root and for the deepest existing ancestor of abs; the
// most specific root wins.
func (r *Roots) Locate(abs string) (root, rel string, err error) {
	if !filepath.IsAbs(abs) || strings.ContainsRune(abs, 0) {
		return "", "", ErrEscapes
	}
	clean := filepath.Clean(abs)
	bestLen := -1
	for _, candidate := range r.List() {
		rr, err := filepath.EvalSymlinks(candidate)
		if err != nil {
			continue
		}
		for _, base := range []string{candidate, rr} {
			relp, err := filepath.Rel(base, clean)
			if err != nil || relp == ".." || strings.HasPrefix(relp, ".."+string(filepath.Separator)) {
				continue
			}
			if len(base) > bestLen {
				bestLen, root, rel = len(base), candidate, relp
			}
		}
	}
	if bestLen < 0 {
		return "", "", ErrNotApproved
	}
	rel = filepath.ToSlash(rel)
	if strings.HasSuffix(abs, string(filepath.Separator)) || strings.HasSuffix(abs, "/") {
		rel += "/" // keep "file/" from naming the file
	}
	return root, rel, nil
}

// ReadFile reads the absolute path abs (as ACP fs/read_text_file asks) when it
// lies inside an approved root, with every rule of [ReadFile], and returns the
// redacted text.
func (r *Roots) ReadFile(abs string) (string, error) {
	root, rel, err := r.Locate(abs)
	if err != nil {
		return "", err
	}
	return ReadFile(root, rel)
}

// ReadText is [Roots.ReadFile] without redaction.
func (r *Roots) ReadText(abs string) (string, error) {
	root, rel, err := r.Locate(abs)
	if err != nil {
		return "", err
	}
	return ReadText(root, rel)
}
