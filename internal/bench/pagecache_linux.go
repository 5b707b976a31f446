//go:build linux

package bench

import (
	"fmt"
	"os"

	"golang.org/x/sys/unix"
)

// dropPageCache writes path's pages to disk and asks the kernel to drop
// them from the page cache (posix_fadvise DONTNEED on this one file), so
// the first spawn reads the binary back from disk as a process of an
// installed binary does. A binary the linker has just written sits in the
// page cache in whatever folios the write left, and the kernel maps a
// touched page's whole neighbourhood from them: the same runtime binary
// measured 1 to 5.5 MiB more file-backed RSS after initialize when fresh
// from the linker than after being read back (docs/benchmarks.md, "Where
// the memory goes"), varying from build to build.
func dropPageCache(path string) error {
	f, err := os.Open(path)
	if err != nil {
		return fmt.Errorf("drop %s from the page cache: %w", path, err)
	}
	defer f.Close()
	if err := f.Sync(); err != nil {
		return fmt.Errorf("drop %s from the page cache: sync: %w", path, err)
	}
	if err := unix.Fadvise(int(f.Fd()), 0, 0, unix.FADV_DONTNEED); err != nil {
		return fmt.Errorf("drop %s from the page cache: fadvise: %w", path, err)
	}
	return nil
}
