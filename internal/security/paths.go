package security

import (
	"bytes"
	"errors"
	"fmt"
	"io"
	"io/fs"
	"net/url"
	"os"
	"path/filepath"
	"strings"
	"syscall"
	"unicode/utf8"

	"golang.org/x/text/unicode/norm"
)

// MaxFileBytes is the largest file a project read or an ACP fs/read_text_file
// returns.
const MaxFileBytes = 1_000_000

// maxPathBytes bounds a requested relative path before any file-system call.
const maxPathBytes = 4096

// Errors returned by the file-access functions. The first three keep the
// 0.3.x texts verbatim.
var (
	ErrEscapes     = errors.New("Path escapes the Freebuff project")
	ErrProtected   = errors.New("Protected file access denied")
	ErrNotRegular  = errors.New("Only regular files may be read")
	ErrTooLarge    = fmt.Errorf("File exceeds the 1 MB safety limit (%d bytes)", MaxFileBytes)
	ErrBinary      = errors.New("Binary files may not be read")
	ErrNotFound    = errors.New("File not found")
	ErrNotDir      = errors.New("Only directories may be listed")
	ErrPathTooLong = fmt.Errorf("Path is longer than %d bytes", maxPathBytes)
)

// checkRelative applies the lexical rules to a requested project-relative
// path and returns its components. It never touches the file system.
func checkRelative(rel string) ([]string, error) {
	if len(rel) > maxPathBytes {
		return nil, ErrPathTooLong
	}
	if strings.ContainsRune(rel, 0) || !utf8.ValidString(rel) {
		return nil, ErrEscapes
	}
	if filepath.IsAbs(rel) || strings.HasPrefix(rel, "/") || strings.HasPrefix(rel, "\\") ||
		strings.HasPrefix(rel, "~") || hasDriveLetter(rel) {
		return nil, ErrEscapes
	}
	parts := splitComponents(rel)
	for _, c := range parts {
		if isDotDot(c) {
			return nil, ErrEscapes
		}
	}
	for _, c := range parts {
		if IsProtectedName(c) {
			return nil, ErrProtected
		}
	}
	if IsProtectedPath(rel) {
		return nil, ErrProtected
	}
	return parts, nil
}

// isDotDot reports whether a component is "..", directly or after
// percent-decoding or Unicode compatibility folding (full-width dots), or
// smuggles a separator through percent-encoding.
func isDotDot(c string) bool {
	if c == ".." {
		return true
	}
	if dec, err := url.PathUnescape(c); err == nil && dec != c {
		if dec == ".." || strings.ContainsAny(dec, "/\\") || isDotDot(dec) {
			return true
		}
	}
	if f := norm.NFKC.String(c); f != c && (f == ".." || strings.ContainsAny(f, "/\\")) {
		return true
	}
	return false
}

func hasDriveLetter(p string) bool {
	return len(p) >= 2 && p[1] == ':' && ((p[0] >= 'a' && p[0] <= 'z') || (p[0] >= 'A' && p[0] <= 'Z'))
}

// realRoot returns the resolved absolute root directory.
func realRoot(root string) (string, error) {
	if root == "" || !filepath.IsAbs(root) {
		return "", fmt.Errorf("project root %q is not an absolute path: %w", root, ErrEscapes)
	}
	r, err := filepath.EvalSymlinks(root)
	if err != nil {
		return "", fmt.Errorf("resolve project root: %w", err)
	}
	st, err := os.Stat(r)
	if err != nil {
		return "", fmt.Errorf("stat project root: %w", err)
	}
	if !st.IsDir() {
		return "", fmt.Errorf("project root %s is not a directory", root)
	}
	return r, nil
}

// resolveInside resolves rel under root, following symlinks, and re-checks
// containment and the deny-list on the resolved path.
func resolveInside(root, rel string) (realRootDir, target string, err error) {
	parts, err := checkRelative(rel)
	if err != nil {
		return "", "", err
	}
	rr, err := realRoot(root)
	if err != nil {
		return "", "", err
	}
	joined := filepath.Join(append([]string{rr}, parts...)...)
	resolved, err := filepath.EvalSymlinks(joined)
	if err != nil {
		switch {
		case errors.Is(err, fs.ErrNotExist), errors.Is(err, syscall.ENOTDIR):
			// A dangling symlink may point outside; report it as absence
			// without revealing where it points.
			return "", "", ErrNotFound
		case errors.Is(err, syscall.ENAMETOOLONG):
			return "", "", ErrPathTooLong
		default: // symlink loops and unreadable directories
			return "", "", ErrEscapes
		}
	}
	back, err := filepath.Rel(rr, resolved)
	if err != nil || back == ".." || strings.HasPrefix(back, ".."+string(filepath.Separator)) || filepath.IsAbs(back) {
		return "", "", ErrEscapes
	}
	if IsProtectedPath(filepath.ToSlash(back)) || IsProtectedPath(filepath.ToSlash(resolved)) {
		return "", "", ErrProtected
	}
	return rr, resolved, nil
}

// ResolveFile returns the resolved absolute path of the regular file rel
// inside root after every check of [ReadText] except reading.
func ResolveFile(root, rel string) (string, error) {
	if strings.HasSuffix(rel, "/") || strings.HasSuffix(rel, "\\") {
		return "", ErrNotRegular
	}
	_, target, err := resolveInside(root, rel)
	if err != nil {
		return "", err
	}
	st, err := os.Lstat(target)
	if err != nil {
		return "", ErrNotFound
	}
	if !st.Mode().IsRegular() {
		return "", ErrNotRegular
	}
	return target, nil
}

// ReadText reads the project file rel inside root and returns its text
// unredacted. It refuses absolute paths, ".." components, targets (after
// symlink resolution) outside root, credential files anywhere on the path,
// anything but a regular file, files over [MaxFileBytes] and binary content
// (NUL bytes or invalid UTF-8). Callers that hand the text to a model must use
// [ReadFile] or [RedactString].
func ReadText(root, rel string) (string, error) {
	target, err := ResolveFile(root, rel)
	if err != nil {
		return "", err
	}
	st, err := os.Lstat(target)
	if err != nil {
		return "", ErrNotFound
	}
	f, err := openNoFollow(target)
	if err != nil {
		return "", fmt.Errorf("open %s: %w", cleanSlash(rel), err)
	}
	defer f.Close()
	fst, err := f.Stat()
	if err != nil {
		return "", fmt.Errorf("stat %s: %w", cleanSlash(rel), err)
	}
	// The file checked and the file opened must be the same regular file:
	// this closes the window for swapping in a FIFO, device or symlink.
	if !fst.Mode().IsRegular() || !os.SameFile(st, fst) {
		return "", ErrNotRegular
	}
	if fst.Size() > MaxFileBytes {
		return "", ErrTooLarge
	}
	data, err := io.ReadAll(io.LimitReader(f, MaxFileBytes+1))
	if err != nil {
		return "", fmt.Errorf("read %s: %w", cleanSlash(rel), err)
	}
	if len(data) > MaxFileBytes {
		return "", ErrTooLarge
	}
	if IsBinary(data) {
		return "", ErrBinary
	}
	return string(data), nil
}

// ReadFile is [ReadText] followed by [RedactString]: the form every tool
// answer uses.
func ReadFile(root, rel string) (string, error) {
	text, err := ReadText(root, rel)
	if err != nil {
		return "", err
	}
	return RedactString(text), nil
}

// IsBinary reports whether data holds a NUL byte or is not valid UTF-8.
func IsBinary(data []byte) bool {
	return bytes.IndexByte(data, 0) >= 0 || !utf8.Valid(data)
}
