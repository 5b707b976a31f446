package bench

import (
	"context"
	"os"
	"path/filepath"
	"runtime"
	"strings"
	"testing"
)

// TestBuildUsesPrebuiltBinaries: with BinDirEnv set, Build returns the two
// binaries of that folder, and fails naming the variable when one is
// missing; it builds nothing either way (the module folder does not exist).
func TestBuildUsesPrebuiltBinaries(t *testing.T) {
	exe := ""
	if runtime.GOOS == "windows" {
		exe = ".exe"
	}
	for _, tc := range []struct {
		name    string
		present []string
		wantErr string
	}{
		{"both", []string{"interop-runtime", "minimalserver"}, ""},
		{"no baseline", []string{"interop-runtime"}, BinDirEnv},
		{"none", nil, BinDirEnv},
	} {
		t.Run(tc.name, func(t *testing.T) {
			dir := t.TempDir()
			for _, name := range tc.present {
				if err := os.WriteFile(filepath.Join(dir, name+exe), []byte("binary"), 0o755); err != nil {
					t.Fatal(err)
				}
			}
			t.Setenv(BinDirEnv, dir)
			rt, base, err := Build(context.Background(), filepath.Join(dir, "no-module"), filepath.Join(dir, "out"))
			if tc.wantErr != "" {
				if err == nil || !strings.Contains(err.Error(), tc.wantErr) {
					t.Fatalf("Build = %q, %q, %v; want an error naming %s", rt, base, err, tc.wantErr)
				}
				return
			}
			if err != nil {
				t.Fatal(err)
			}
			if rt != filepath.Join(dir, "interop-runtime"+exe) || base != filepath.Join(dir, "minimalserver"+exe) {
				t.Fatalf("Build = %q, %q; want the binaries of %s", rt, base, dir)
			}
			if _, err := os.Stat(filepath.Join(dir, "out")); !os.IsNotExist(err) {
				t.Fatalf("Build wrote its output folder (%v): it should have built nothing", err)
			}
		})
	}
}
