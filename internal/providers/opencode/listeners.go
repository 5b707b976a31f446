package opencode

import (
	"sort"
	"strconv"

	"github.com/agent-interop/runtime/internal/osproc"
)

// candidatesFrom keeps the loopback and wildcard listeners of ls, one per
// base URL, lowest port first.
func candidatesFrom(ls []osproc.Listener) []candidate {
	byBase := map[string]candidate{}
	for _, l := range ls {
		ip := l.Addr.Addr().Unmap()
		if l.Addr.Port() == 0 || !(ip.IsLoopback() || ip.IsUnspecified()) {
			continue
		}
		host := "127.0.0.1" // IPv4 loopback or 0.0.0.0
		if ip.Is6() {
			host = "[::1]" // ::1 or ::
		}
		port := int(l.Addr.Port())
		base := "http://" + host + ":" + strconv.Itoa(port)
		byBase[base] = candidate{port: port, base: base}
	}
	out := make([]candidate, 0, len(byBase))
	for _, c := range byBase {
		out = append(out, c)
	}
	sort.Slice(out, func(i, j int) bool {
		if out[i].port != out[j].port {
			return out[i].port < out[j].port
		}
		return out[i].base < out[j].base
	})
	return out
}
