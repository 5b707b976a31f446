// Command interop-runtime is the agent interop MCP server: it lets one coding
// agent find, drive and coordinate the other coding-agent sessions on this
// computer. `interop-runtime serve` speaks MCP over stdio; logs go to stderr.
package main

import (
	"os"

	"github.com/agent-interop/runtime/internal/cli"
)

func main() {
	os.Exit(cli.Main(os.Args[1:], os.LookupEnv, cli.IO{Stdin: os.Stdin, Stdout: os.Stdout, Stderr: os.Stderr}))
}
