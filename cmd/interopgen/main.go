// Command interopgen generates the MCP catalogs, snapshots and docs from
// spec/ (`generate`), fails on drift or broken budgets (`check`) and prints
// the catalog sizes (`measure`). Run it from the repository root.
package main

import (
	"os"

	"github.com/agent-interop/runtime/gen/cli"
)

func main() {
	os.Exit(cli.Do(os.Args[1:], ".", os.Stdout, os.Stderr))
}
