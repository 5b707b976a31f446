// Command interop-runtime is the agent interop MCP server: it lets one coding
// agent find, drive and coordinate the other coding-agent sessions on this
// computer. `interop-runtime serve` speaks MCP over stdio; logs go to stderr.
package main

import (
	"context"
	"os"
	"os/signal"
	"syscall"

	"github.com/agent-interop/runtime/internal/cli"
)

func main() {
	ctx, stop := signal.NotifyContext(context.Background(), os.Interrupt, syscall.SIGTERM)
	code := cli.Do(ctx, os.Args[1:], os.LookupEnv, cli.IO{Stdin: os.Stdin, Stdout: os.Stdout, Stderr: os.Stderr})
	stop()
	os.Exit(code)
}
