package freebuff

import (
	"context"
	"errors"
	"strings"
	"testing"

	"github.com/agent-interop/runtime/internal/providers"
	"github.com/agent-interop/runtime/internal/providers/freebuff/core"
)

func TestInputValidation(t *testing.T) {
	svc := New(core.Config{LookupEnv: envMap(nil), ProcDir: "-", HomeDir: t.TempDir(), WorkDir: t.TempDir()})
	defer svc.Close()
	ctx := context.Background()
	ok := "thread-1"
	cases := []struct {
		name string
		call func() error
		want string
	}{
		{"blank text", func() error { _, err := svc.SendThreadMessage(ctx, ok, " \n\t"); return err }, "Message text must not be blank"},
		{"oversized text", func() error {
			_, err := svc.SendThreadMessage(ctx, ok, strings.Repeat("a", MaxMessageChars+1))
			return err
		}, "Message must be 1 to 100000 characters"},
		{"bad thread id", func() error { _, err := svc.SendThreadMessage(ctx, "../x", "hi"); return err }, "Invalid identifier"},
		{"long model", func() error { _, err := svc.SetThreadModel(ctx, ok, strings.Repeat("m", 201), ""); return err }, "Invalid model"},
		{"blank model", func() error { _, err := svc.SetThreadModel(ctx, ok, "", ""); return err }, "Model must not be blank"},
		{"model with space", func() error { _, err := svc.SetThreadModel(ctx, ok, "a b", ""); return err }, "Invalid model"},
		{"bad effort", func() error { e := "ultra"; _, err := svc.SetThreadReasoning(ctx, ok, &e); return err }, `Invalid reasoning effort "ultra"`},
		{"bad harness", func() error { _, err := svc.SetThreadModel(ctx, ok, "z", "a/b"); return err }, "Invalid harnessId"},
		{"progress limit", func() error {
			_, err := svc.GetThreadProgress(ctx, core.ProgressQuery{ThreadID: ok, Limit: 101})
			return err
		}, "limit must be between 1 and 100"},
		{"progress timeout", func() error {
			_, err := svc.GetThreadProgress(ctx, core.ProgressQuery{ThreadID: ok, TimeoutMs: 30_001})
			return err
		}, "timeoutMs must be between 0 and 30000"},
		{"get bad id", func() error { _, err := svc.GetThread(ctx, "a b"); return err }, "Invalid identifier"},
		{"blank project", func() error { _, err := svc.ReadProjectFile(ctx, " ", "x"); return err }, "projectId must not be blank"},
	}
	for _, tc := range cases {
		err := tc.call()
		if err == nil || !strings.Contains(err.Error(), tc.want) {
			t.Errorf("%s: %v, want %q", tc.name, err, tc.want)
			continue
		}
		if strings.Contains(tc.name, "text") || strings.Contains(tc.name, "model") || strings.Contains(tc.name, "effort") || strings.Contains(tc.name, "harness") {
			var ns *providers.NotSentError
			if !errors.As(err, &ns) || providers.IsUncertain(err) {
				t.Errorf("%s: %T is not a NotSentError", tc.name, err)
			}
		}
	}
	// Nothing found: reads explain what was checked, writes are not sent.
	if _, err := svc.ListProjects(ctx); err == nil || !strings.Contains(err.Error(), "Freebuff is unavailable or read-only") {
		t.Errorf("ListProjects with nothing found: %v", err)
	}
	if _, err := svc.SendThreadMessage(ctx, ok, "hi"); providers.IsUncertain(err) || !strings.Contains(err.Error(), core.ReasonUnavailable) {
		t.Errorf("send with nothing found: %v", err)
	}
	if st := svc.Status(ctx); st.Product != "unknown" || !st.ReadOnly || st.ReadOnlyReason != core.ReasonUnavailable {
		t.Errorf("status: %+v", st)
	}
	// A null effort is valid (it clears the effort).
	if e, err := normalizeEffort(nil); e != nil || err != nil {
		t.Errorf("nil effort: %v %v", e, err)
	}
	if e, err := normalizeEffort(core.Ptr(" HIGH ")); err != nil || *e != "high" {
		t.Errorf("effort normalisation: %v %v", e, err)
	}
}

// envMap returns a concurrency-safe environment lookup over m.
func envMap(m map[string]string) func(string) (string, bool) {
	e := &envStore{m: map[string]string{}}
	for k, v := range m {
		e.m[k] = v
	}
	return e.lookup
}

func must(t *testing.T, err error) {
	t.Helper()
	if err != nil {
		t.Fatal(err)
	}
}
