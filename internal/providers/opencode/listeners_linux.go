package opencode

import (
	"context"
	"net/url"
	"strconv"
	"strings"

	"github.com/agent-interop/runtime/internal/osproc"
)

// loopbackListeners lists the loopback listeners worth probing: on Linux
// from the kernel's tables (files, normally /proc/net/tcp{,6}), only those
// owned by uid. A server another user runs is that user's agent, with
// that user's files and account: it is never probed or driven from here
// (the loopback interface is shared by every user of the machine).
func loopbackListeners(_ context.Context, files []string, uid int) []candidate {
	var ls []osproc.Listener
	for _, f := range files {
		for _, l := range osproc.ReadProcNet(f) {
			if l.UID >= 0 && l.UID != uid {
				continue
			}
			ls = append(ls, osproc.Listener{Addr: l.Addr})
		}
	}
	return candidatesFrom(ls)
}

// foreignOwner reports the uid of another user whose socket listens on
// base's loopback port (from the same tables), so that base is not probed:
// a server at the default URL may be another user's. ok is false when
// base is not a loopback URL or no other user listens on its port.
func foreignOwner(files []string, base string, uid int) (owner int, ok bool) {
	u, err := url.Parse(base)
	if err != nil {
		return 0, false
	}
	if h := u.Hostname(); h != "127.0.0.1" && h != "localhost" && h != "::1" {
		return 0, false
	}
	port, err := strconv.Atoi(u.Port())
	if err != nil {
		return 0, false
	}
	for _, f := range files {
		for _, l := range osproc.ReadProcNet(f) {
			if int(l.Addr.Port()) == port && l.UID >= 0 && l.UID != uid {
				ip := l.Addr.Addr().Unmap()
				if ip.IsLoopback() || ip.IsUnspecified() {
					return l.UID, true
				}
			}
		}
	}
	return 0, false
}

// listenerSource names where loopbackListeners looked, for error texts.
func listenerSource(files []string) string {
	return "loopback listeners of this user in " + strings.Join(files, ", ")
}
