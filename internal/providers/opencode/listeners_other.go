//go:build !linux

package opencode

import (
	"context"
	"runtime"

	"github.com/agent-interop/runtime/internal/osproc"
)

// loopbackListeners lists the loopback listeners worth probing: where
// there is no /proc, from the system's listener table (lsof on macOS, the
// IP Helper table on Windows), within the caller's bound (listenerScan).
// files is unused there, and so is uid: those tables are not filtered by
// owner (lsof lists another user's sockets only to root).
func loopbackListeners(ctx context.Context, _ []string, _ int) []candidate {
	ls, err := osproc.Listeners(ctx)
	if err != nil {
		return nil
	}
	return candidatesFrom(ls)
}

// listenerSource names where loopbackListeners looked, for error texts.
func listenerSource([]string) string {
	if runtime.GOOS == "windows" {
		return "loopback listeners in the system TCP table"
	}
	return "loopback listeners reported by lsof"
}

// foreignOwner cannot tell a listener's owner here: the default URL is
// probed whoever listens on it.
func foreignOwner([]string, string, int) (int, bool) { return 0, false }
