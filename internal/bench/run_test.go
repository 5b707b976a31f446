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

// TestRoundOrderRotates: across any n consecutive rounds every target is
// spawned once in every place, and each round spawns each target once.
func TestRoundOrderRotates(t *testing.T) {
	for _, n := range []int{1, 2, 3, 5} {
		for start := 0; start < 2*n; start++ {
			places := make([]map[int]bool, n)
			for k := range places {
				places[k] = map[int]bool{}
			}
			for r := start; r < start+n; r++ {
				order := roundOrder(r, n)
				seen := map[int]bool{}
				for k, i := range order {
					if i < 0 || i >= n || seen[i] {
						t.Fatalf("n %d round %d: order %v is not a permutation", n, r, order)
					}
					seen[i] = true
					places[k][i] = true
				}
			}
			for k, got := range places {
				if len(got) != n {
					t.Fatalf("n %d from round %d: place %d held only targets %v over %d rounds", n, start, k, got, n)
				}
			}
		}
	}
}
