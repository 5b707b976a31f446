//go:build linux

package bench

import (
	"bytes"
	"os"
	"path/filepath"
	"testing"
	"unsafe"

	"golang.org/x/sys/unix"
)

// resident counts the pages of path that are in the page cache (mincore
// over a mapping of the file; mapping touches no page).
func resident(t *testing.T, path string) (in, all int) {
	t.Helper()
	f, err := os.Open(path)
	if err != nil {
		t.Fatal(err)
	}
	defer f.Close()
	st, err := f.Stat()
	if err != nil {
		t.Fatal(err)
	}
	m, err := unix.Mmap(int(f.Fd()), 0, int(st.Size()), unix.PROT_READ, unix.MAP_SHARED)
	if err != nil {
		t.Fatal(err)
	}
	defer unix.Munmap(m)
	vec := make([]byte, (len(m)+os.Getpagesize()-1)/os.Getpagesize())
	if _, _, errno := unix.Syscall(unix.SYS_MINCORE, uintptr(unsafe.Pointer(&m[0])), uintptr(len(m)), uintptr(unsafe.Pointer(&vec[0]))); errno != 0 {
		t.Fatal(errno)
	}
	for _, v := range vec {
		if v&1 != 0 {
			in++
		}
	}
	return in, len(vec)
}

func TestDropPageCacheEvictsAFreshlyWrittenFile(t *testing.T) {
	dir := t.TempDir()
	var fs unix.Statfs_t
	if err := unix.Statfs(dir, &fs); err != nil {
		t.Fatal(err)
	}
	if fs.Type == unix.TMPFS_MAGIC {
		t.Skip("the temporary directory is on tmpfs, whose pages are the file itself and cannot be dropped")
	}
	path := filepath.Join(dir, "bin")
	data := bytes.Repeat([]byte("interop"), 1<<18) // 1.75 MiB
	if err := os.WriteFile(path, data, 0o755); err != nil {
		t.Fatal(err)
	}
	if in, all := resident(t, path); in < all/2 {
		t.Skipf("only %d of %d pages of a file just written are cached; nothing to drop", in, all)
	}
	if err := dropPageCache(path); err != nil {
		t.Fatal(err)
	}
	if in, all := resident(t, path); in > all/10 {
		t.Errorf("after dropPageCache %d of %d pages are still in the page cache", in, all)
	}
	got, err := os.ReadFile(path)
	if err != nil || !bytes.Equal(got, data) {
		t.Errorf("the file changed: err %v, %d bytes (want %d)", err, len(got), len(data))
	}
	if err := dropPageCache(filepath.Join(dir, "missing")); err == nil {
		t.Error("dropPageCache of a missing file: no error")
	}
}
