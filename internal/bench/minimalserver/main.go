// Command minimalserver is the benchmark baseline: the smallest go-sdk
// v1.8.0 MCP server, with one trivial tool registered the same raw way the
// runtime registers its tools. interop-bench builds it next to
// interop-runtime and reports every figure as a ratio to it.
//
// By default it serves stdio. With -http ADDR (e.g. 127.0.0.1:0) it serves
// go-sdk's Streamable HTTP handler, with its default options, on ADDR
// instead (the handler alone, on every path), and prints
// "minimalserver HTTP listening on http://ADDR/mcp" on stderr as serve-http
// prints its own: the floor any go-sdk server pays over HTTP, with nothing
// of the runtime's in front of it.
package main

import (
	"context"
	"encoding/json"
	"errors"
	"flag"
	"fmt"
	"io"
	"log"
	"net"
	"net/http"
	"os"

	"github.com/modelcontextprotocol/go-sdk/mcp"
)

func main() {
	if err := run(context.Background(), os.Args[1:], os.Stderr); err != nil {
		log.Fatal(err)
	}
}

// run serves stdio, or with -http Streamable HTTP until ctx ends.
func run(ctx context.Context, args []string, stderr io.Writer) error {
	fs := flag.NewFlagSet("minimalserver", flag.ContinueOnError)
	fs.SetOutput(stderr)
	addr := fs.String("http", "", "serve Streamable HTTP on this address (e.g. 127.0.0.1:0) instead of stdio")
	if err := fs.Parse(args); err != nil {
		return err
	}
	s := mcp.NewServer(&mcp.Implementation{Name: "minimal", Version: "v0.0.0"}, nil)
	s.AddTool(&mcp.Tool{
		Name:        "ping",
		Description: "Answer ok.",
		InputSchema: json.RawMessage(`{"type":"object"}`),
	}, func(context.Context, *mcp.CallToolRequest) (*mcp.CallToolResult, error) {
		return &mcp.CallToolResult{Content: []mcp.Content{&mcp.TextContent{Text: "ok"}}}, nil
	})
	if *addr == "" {
		return s.Run(ctx, &mcp.StdioTransport{})
	}
	ln, err := net.Listen("tcp", *addr)
	if err != nil {
		return fmt.Errorf("listen: %w", err)
	}
	srv := &http.Server{Handler: mcp.NewStreamableHTTPHandler(func(*http.Request) *mcp.Server { return s }, nil)}
	go func() {
		<-ctx.Done()
		_ = srv.Close()
	}()
	fmt.Fprintf(stderr, "minimalserver HTTP listening on http://%s/mcp\n", ln.Addr())
	if err := srv.Serve(ln); !errors.Is(err, http.ErrServerClosed) {
		return fmt.Errorf("serve HTTP: %w", err)
	}
	return nil
}
