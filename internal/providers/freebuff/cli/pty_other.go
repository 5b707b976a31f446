//go:build !unix

package cli

import "fmt"

// explainPTY says why there is no PTY here: github.com/creack/pty
// (v1.1.24) has no ConPTY support on Windows (Start and Open return
// ErrUnsupported), so the managed Freebuff CLI is unavailable and its
// writes are reported read-only with this reason. Freebuff Desktop (HTTP)
// is unaffected.
func explainPTY(err error) error {
	return fmt.Errorf("no pseudo-terminal on this system: github.com/creack/pty has no Windows ConPTY support (%w); use Freebuff Desktop", err)
}
