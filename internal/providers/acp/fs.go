package acp

import (
	"fmt"
	"path/filepath"
	"strings"

	"github.com/agent-interop/runtime/internal/security"
)

// MaxReadLines bounds the limit of one fs/read_text_file.
const MaxReadLines = 10_000

// ErrFileNotFound is the not-found error of the file reader.
var ErrFileNotFound = security.ErrNotFound

// DefaultFileReader serves fs/read_text_file through internal/security:
// realpath containment in the session's workspace, credential files denied,
// regular text files of at most 1 MB. line is 1-based; limit is clamped to
// 1..MaxReadLines.
type DefaultFileReader struct{}

// ReadText implements FileReader.
func (DefaultFileReader) ReadText(root, path string, line, limit int) (string, error) {
	rel, err := relativeTo(root, path)
	if err != nil {
		return "", err
	}
	text, err := security.ReadText(root, rel)
	if err != nil {
		return "", fmt.Errorf("fs/read_text_file %s: %w", path, err)
	}
	return sliceLines(text, line, limit), nil
}

// relativeTo turns the agent's path (absolute, or relative to root) into a
// root-relative one; the security package then refuses anything escaping.
func relativeTo(root, path string) (string, error) {
	if !filepath.IsAbs(path) {
		return path, nil
	}
	rel, err := filepath.Rel(root, path)
	if err == nil && !strings.HasPrefix(rel, "..") {
		return rel, nil
	}
	// The agent may use the resolved form of a symlinked workspace.
	if real, rerr := filepath.EvalSymlinks(root); rerr == nil {
		if r2, err2 := filepath.Rel(real, path); err2 == nil && !strings.HasPrefix(r2, "..") {
			return r2, nil
		}
	}
	return "", fmt.Errorf("fs/read_text_file %s: %w", path, security.ErrEscapes)
}

// sliceLines returns limit lines starting at the 1-based line.
func sliceLines(text string, line, limit int) string {
	if line <= 1 && limit <= 0 {
		return text
	}
	if line < 1 {
		line = 1
	}
	if limit <= 0 || limit > MaxReadLines {
		limit = MaxReadLines
	}
	lines := strings.SplitAfter(text, "\n")
	if line > len(lines) {
		return ""
	}
	end := line - 1 + limit
	if end > len(lines) {
		end = len(lines)
	}
	return strings.Join(lines[line-1:end], "")
}
