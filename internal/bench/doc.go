// Package bench is the logic of interop-bench: it builds interop-runtime and
// a minimal go-sdk server, spawns each over stdio exactly as an MCP client
// does (newline-delimited JSON-RPC: initialize, notifications/initialized,
// tools/list, then trivial tools/call requests), and reports the medians of
// spawn → initialize, tools/list latency and size in bytes and o200k tokens,
// call latency percentiles and peak RSS, each with its ratio to the minimal
// server measured in the same run, checked against the targets of
// DESIGN.md §3 and §7.
//
// Spawned servers run in their own process group with an isolated
// environment (HOME, INTEROP_DB and the rest in a temporary directory), every
// answer is awaited with a deadline, and the group is killed and reaped at
// the end of each spawn.
package bench
