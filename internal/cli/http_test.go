package cli

import (
	"bytes"
	"context"
	"os"
	"path/filepath"
	"regexp"
	"strings"
	"testing"

	"github.com/agent-interop/runtime/internal/testutil/syncbuf"
	"github.com/agent-interop/runtime/internal/testutil/wait"
)

// TestServeHTTPPrintsTheLinesDocsShow: serve --http prints on start the
// three lines docs/http.md shows (the token file, the desk's login link,
// the address), in that order and nothing else, once the home directory,
// the port and the one-time code are put as the doc puts them.
func TestServeHTTPPrintsTheLinesDocsShow(t *testing.T) {
	doc, err := os.ReadFile(filepath.Join("..", "..", "docs", "http.md"))
	if err != nil {
		t.Fatal(err)
	}
	m := regexp.MustCompile("(?s)On start it prints these three lines.*?```\n(.*?)```").FindSubmatch(doc)
	if m == nil {
		t.Fatal("docs/http.md shows no start-up lines")
	}
	want := strings.Split(strings.TrimSpace(string(m[1])), "\n")

	home := t.TempDir()
	env := map[string]string{"HOME": home, "INTEROP_DB": filepath.Join(home, "store.db")}
	ctx, cancel := context.WithCancel(context.Background())
	defer cancel()
	var errOut syncbuf.Buffer
	done := make(chan int, 1)
	go func() {
		lookup := func(k string) (string, bool) { v, ok := env[k]; return v, ok }
		done <- Do(ctx, []string{"serve", "--http", "--port", "0"}, lookup, IO{Stdin: strings.NewReader(""), Stdout: &bytes.Buffer{}, Stderr: &errOut})
	}()
	wait.For(t, "serve --http to listen", wait.Process, func() bool { return strings.Contains(errOut.String(), "HTTP listening on") })
	printed := errOut.String()
	cancel()
	if code := <-done; code != 0 {
		t.Errorf("serve --http stopped with %d: %s", code, errOut.String())
	}
	port := regexp.MustCompile(`listening on http://127\.0\.0\.1:(\d+)/mcp`).FindStringSubmatch(printed)
	if port == nil {
		t.Fatalf("no address printed: %s", printed)
	}
	got := strings.ReplaceAll(printed, home, "/home/you")
	got = strings.ReplaceAll(got, ":"+port[1]+"/", ":8788/")
	got = strings.ReplaceAll(got, "http-"+port[1]+".token", "http-8788.token")
	got = regexp.MustCompile(`code=[A-Za-z0-9_-]+`).ReplaceAllString(got, "code=<one-time code>")
	if lines := strings.Split(strings.TrimSpace(got), "\n"); strings.Join(lines, "\n") != strings.Join(want, "\n") {
		t.Errorf("serve --http printed\n%s\ndocs/http.md shows\n%s", strings.Join(lines, "\n"), strings.Join(want, "\n"))
	}
}
