// Package browser starts the headless Chromium that the desk's browser
// tests drive through the DevTools protocol (github.com/chromedp/chromedp),
// collects what the page logs, and saves screenshots as test artifacts.
//
// The browser is Debian's chromium package (scripts/test.sh installs it).
// The browser tests are a tier of their own: [Require] skips the test unless
// the build tag browser is set (scripts/test.sh sets it). With the tag, a
// test asks for the browser with [Require]: when it is missing the test is
// skipped with the command that installs it, except when CI is "true",
// where a missing browser fails the test. INTEROP_TEST_CHROMIUM names
// another binary.
//
// Every browser gets a fresh profile directory and the flags that keep it
// off the network: no background networking, component updates, sync or
// QUIC, so a page can only reach what the test serves on loopback.
package browser

import (
	"context"
	"os"
	"os/exec"
	"path/filepath"
	"regexp"
	"sync"
	"testing"
	"time"

	"github.com/chromedp/chromedp"
)

// EnvBinary names a Chromium binary to use instead of the one on PATH.
const EnvBinary = "INTEROP_TEST_CHROMIUM"

// EnvScreenshots names the directory screenshots are written to.
const EnvScreenshots = "INTEROP_DESK_SCREENSHOTS"

// TierSkip is why a browser test is skipped without the build tag.
const TierSkip = "browser tier: run with -tags browser (scripts/test.sh does)"

// Require returns the Chromium binary, or skips the test: without the build
// tag browser (TierSkip), or when Chromium is missing, with how to install
// it (a failure when CI=true).
func Require(t testing.TB) string {
	t.Helper()
	if !tierEnabled {
		t.Skip(TierSkip)
	}
	if p := os.Getenv(EnvBinary); p != "" {
		return p
	}
	for _, name := range []string{"chromium", "chromium-browser", "google-chrome"} {
		if p, err := exec.LookPath(name); err == nil {
			return p
		}
	}
	msg := "headless Chromium is not installed: run `apt-get install -y chromium` (scripts/test.sh does), or set " + EnvBinary
	if os.Getenv("CI") == "true" {
		t.Fatal(msg)
	}
	t.Skip(msg)
	return ""
}

// Browser is one running Chromium and what its pages logged.
type Browser struct {
	ctx    context.Context
	mu     sync.Mutex
	logged []string
}

// Start runs Chromium for the test (closed at cleanup) with a window of
// width×height pixels.
func Start(t testing.TB, binary string, width, height int) *Browser {
	t.Helper()
	opts := []chromedp.ExecAllocatorOption{
		chromedp.ExecPath(binary),
		chromedp.Flag("headless", true),
		chromedp.Flag("disable-gpu", true),
		chromedp.Flag("disable-quic", true),
		chromedp.Flag("no-first-run", true),
		chromedp.Flag("no-default-browser-check", true),
		chromedp.Flag("disable-background-networking", true),
		chromedp.Flag("disable-component-update", true),
		chromedp.Flag("disable-sync", true),
		chromedp.Flag("disable-extensions", true),
		chromedp.Flag("disable-default-apps", true),
		chromedp.Flag("disable-dev-shm-usage", true),
		chromedp.Flag("mute-audio", true),
		chromedp.UserDataDir(t.TempDir()),
		chromedp.WindowSize(width, height),
	}
	if os.Geteuid() == 0 {
		opts = append(opts, chromedp.NoSandbox) // Chromium refuses to run as root with its sandbox
	}
	alloc, cancelAlloc := chromedp.NewExecAllocator(context.Background(), opts...)
	ctx, cancel := chromedp.NewContext(alloc)
	b := &Browser{ctx: ctx}
	// The first run starts the browser; it must not carry a timeout (that
	// would stop the browser when it passes).
	if err := chromedp.Do(ctx); err != nil {
		cancel()
		cancelAlloc()
		t.Fatalf("start chromium %s: %v", binary, err)
	}
	b.listen(ctx)
	t.Cleanup(func() { cancel(); cancelAlloc() })
	return b
}

// Context is the first tab's context.
func (b *Browser) Context() context.Context { return b.ctx }

// NewTab opens another tab of the same browser (same cookies).
func (b *Browser) NewTab(t testing.TB) context.Context {
	t.Helper()
	ctx, cancel := chromedp.NewContext(b.ctx)
	if err := chromedp.Do(ctx); err != nil {
		t.Fatalf("open a tab: %v", err)
	}
	b.listen(ctx)
	t.Cleanup(cancel)
	return ctx
}

// listen records console errors and warnings, exceptions and browser
// log entries (Content-Security-Policy violations are reported there).
func (b *Browser) listen(ctx context.Context) {
	msgs := chromedp.Console(ctx)
	go func() {
		for m, err := range msgs {
			if err != nil {
				return
			}
			if m.Type != chromedp.ConsoleError && m.Type != chromedp.ConsoleWarning && !m.IsException() {
				continue
			}
			b.mu.Lock()
			b.logged = append(b.logged, m.String()+" "+m.URL)
			b.mu.Unlock()
		}
	}()
}

// Logged returns what the pages logged so far.
func (b *Browser) Logged() []string {
	b.mu.Lock()
	defer b.mu.Unlock()
	return append([]string(nil), b.logged...)
}

// ScreenshotDir is where screenshots go: $INTEROP_DESK_SCREENSHOTS, or a
// directory under the system's temporary directory that outlives the test.
// The path is logged.
func ScreenshotDir(t testing.TB) string {
	t.Helper()
	dir := os.Getenv(EnvScreenshots)
	if dir == "" {
		dir = filepath.Join(os.TempDir(), "interop-desk-screenshots", time.Now().Format("20060102-150405"))
	}
	if err := os.MkdirAll(dir, 0o755); err != nil {
		t.Fatalf("screenshot directory: %v", err)
	}
	t.Logf("screenshots: %s", dir)
	return dir
}

var unsafeName = regexp.MustCompile(`[^A-Za-z0-9._-]+`)

// Screenshot saves the whole page of ctx as dir/name.png and returns the
// path.
func Screenshot(t testing.TB, ctx context.Context, dir, name string) string {
	t.Helper()
	c, cancel := context.WithTimeout(ctx, 30*time.Second)
	defer cancel()
	png, err := chromedp.Run(c, chromedp.FullScreenshot(100))
	if err != nil {
		t.Errorf("screenshot %s: %v", name, err)
		return ""
	}
	path := filepath.Join(dir, unsafeName.ReplaceAllString(name, "_")+".png")
	if err := os.WriteFile(path, png, 0o644); err != nil {
		t.Errorf("save screenshot %s: %v", name, err)
		return ""
	}
	t.Logf("screenshot %s", path)
	return path
}
