//go:build unix

package clientsetup

import (
	"os"
	"path/filepath"
	"runtime"
	"strings"
	"syscall"
	"testing"
	"time"
)

// TestSpecialFilesRefusedAtOnce: a FIFO, or a symlink to one or to a
// device, in the client file's place is refused before it is read (a read
// would block, or never end), naming the file.
func TestSpecialFilesRefusedAtOnce(t *testing.T) {
	dir := t.TempDir()
	fifo := filepath.Join(dir, "claude.json")
	if err := syscall.Mkfifo(fifo, 0o600); err != nil {
		t.Fatal(err)
	}
	link := filepath.Join(dir, "mcp.json")
	if err := os.Symlink(fifo, link); err != nil {
		t.Fatal(err)
	}
	paths := []string{fifo, link}
	if runtime.GOOS == "linux" {
		zero := filepath.Join(dir, "opencode.json")
		if err := os.Symlink("/dev/zero", zero); err != nil {
			t.Fatal(err)
		}
		paths = append(paths, zero)
	}
	for _, p := range paths {
		done := make(chan error, 1)
		go func() {
			_, err := Write(Target{Client: Claude, File: p, Name: "agent-interop"}, stdioEntry)
			done <- err
		}()
		select {
		case err := <-done:
			if err == nil || !strings.Contains(err.Error(), "is not a regular file") {
				t.Errorf("%s: err = %v, want it refused as not a regular file", p, err)
			}
		case <-time.After(30 * time.Second):
			t.Fatalf("setup on %s still runs after 30 s", p)
		}
	}
}
