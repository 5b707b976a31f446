//go:build !unix

package workflow

import "os/exec"

func setProcessGroup(*exec.Cmd) {}

func terminateGroup(cmd *exec.Cmd) { _ = cmd.Process.Kill() }

func killGroup(cmd *exec.Cmd) { _ = cmd.Process.Kill() }

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
