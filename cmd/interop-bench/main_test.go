package main

import (
	"bytes"
	"context"
	"strings"
	"testing"
)

func TestRunRejectsBadFlags(t *testing.T) {
	for _, tc := range []struct {
		args []string
		want string
	}{
		{[]string{"-n", "0"}, "-n must be at least 1"},
		{[]string{"-profiles", "minimal,huge"}, `unknown profile "huge"`},
		{[]string{"-discover", "-protocol", "2025-06-18"}, "-discover needs -protocol 2026-07-28"},
		{[]string{"extra"}, "unexpected arguments"},
		{[]string{"-no-such-flag"}, "flag provided but not defined"},
	} {
		var stdout, stderr bytes.Buffer
		if code := run(context.Background(), tc.args, &stdout, &stderr); code != 2 {
			t.Errorf("%v: exit %d, want 2", tc.args, code)
		}
		if !strings.Contains(stderr.String(), tc.want) {
			t.Errorf("%v: stderr %q lacks %q", tc.args, stderr.String(), tc.want)
		}
		if stdout.Len() != 0 {
			t.Errorf("%v: wrote %q to stdout", tc.args, stdout.String())
		}
	}
}
