package doctor

import (
	"bytes"
	"context"
	"errors"
	"fmt"
	"os/exec"
	"time"

	"github.com/agent-interop/runtime/internal/procgroup"
)

// ExecVersion runs `path --version` (stdin empty, in its own process group,
// which is killed afterwards and when ctx ends) and returns the first
// dotted version number (x.y.z) it prints on stdout or stderr.
func ExecVersion(ctx context.Context, path string) (string, error) {
	var out bytes.Buffer
	cmd := exec.CommandContext(ctx, path, "--version")
	cmd.Stdout, cmd.Stderr = &out, &out
	procgroup.Set(cmd)
	cmd.Cancel = func() error { return procgroup.Kill(cmd.Process.Pid) }
	cmd.WaitDelay = time.Second
	if err := cmd.Start(); err != nil {
		return "", fmt.Errorf("run %s --version: %w", path, err)
	}
	err := cmd.Wait()
	// Children left in the group (a Node shim's native binary) go too.
	_ = procgroup.Kill(cmd.Process.Pid)
	if v := findVersion(out.String()); v != "" {
		return v, nil
	}
	if err != nil {
		return "", fmt.Errorf("run %s --version: %w", path, err)
	}
	return "", errors.New(path + " --version printed no version number")
}

// findVersion returns the first token of s that starts with a dotted
// number of at least three parts (1.18.33, 0.171.0-alpha.1), without a
// leading "v".
func findVersion(s string) string {
	isDigit := func(b byte) bool { return b >= '0' && b <= '9' }
	for i := 0; i < len(s); i++ {
		if !isDigit(s[i]) || (i > 0 && (isDigit(s[i-1]) || s[i-1] == '.')) {
			continue
		}
		j, parts := i, 0
		for {
			k := j
			for k < len(s) && isDigit(s[k]) {
				k++
			}
			if k == j {
				break
			}
			parts++
			j = k
			if j+1 < len(s) && s[j] == '.' && isDigit(s[j+1]) {
				j++
				continue
			}
			break
		}
		if parts < 3 {
			i = j
			continue
		}
		// A pre-release or build suffix: -alpha.1, +build.5
		if j < len(s) && (s[j] == '-' || s[j] == '+') {
			k := j + 1
			for k < len(s) && (isDigit(s[k]) || s[k] == '.' || s[k] == '-' || (s[k]|0x20 >= 'a' && s[k]|0x20 <= 'z')) {
				k++
			}
			if k > j+1 {
				j = k
			}
		}
		for j > i && s[j-1] == '.' {
			j--
		}
		return s[i:j]
	}
	return ""
}
