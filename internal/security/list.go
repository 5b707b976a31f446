package security

import (
	"fmt"
	"os"
	"path/filepath"
	"sort"
)

// MaxListEntries bounds one shallow listing.
const MaxListEntries = 5000

// ListFiles returns the regular files directly inside the directory rel
// (default ".") of root, as slash-separated root-relative paths, sorted.
// Directories, symlinks, devices, FIFOs and sockets are left out, and so are
// protected names. The directory itself is subject to the same containment
// and deny-list rules as a read. At most [MaxListEntries] names are returned.
func ListFiles(root, rel string) ([]string, error) {
	if rel == "" {
		rel = "."
	}
	rr, dir, err := resolveInside(root, rel)
	if err != nil {
		return nil, err
	}
	st, err := os.Stat(dir)
	if err != nil {
		return nil, ErrNotFound
	}
	if !st.IsDir() {
		return nil, ErrNotDir
	}
	entries, err := os.ReadDir(dir)
	if err != nil {
		return nil, fmt.Errorf("list %s: %w", cleanSlash(rel), err)
	}
	prefix, err := filepath.Rel(rr, dir)
	if err != nil {
		return nil, ErrEscapes
	}
	out := make([]string, 0, len(entries))
	for _, e := range entries {
		if !e.Type().IsRegular() || IsProtectedName(e.Name()) {
			continue
		}
		p := filepath.ToSlash(filepath.Join(prefix, e.Name()))
		if IsProtectedPath(p) {
			continue
		}
		out = append(out, p)
		if len(out) == MaxListEntries {
			break
		}
	}
	sort.Strings(out)
	return out, nil
}
