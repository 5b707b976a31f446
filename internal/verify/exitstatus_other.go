//go:build !unix

package verify

import "os/exec"

// exitStatus returns the exit code (this system reports no signals).
func exitStatus(cmd *exec.Cmd) (*int, *string) {
	if cmd.ProcessState == nil {
		return nil, nil
	}
	code := cmd.ProcessState.ExitCode()
	if code < 0 {
		return nil, nil
	}
	return &code, nil
}
