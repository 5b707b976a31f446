// Command minimalserver is the benchmark baseline: the smallest go-sdk
// v1.8.0 stdio MCP server, with one trivial tool registered the same raw way
// the runtime registers its tools. interop-bench builds it next to
// interop-runtime and reports every figure as a ratio to it.
package main

import (
	"context"
	"encoding/json"
	"log"

	"github.com/modelcontextprotocol/go-sdk/mcp"
)

func main() {
	s := mcp.NewServer(&mcp.Implementation{Name: "minimal", Version: "v0.0.0"}, nil)
	s.AddTool(&mcp.Tool{
		Name:        "ping",
		Description: "Answer ok.",
		InputSchema: json.RawMessage(`{"type":"object"}`),
	}, func(context.Context, *mcp.CallToolRequest) (*mcp.CallToolResult, error) {
		return &mcp.CallToolResult{Content: []mcp.Content{&mcp.TextContent{Text: "ok"}}}, nil
	})
	if err := s.Run(context.Background(), &mcp.StdioTransport{}); err != nil {
		log.Fatal(err)
	}
}
