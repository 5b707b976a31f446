package security

import (
	"fmt"
	"io"
	"path"
	"sort"
)

// MaxListEntries bounds one shallow listing.
const MaxListEntries = 5000

// maxListSniffBytes bounds what one listing reads to recognise key
// material by content; past it the remaining files are listed unread
// (a read still refuses them).
const maxListSniffBytes = 64 << 20

// ListFiles returns the regular files directly inside the directory rel
// (default ".") of root, as slash-separated root-relative paths, sorted.
// Directories, symlinks, devices, FIFOs and sockets are left out, and so are
// protected names and, like a read refuses them, files whose content is key
// material ([KeyMaterial]; each file of at most [MaxFileBytes] is read, up
// to 64 MiB per listing). The directory itself is subject to the same containment
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
	budget := int64(maxListSniffBytes)
	kept := out[:0]
	for _, p := range out {
		if budget > 0 && keyMaterialFile(op, root, p, &budget) {
			continue
		}
		kept = append(kept, p)
	}
	out = kept
	if len(out) > MaxListEntries {
		out = out[:MaxListEntries]
	}
	return out, nil
}

// keyMaterialFile reports whether the file p inside root, opened as a read
// opens it, is key material by its content. A file a read would refuse for
// another reason (too large, gone) is not read; budget is what the listing
// may still read.
func keyMaterialFile(op opener, root, p string, budget *int64) bool {
	f, _, _, err := openInside(op, root, p, false)
	if err != nil {
		return false
	}
	defer f.Close()
	fi, err := f.Stat()
	if err != nil || !fi.Mode().IsRegular() || fi.Size() > MaxFileBytes {
		return false
	}
	data, err := io.ReadAll(io.LimitReader(f, MaxFileBytes+1))
	*budget -= int64(len(data))
	if err != nil {
		return false
	}
	_, key := KeyMaterial(data)
	return key
}
