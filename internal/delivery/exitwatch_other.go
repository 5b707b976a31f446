//go:build !linux

package delivery

// watchExit cannot watch a process on this OS: its operations are settled
// at the settlement loop's next tick.
func watchExit(int) (<-chan struct{}, func()) { return nil, func() {} }
