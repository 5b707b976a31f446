//go:build !unix

package security

import "os"

// openNonBlock is not needed where FIFOs do not block an open.
const openNonBlock = 0

// hardLinked cannot be told from a portable FileInfo.
func hardLinked(os.FileInfo) bool { return false }
