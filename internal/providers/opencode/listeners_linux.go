package opencode

import (
	"context"
	"strings"

	"github.com/agent-interop/runtime/internal/osproc"
)

// loopbackListeners lists the loopback listeners worth probing: on Linux
// from the kernel's tables (files, normally /proc/net/tcp{,6}).
func loopbackListeners(_ context.Context, files []string) []candidate {
	var ls []osproc.Listener
	for _, f := range files {
		for _, l := range osproc.ReadProcNet(f) {
			ls = append(ls, osproc.Listener{Addr: l.Addr})
		}
	}
	return candidatesFrom(ls)
}

// listenerSource names where loopbackListeners looked, for error texts.
func listenerSource(files []string) string {
	return "loopback listeners in " + strings.Join(files, ", ")
}
