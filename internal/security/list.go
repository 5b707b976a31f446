package security

import (
	"fmt"
	"path"
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
	return listFiles(systemOpener(), root, rel)
}

func listFiles(op opener, root, rel string) ([]string, error) {
	if rel == "" {
		rel = "."
	}
	dir, _, prefix, err := openInside(op, root, rel, true)
	if err != nil {
		return nil, err
	}
	defer dir.Close()
	entries, err := dir.ReadDir(-1)
	if err != nil {
		return nil, fmt.Errorf("list %s: %w", cleanSlash(rel), err)
	}
	out := make([]string, 0, len(entries))
	for _, e := range entries {
		if !e.Type().IsRegular() || IsProtectedName(e.Name()) {
			continue
		}
		p := path.Join(prefix, e.Name())
		if IsProtectedPath(p) {
			continue
		}
		out = append(out, p)
	}
	sort.Strings(out)
	if len(out) > MaxListEntries {
		out = out[:MaxListEntries]
	}
	return out, nil
}
