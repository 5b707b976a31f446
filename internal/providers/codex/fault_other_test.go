//go:build !unix

package codex_test

// The no-replay fault test kills a runtime child with SIGKILL and reads
// its wait status: Unix only (fault_test.go). These keep TestMain's
// dispatch compiling elsewhere.
const childDBEnv = "FAULT_CHILD_SPEC"

func runRuntimeChild() int { return 1 }
