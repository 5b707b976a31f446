package security

import (
	"errors"
	"io/fs"
	"os"
	"path"
	"path/filepath"
	"strings"
	"syscall"
)

// ErrChanged is returned when the file opened is not the file whose name was
// checked: something swapped it while it was being opened.
var ErrChanged = errors.New("File changed while it was being opened")

// opener opens a checked root-relative path beneath the resolved root rr
// without ever leaving it, and reports the root-relative slash path of the
// file it actually opened (symlinks inside the root resolved), so that the
// deny-list is applied to what was opened, not to what was asked for.
type opener interface {
	open(rr string, parts []string, dir bool) (f *os.File, resolved string, err error)
}

// systemOpener is the opener of this platform: openat2 beneath the root's
// descriptor on Linux, falling back to [rootOpener].
func systemOpener() opener { return platformOpener }

// rootOpener opens through [os.Root]: one O_NOFOLLOW openat per component
// from the root's descriptor, symlinks resolved by the runtime and refused
// when they lead out. The opened file is then compared with the file its
// resolved name designates, so a swap in between is refused.
type rootOpener struct{}

func (rootOpener) open(rr string, parts []string, dir bool) (*os.File, string, error) {
	r, err := os.OpenRoot(rr)
	if err != nil {
		return nil, "", mapOpenError(err)
	}
	defer r.Close()
	name := joinParts(parts)
	f, err := r.OpenFile(name, os.O_RDONLY|openNonBlock, 0)
	if err != nil {
		return nil, "", mapOpenError(err)
	}
	resolved, err := resolvedName(rr, name)
	if err != nil {
		f.Close()
		return nil, "", err
	}
	opened, err := f.Stat()
	if err != nil {
		f.Close()
		return nil, "", ErrNotFound
	}
	named, err := os.Lstat(filepath.Join(rr, filepath.FromSlash(resolved)))
	if err != nil || !os.SameFile(opened, named) {
		f.Close()
		return nil, "", ErrChanged
	}
	return f, resolved, nil
}

// resolvedName resolves name under rr (symlinks followed) and returns it
// relative to rr, or ErrEscapes when it leads out.
func resolvedName(rr, name string) (string, error) {
	real, err := filepath.EvalSymlinks(filepath.Join(rr, filepath.FromSlash(name)))
	if err != nil {
		return "", mapOpenError(err)
	}
	return insideRoot(rr, real)
}

// insideRoot returns abs relative to rr as a slash path, or ErrEscapes.
func insideRoot(rr, abs string) (string, error) {
	back, err := filepath.Rel(rr, abs)
	if err != nil || back == ".." || strings.HasPrefix(back, ".."+string(filepath.Separator)) || filepath.IsAbs(back) {
		return "", ErrEscapes
	}
	return filepath.ToSlash(back), nil
}

func joinParts(parts []string) string {
	if len(parts) == 0 {
		return "."
	}
	return path.Join(parts...)
}

// mapOpenError turns an open failure into the package's errors without
// revealing where a symlink pointed.
func mapOpenError(err error) error {
	switch {
	case errors.Is(err, fs.ErrNotExist), errors.Is(err, syscall.ENOTDIR):
		return ErrNotFound
	case errors.Is(err, syscall.ENAMETOOLONG):
		return ErrPathTooLong
	case errors.Is(err, syscall.ENXIO): // a socket
		return ErrNotRegular
	default: // escapes, symlink loops, unreadable directories
		return ErrEscapes
	}
}
