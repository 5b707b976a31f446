//go:build linux

package security

import (
	"errors"
	"os"
	"strconv"

	"golang.org/x/sys/unix"
)

// platformOpener is openat2 with a fallback for kernels (before 5.6) and
// sandboxes that refuse the call.
var platformOpener opener = openat2Opener{fallback: rootOpener{}}

// openat2Opener opens with openat2(RESOLVE_BENEATH|RESOLVE_NO_MAGICLINKS)
// from the root's descriptor: the kernel resolves every component, symlinks
// included, and fails with EXDEV on any step out of the root (absolute
// symlinks and ".." above it) in the same operation as the open, so there is
// no window between a check and the use. The opened file's own path (from
// /proc/self/fd) is what the deny-list sees.
type openat2Opener struct{ fallback opener }

func (o openat2Opener) open(rr string, parts []string, dir bool) (*os.File, string, error) {
	rootFD, err := unix.Open(rr, unix.O_PATH|unix.O_DIRECTORY|unix.O_CLOEXEC, 0)
	if err != nil {
		return nil, "", mapOpenError(err)
	}
	defer unix.Close(rootFD)
	flags := uint64(unix.O_RDONLY | unix.O_CLOEXEC | unix.O_NOCTTY | unix.O_NONBLOCK)
	if dir {
		flags |= unix.O_DIRECTORY
	}
	name := joinParts(parts)
	fd, err := unix.Openat2(rootFD, name, &unix.OpenHow{
		Flags:   flags,
		Resolve: unix.RESOLVE_BENEATH | unix.RESOLVE_NO_MAGICLINKS,
	})
	if errors.Is(err, unix.ENOSYS) || errors.Is(err, unix.EPERM) || errors.Is(err, unix.E2BIG) {
		return o.fallback.open(rr, parts, dir)
	}
	if err != nil {
		return nil, "", mapOpenError(err)
	}
	f := os.NewFile(uintptr(fd), name)
	real, err := os.Readlink("/proc/self/fd/" + strconv.Itoa(fd))
	if err != nil { // no /proc: name the file by resolution and compare
		resolved, rerr := resolvedName(rr, name)
		if rerr != nil {
			f.Close()
			return nil, "", rerr
		}
		opened, serr := f.Stat()
		named, lerr := os.Lstat(rr + "/" + resolved)
		if serr != nil || lerr != nil || !os.SameFile(opened, named) {
			f.Close()
			return nil, "", ErrChanged
		}
		return f, resolved, nil
	}
	resolved, err := insideRoot(rr, real)
	if err != nil { // renamed out of the root since it was opened
		f.Close()
		return nil, "", err
	}
	return f, resolved, nil
}
