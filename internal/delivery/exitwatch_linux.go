//go:build linux

package delivery

import (
	"os"

	"golang.org/x/sys/unix"
)

// watchExit returns a channel closed when the process pid exits (or turns
// zombie), read from a pidfd through the runtime's poller, and a stop
// function that ends the watch. It returns a nil channel when the kernel
// has no pidfd_open (before Linux 5.10 with PIDFD_NONBLOCK) or pid does not
// run.
func watchExit(pid int) (<-chan struct{}, func()) {
	fd, err := unix.PidfdOpen(pid, unix.PIDFD_NONBLOCK)
	if err != nil {
		return nil, func() {}
	}
	f := os.NewFile(uintptr(fd), "pidfd")
	rc, err := f.SyscallConn()
	if err != nil {
		f.Close()
		return nil, func() {}
	}
	exited := make(chan struct{})
	go func() {
		// Read waits for the pidfd to turn readable (the process exited)
		// whenever the check says not yet; Close ends the wait with an
		// error.
		err := rc.Read(func(fd uintptr) bool {
			p := []unix.PollFd{{Fd: int32(fd), Events: unix.POLLIN}}
			n, err := unix.Poll(p, 0)
			return err != nil || n > 0
		})
		if err == nil {
			close(exited)
		}
	}()
	return exited, func() { f.Close() }
}
