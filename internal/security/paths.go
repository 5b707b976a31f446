package security

import (
	"bytes"
	"errors"
	"fmt"
	"io"
	"net/url"
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"unicode/utf8"

	"golang.org/x/text/unicode/norm"

	"github.com/agent-interop/runtime/catalogs/limits"
)

// MaxFileBytes is the largest file a project read or an ACP fs/read_text_file
// returns.
const MaxFileBytes = 1_000_000

// maxPathBytes bounds a requested relative path before any file-system call:
// the spec's path kind (catalogs/limits) in bytes, so a path the tool's
// schema allows is never refused for its length here.
const maxPathBytes = limits.KindPath * limits.BytesPerChar

// Errors returned by the file-access functions. The first three keep the
// 0.3.x texts verbatim.
var (
	ErrEscapes     = errors.New("Path escapes the Freebuff project")
	ErrProtected   = errors.New("Protected file access denied")
	ErrNotRegular  = errors.New("Only regular files may be read")
	ErrTooLarge    = errors.New("File exceeds the 1 MB safety limit (" + strconv.Itoa(MaxFileBytes) + " bytes)")
	ErrBinary      = errors.New("Binary files may not be read")
	ErrNotFound    = errors.New("File not found")
	ErrNotDir      = errors.New("Only directories may be listed")
	ErrPathTooLong = errors.New("Path is longer than " + strconv.Itoa(maxPathBytes) + " bytes")
	ErrHardLinked  = errors.New("Hard-linked files may not be read")
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
	if IsProtectedPath(rel) { // every component, locations, the adopted list
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

// openInside opens rel beneath root with op and applies every rule that
// needs the opened file: the deny-list on the path actually opened (a
// symlink inside the root onto a key file is refused), and, for files, the
// regular-file, single-link and size rules on the descriptor itself.
func openInside(op opener, root, rel string, dir bool) (f *os.File, realRootDir, resolved string, err error) {
	parts, err := checkRelative(rel)
	if err != nil {
		return nil, "", "", err
	}
	rr, err := realRoot(root)
	if err != nil {
		return nil, "", "", err
	}
	f, resolved, err = op.open(rr, parts, dir)
	if err != nil {
		return nil, "", "", err
	}
	if IsProtectedPath(resolved) {
		f.Close()
		return nil, "", "", ErrProtected
	}
	st, err := f.Stat()
	if err != nil {
		f.Close()
		return nil, "", "", ErrNotFound
	}
	switch {
	case dir && !st.IsDir():
		f.Close()
		return nil, "", "", ErrNotDir
	case !dir && !st.Mode().IsRegular():
		f.Close()
		return nil, "", "", ErrNotRegular
	case !dir && hardLinked(st):
		f.Close()
		return nil, "", "", ErrHardLinked
	case !dir && st.Size() > MaxFileBytes:
		f.Close()
		return nil, "", "", ErrTooLarge
	}
	return f, rr, resolved, nil
}

// ResolveFile returns the resolved absolute path of the regular file rel
// inside root after every check of [ReadText] except reading. The answer is
// only a name: read through [ReadText], which checks the file it opens.
func ResolveFile(root, rel string) (string, error) {
	if strings.HasSuffix(rel, "/") || strings.HasSuffix(rel, "\\") {
		return "", ErrNotRegular
	}
	f, rr, resolved, err := openInside(systemOpener(), root, rel, false)
	if err != nil {
		return "", err
	}
	f.Close()
	return filepath.Join(rr, filepath.FromSlash(resolved)), nil
}

// ReadText reads the project file rel inside root and returns its text
// unredacted. The file is opened first and checked after: the open cannot
// leave root (openat2 RESOLVE_BENEATH on Linux, per-component no-follow
// opens elsewhere), and the opened descriptor must be a regular file with a
// single link, at most [MaxFileBytes], not a credential file by its resolved
// name nor key material by its content ([KeyMaterial]), and text (no NUL
// bytes, valid UTF-8). Absolute paths and ".."
// components are refused before any file-system call. Callers that hand the
// text to a model must use [ReadFile] or [RedactString].
func ReadText(root, rel string) (string, error) {
	return readText(systemOpener(), root, rel)
}

func readText(op opener, root, rel string) (string, error) {
	if strings.HasSuffix(rel, "/") || strings.HasSuffix(rel, "\\") {
		return "", ErrNotRegular
	}
	f, _, _, err := openInside(op, root, rel, false)
	if err != nil {
		return "", err
	}
	defer f.Close()
	data, err := io.ReadAll(io.LimitReader(f, MaxFileBytes+1))
	if err != nil {
		return "", fmt.Errorf("read %s: %w", cleanSlash(rel), err)
	}
	if len(data) > MaxFileBytes {
		return "", ErrTooLarge
	}
	if _, key := KeyMaterial(data); key {
		return "", ErrProtected
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
