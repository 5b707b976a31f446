//go:build !linux

package desktop

import (
	"context"
	"time"

	"github.com/coder/quartz"

	"github.com/agent-interop/runtime/internal/clockctx"
	"github.com/agent-interop/runtime/internal/osproc"
)

// scanProcesses finds orchestrator processes where there is no /proc: the
// process list and listener table of the system (ps and lsof on macOS,
// the Toolhelp snapshot and IP Helper table on Windows), bounded on clock.
// procDir is unused.
func scanProcesses(clock quartz.Clock, _ string, self int) []orchestratorProc {
	ctx, cancel := clockctx.WithTimeout(context.Background(), clock, 5*time.Second, TagProbe)
	defer cancel()
	procs, err := osproc.List(ctx)
	if err != nil {
		return nil
	}
	ls, _ := osproc.Listeners(ctx) // no listeners: ports from PORT / --port only
	return orchestratorsFrom(procs, ls, self)
}
