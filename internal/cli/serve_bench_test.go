package cli

import (
	"bufio"
	"context"
	"io"
	"path/filepath"
	"strings"
	"testing"
)

// BenchmarkServeInitialize is the in-process part of a spawn: serve over
// stdio pipes from the parsed command line to the initialize answer
// (app.Open, server.New, the SDK's answer), then EOF. Package inits are
// not in it (GODEBUG=inittrace=1 measures those).
func BenchmarkServeInitialize(b *testing.B) {
	dir := b.TempDir()
	db := filepath.Join(dir, "state.db")
	env := Env(func(k string) (string, bool) {
		switch k {
		case "INTEROP_DB":
			return db, true
		case "HOME":
			return dir, true
		}
		return "", false
	})
	const initialize = `{"jsonrpc":"2.0","id":1,"method":"initialize","params":{"protocolVersion":"2025-06-18","capabilities":{},"clientInfo":{"name":"bench","version":"1"}}}` + "\n"
	run := func() {
		inR, inW := io.Pipe()
		outR, outW := io.Pipe()
		done := make(chan int, 1)
		go func() {
			done <- Do(context.Background(), []string{"serve", "--profile", "full"}, env, IO{Stdin: inR, Stdout: outW, Stderr: io.Discard})
			outW.Close()
		}()
		if _, err := io.WriteString(inW, initialize); err != nil {
			b.Fatal(err)
		}
		line, err := bufio.NewReader(outR).ReadString('\n')
		if err != nil || !strings.Contains(line, `"serverInfo"`) {
			b.Fatalf("initialize answer %q: %v", line, err)
		}
		inW.Close()
		go io.Copy(io.Discard, outR)
		if code := <-done; code != 0 {
			b.Fatalf("serve exited %d", code)
		}
	}
	run() // creates the store
	b.ReportAllocs()
	b.ResetTimer()
	for b.Loop() {
		run()
	}
}
