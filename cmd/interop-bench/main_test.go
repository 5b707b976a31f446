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
		{[]string{"scale", "-store", "mysql"}, `-store: "mysql" is not a store dialect`},
		{[]string{"scale", "-store", "sqlite,sqlite"}, "-store: sqlite is named twice"},
		{[]string{"scale", "-store", "postgres", "-db", "postgres://app:hunter2@127.0.0.1/team"}, "carries a password"},
		{[]string{"scale", "-store", "postgres", "-db", "/tmp/interop.db"}, "-db: /tmp/interop.db is not a postgres:// or postgresql:// URL"},
		{[]string{"scale", "-db", "postgres://app@127.0.0.1/team"}, "-store does not include postgres"},
		{[]string{"scale", "-sizes", "10"}, "size 10 is below 100 records"},
		{[]string{"scale", "-sizes", "1000,1000"}, "-sizes: 1000 is named twice"},
		{[]string{"scale", "extra"}, "unexpected arguments"},
	} {
		var stdout, stderr bytes.Buffer
		if code := run(context.Background(), tc.args, &stdout, &stderr); code != 2 {
			t.Errorf("%v: exit %d, want 2", tc.args, code)
		}
		if !strings.Contains(stderr.String(), tc.want) {
			t.Errorf("%v: stderr %q lacks %q", tc.args, stderr.String(), tc.want)
		}
		if strings.Contains(stderr.String(), "hunter2") {
			t.Errorf("%v: stderr shows the password: %q", tc.args, stderr.String())
		}
		if stdout.Len() != 0 {
			t.Errorf("%v: wrote %q to stdout", tc.args, stdout.String())
		}
	}
}
