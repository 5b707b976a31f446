//go:build unix

package importstate

import (
	"os"
	"syscall"
)

// openNonBlocking opens path for reading without blocking on a FIFO that
// appeared after the Stat (the mode is checked again on the open file).
func openNonBlocking(path string) (*os.File, error) {
	return os.OpenFile(path, os.O_RDONLY|syscall.O_NONBLOCK, 0)
}
