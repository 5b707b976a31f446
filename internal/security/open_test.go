package security

import (
	"errors"
	"os"
	"path/filepath"
	"runtime"
	"strings"
	"sync"
	"sync/atomic"
	"testing"
)

// openers are every opener this platform can use; each must pass the same
// corpus.
func openers() map[string]opener {
	return map[string]opener{"system": systemOpener(), "root": rootOpener{}}
}

func TestHostilePathCorpusEveryOpener(t *testing.T) {
	f := newFixture(t)
	for name, op := range openers() {
		t.Run(name, func(t *testing.T) {
			for _, rel := range hostilePaths(f) {
				text, err := readText(op, f.root, rel)
				if err == nil {
					t.Errorf("readText(%q) succeeded with %q", rel, text)
					continue
				}
				if strings.Contains(err.Error(), secretMarker) {
					t.Errorf("readText(%q) leaked through its error: %v", rel, err)
				}
				if files, err := listFiles(op, f.root, rel); err == nil {
					for _, p := range files {
						if IsProtectedPath(p) {
							t.Errorf("listFiles(%q) exposed %q", rel, p)
						}
					}
				}
			}
			for rel, want := range map[string]string{"README.md": "hello project\n", "src/main.go": "package main\n"} {
				if got, err := readText(op, f.root, rel); err != nil || got != want {
					t.Errorf("readText(%q) = %q, %v; want %q", rel, got, err, want)
				}
			}
		})
	}
}

// TestHardLinkRefused: a second name of a file outside the root is the
// outside file, whatever directory the name sits in.
func TestHardLinkRefused(t *testing.T) {
	if runtime.GOOS == "windows" {
		t.Skip("hard links are not inspected on Windows")
	}
	base := t.TempDir()
	root := filepath.Join(base, "project")
	if err := os.MkdirAll(root, 0o755); err != nil {
		t.Fatal(err)
	}
	outside := filepath.Join(base, "outside.txt")
	if err := os.WriteFile(outside, []byte(secretMarker), 0o644); err != nil {
		t.Fatal(err)
	}
	if err := os.Link(outside, filepath.Join(root, "notes.txt")); err != nil {
		t.Skipf("cannot hard-link here: %v", err)
	}
	for name, op := range openers() {
		if text, err := readText(op, root, "notes.txt"); !errors.Is(err, ErrHardLinked) {
			t.Errorf("%s: readText(hard link) = %q, %v; want %v", name, text, err, ErrHardLinked)
		}
	}
}

// TestSwapRace swaps one name between a regular file inside the root and a
// symlink to a file outside it (and a directory between a real one and a
// symlink to an outside directory) as fast as it can while thousands of
// reads run. No read may ever return the outside content; the counts show
// that both states were seen.
func TestSwapRace(t *testing.T) {
	const reads = 4000
	for name, op := range openers() {
		t.Run(name, func(t *testing.T) {
			base := t.TempDir()
			root := filepath.Join(base, "project")
			outDir := filepath.Join(base, "outside")
			for _, d := range []string{filepath.Join(root, "d"), outDir} {
				if err := os.MkdirAll(d, 0o755); err != nil {
					t.Fatal(err)
				}
			}
			write := func(p, body string) {
				if err := os.WriteFile(p, []byte(body), 0o644); err != nil {
					t.Fatal(err)
				}
			}
			write(filepath.Join(outDir, "target.txt"), secretMarker)
			write(filepath.Join(root, "d", "target.txt"), "inside")
			write(filepath.Join(root, "target.txt"), "inside")

			stop := make(chan struct{})
			var swaps atomic.Int64
			var wg sync.WaitGroup
			swapper := func(name string, toLink, toReal func(tmp string) error) {
				defer wg.Done()
				final := filepath.Join(root, name)
				tmp := filepath.Join(root, name+".swap")
				for i := 0; ; i++ {
					select {
					case <-stop:
						return
					default:
					}
					_ = os.RemoveAll(tmp)
					var err error
					if i%2 == 0 {
						err = toLink(tmp)
					} else {
						err = toReal(tmp)
					}
					if err == nil {
						if os.Rename(tmp, final) != nil {
							// a directory cannot replace a non-empty one: clear it first
							_ = os.RemoveAll(final)
							_ = os.Rename(tmp, final)
						}
						swaps.Add(1)
					}
				}
			}
			wg.Add(2)
			go swapper("target.txt",
				func(tmp string) error { return os.Symlink(filepath.Join(outDir, "target.txt"), tmp) },
				func(tmp string) error { return os.WriteFile(tmp, []byte("inside"), 0o644) })
			go swapper("d",
				func(tmp string) error { return os.Symlink(outDir, tmp) },
				func(tmp string) error {
					if err := os.Mkdir(tmp, 0o755); err != nil {
						return err
					}
					return os.WriteFile(filepath.Join(tmp, "target.txt"), []byte("inside"), 0o644)
				})

			counts := map[string]int{}
			var leaked int
			for i := 0; i < reads; i++ {
				for _, rel := range []string{"target.txt", "d/target.txt"} {
					text, err := readText(op, root, rel)
					switch {
					case err == nil && text == "inside":
						counts["inside"]++
					case err == nil:
						leaked++
						t.Errorf("read %q returned %q", rel, text)
					case strings.Contains(err.Error(), secretMarker):
						leaked++
						t.Errorf("read %q leaked through its error: %v", rel, err)
					default:
						counts[classify(err)]++
					}
				}
			}
			close(stop)
			wg.Wait()
			t.Logf("opener %s: %d reads, %d swaps, outcomes %v, outside content returned %d times", name, 2*reads, swaps.Load(), counts, leaked)
			if swaps.Load() == 0 {
				t.Fatal("the swapper never ran: the test proved nothing")
			}
		})
	}
}

// classify names a refusal for the race test's counts.
func classify(err error) string {
	for _, e := range []error{ErrEscapes, ErrNotFound, ErrHardLinked, ErrChanged, ErrNotRegular, ErrProtected} {
		if errors.Is(err, e) {
			return e.Error()
		}
	}
	return "other: " + err.Error()
}
