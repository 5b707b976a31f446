package httpguard

import (
	"bytes"
	"errors"
	"fmt"
	"os"
	"path/filepath"
)

// WriteTokenFile writes token (and a newline) to path, readable and
// writable by the owner only (0600), creating its directory (0700) when
// missing. The file is replaced atomically (a temporary file in the same
// directory, then rename), so a reader sees the previous file or the
// whole new one, and a symbolic link at path is replaced, never followed.
func WriteTokenFile(path, token string) (err error) {
	if token == "" {
		return errors.New("write the token file: empty token")
	}
	dir := filepath.Dir(path)
	if err := os.MkdirAll(dir, 0o700); err != nil {
		return fmt.Errorf("create the token file's directory: %w", err)
	}
	if fi, err := os.Lstat(path); err == nil && fi.IsDir() {
		return fmt.Errorf("write the token file: %s is a directory", path)
	}
	f, err := os.CreateTemp(dir, "."+filepath.Base(path)+".*")
	if err != nil {
		return fmt.Errorf("write the token file: %w", err)
	}
	defer func() {
		if err != nil {
			f.Close()
			os.Remove(f.Name())
		}
	}()
	if err := f.Chmod(0o600); err != nil {
		return fmt.Errorf("write the token file: %w", err)
	}
	if _, err := f.WriteString(token + "\n"); err != nil {
		return fmt.Errorf("write the token file: %w", err)
	}
	if err := f.Sync(); err != nil {
		return fmt.Errorf("write the token file: %w", err)
	}
	if err := f.Close(); err != nil {
		return fmt.Errorf("write the token file: %w", err)
	}
	if err := os.Rename(f.Name(), path); err != nil {
		return fmt.Errorf("write the token file: %w", err)
	}
	return nil
}

// ReadTokenFile returns the token a WriteTokenFile wrote (surrounding
// whitespace trimmed).
func ReadTokenFile(path string) (string, error) {
	b, err := os.ReadFile(path)
	if err != nil {
		return "", fmt.Errorf("read the token file: %w", err)
	}
	return string(bytes.TrimSpace(b)), nil
}

// RemoveTokenFile removes path if it still holds token, so a server that
// stops does not delete the file of another one that took its place.
func RemoveTokenFile(path, token string) error {
	got, err := ReadTokenFile(path)
	if errors.Is(err, os.ErrNotExist) {
		return nil
	}
	if err != nil {
		return err
	}
	if got != token {
		return nil
	}
	if err := os.Remove(path); err != nil && !errors.Is(err, os.ErrNotExist) {
		return fmt.Errorf("remove the token file: %w", err)
	}
	return nil
}
