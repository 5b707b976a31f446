//go:build unix

package osproc

import (
	"context"
	"errors"
	"fmt"
	"os/exec"
)

// List runs ps (PSArgs) and parses it.
func List(ctx context.Context) ([]Process, error) {
	out, err := exec.CommandContext(ctx, "ps", PSArgs...).Output()
	if err != nil {
		return nil, fmt.Errorf("ps %v: %w", PSArgs, err)
	}
	return ParsePS(out), nil
}

// Listeners runs lsof (LsofArgs) and parses it. lsof exits 1 when it
// found nothing; that is an empty list, not an error.
func Listeners(ctx context.Context) ([]Listener, error) {
	path, err := exec.LookPath("lsof")
	if err != nil {
		return nil, fmt.Errorf("listing TCP listeners needs lsof: %w", err)
	}
	out, err := exec.CommandContext(ctx, path, LsofArgs...).Output()
	var ee *exec.ExitError
	if err != nil && !(errors.As(err, &ee) && ee.ExitCode() == 1 && len(out) == 0) {
		return nil, fmt.Errorf("lsof %v: %w", LsofArgs, err)
	}
	return ParseLsof(out), nil
}
