//go:build !linux

package bench

// dropPageCache is a no-op off Linux (no posix_fadvise there, and the
// RSS figures are read from Linux's /proc only).
func dropPageCache(string) error { return nil }
