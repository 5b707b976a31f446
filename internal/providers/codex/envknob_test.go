package codex

import (
	"reflect"
	"testing"
)

func TestThreadParamsFromEnv(t *testing.T) {
	env := map[string]string{EnvApprovalPolicy: " untrusted ", EnvSandbox: "workspace-write"}
	lookup := func(k string) (string, bool) { v, ok := env[k]; return v, ok }

	got := (&Config{LookupEnv: lookup}).withDefaults().ThreadParams
	if want := map[string]any{"approvalPolicy": "untrusted", "sandbox": "workspace-write"}; !reflect.DeepEqual(got, want) {
		t.Fatalf("from env: %v, want %v", got, want)
	}

	// A key set in Config wins, and the caller's map is not modified.
	mine := map[string]any{"approvalPolicy": "never"}
	got = (&Config{LookupEnv: lookup, ThreadParams: mine}).withDefaults().ThreadParams
	if want := map[string]any{"approvalPolicy": "never", "sandbox": "workspace-write"}; !reflect.DeepEqual(got, want) {
		t.Fatalf("config wins: %v, want %v", got, want)
	}
	if len(mine) != 1 {
		t.Fatalf("caller's ThreadParams modified: %v", mine)
	}

	// Unset or blank variables add nothing.
	env = map[string]string{EnvSandbox: "  "}
	if got := (&Config{LookupEnv: lookup}).withDefaults().ThreadParams; len(got) != 0 {
		t.Fatalf("blank env: %v", got)
	}
}
