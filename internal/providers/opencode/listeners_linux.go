package opencode

import (
	"context"
	"strings"
)

// loopbackListeners lists the loopback listeners worth probing: on Linux
// from the kernel's tables (files, normally /proc/net/tcp{,6}).
func loopbackListeners(_ context.Context, files []string) []candidate {
	return listeningLoopback(files)
}

// listenerSource names where loopbackListeners looked, for error texts.
func listenerSource(files []string) string {
	return "loopback listeners in " + strings.Join(files, ", ")
}
