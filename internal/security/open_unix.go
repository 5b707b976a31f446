//go:build unix

package security

import (
	"os"
	"syscall"
)

// openNonBlock keeps an open of a FIFO swapped in at the last moment from
// blocking; the file type is checked on the opened descriptor.
const openNonBlock = syscall.O_NONBLOCK

// hardLinked reports a regular file with more than one name: another name
// may sit outside every root, so its content is not the project's.
func hardLinked(fi os.FileInfo) bool {
	st, ok := fi.Sys().(*syscall.Stat_t)
	return ok && st.Nlink > 1
}
