package desktop

// scanProcesses finds orchestrator processes: on Linux by reading procDir
// (normally /proc).
func scanProcesses(procDir string, self int) []orchestratorProc {
	return scanProc(procDir, self)
}
