package main

import (
	"bufio"
	"context"
	"encoding/json"
	"io"
	"net/http"
	"regexp"
	"testing"
	"time"

	"github.com/agent-interop/runtime/internal/bench"
)

// TestHTTPMode serves -http on a free port, reads the listening line as
// interop-bench does and makes the trivial call over a session.
func TestHTTPMode(t *testing.T) {
	ctx, cancel := context.WithCancel(context.Background())
	pr, pw := io.Pipe()
	done := make(chan error, 1)
	go func() { done <- run(ctx, []string{"-http", "127.0.0.1:0"}, pw); pw.Close() }()
	defer func() {
		cancel()
		if err := <-done; err != nil {
			t.Errorf("run: %v", err)
		}
	}()
	line, err := bufio.NewReader(pr).ReadString('\n')
	if err != nil {
		t.Fatal(err)
	}
	go func() { _, _ = io.Copy(io.Discard, pr) }()
	m := regexp.MustCompile(`HTTP listening on (http://\S+/mcp)`).FindStringSubmatch(line)
	if m == nil {
		t.Fatalf("no listening line: %q", line)
	}
	client := &http.Client{Transport: bench.NewHTTPTransport(1)}
	defer client.CloseIdleConnections()
	sess := bench.NewHTTPSession(m[1], "ignored", client)
	cctx, ccancel := context.WithTimeout(ctx, 10*time.Second)
	defer ccancel()
	if _, err := sess.Initialize(cctx, "2025-06-18"); err != nil {
		t.Fatal(err)
	}
	ex, err := sess.Call(cctx, "tools/call", map[string]any{"name": "ping", "arguments": map[string]any{}})
	if err != nil {
		t.Fatal(err)
	}
	var res struct {
		Content []struct{ Text string }
	}
	if err := json.Unmarshal(ex.Result, &res); err != nil || len(res.Content) != 1 || res.Content[0].Text != "ok" {
		t.Fatalf("ping answered %s (%v)", ex.Result, err)
	}
	if err := sess.Close(cctx); err != nil {
		t.Fatal(err)
	}
}
