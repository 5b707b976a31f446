package bench

import (
	"context"
	"io"
	"os"
	"path/filepath"
	"runtime"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/agent-interop/runtime/internal/store"
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

// TestNewStoreTargetStartsWithoutAStore: -new-store adds a full-profile
// row whose every spawn, the warm-up's too, finds no store file, while the
// other rows keep the store their first spawn made.
func TestNewStoreTargetStartsWithoutAStore(t *testing.T) {
	c := Config{N: 2, Warmup: 1, Calls: 1, Timeout: 5 * time.Second, Protocol: "2025-06-18", Profiles: []string{"full"}, NewStore: true}
	var rows []string
	for _, tg := range Targets(c, "runtime", "baseline") {
		rows = append(rows, tg.Name)
		if tg.NewStore != (tg.Name == "full, new store") {
			t.Errorf("target %q: NewStore = %v", tg.Name, tg.NewStore)
		}
	}
	if !slices.Contains(rows, "full, new store") {
		t.Fatalf("targets %v have no new-store row", rows)
	}
	if c.NewStore = false; slices.Contains(targetNames(Targets(c, "runtime", "baseline")), "full, new store") {
		t.Error("a new-store row without -new-store")
	}

	logDir := t.TempDir()
	targets := []Target{
		{Name: "kept", Path: os.Args[0], Tools: []string{"ping"}},
		{Name: "new", Path: os.Args[0], Tools: []string{"ping"}, NewStore: true},
	}
	opts, err := spawnOptions(c, targets, t.TempDir())
	if err != nil {
		t.Fatal(err)
	}
	for i := range opts {
		opts[i].Env = append(opts[i].Env, fakeServerEnv+"=store", fakeStoreLogEnv+"="+filepath.Join(logDir, targets[i].Name))
	}
	if _, _, _, err := measureRounds(context.Background(), c, targets, opts, httpPair{}, io.Discard); err != nil {
		t.Fatal(err)
	}
	for name, want := range map[string]string{"kept": "false\ntrue\ntrue\n", "new": "false\nfalse\nfalse\n"} {
		got, err := os.ReadFile(filepath.Join(logDir, name))
		if err != nil || string(got) != want {
			t.Errorf("%s: did the store exist at each spawn? %q, %v; want %q", name, got, err, want)
		}
	}
}

// TestSeedStoresMakesTheKeptStores: before the warm-up, each row of this
// build that keeps its store gets one (a serve asked only for its status
// would never create it); the baseline, the new-store row and -compare's
// binary get none.
func TestSeedStoresMakesTheKeptStores(t *testing.T) {
	targets := []Target{
		{Name: "baseline", Baseline: true},
		{Name: "full"},
		{Name: "full, new store", NewStore: true},
		{Name: "compare: full", Compare: true},
	}
	opts, err := spawnOptions(Config{}, targets, t.TempDir())
	if err != nil {
		t.Fatal(err)
	}
	if err := seedStores(context.Background(), targets, opts); err != nil {
		t.Fatal(err)
	}
	for i, tg := range targets {
		path := filepath.Join(opts[i].Dir, "interop.db")
		_, statErr := os.Stat(path)
		if want := tg.Name == "full"; want != (statErr == nil) {
			t.Errorf("%s: a store file exists = %v, want %v", tg.Name, statErr == nil, want)
		}
	}
	st, err := store.Open(context.Background(), filepath.Join(opts[1].Dir, "interop.db"), store.WithoutCreate(), store.WithLazyConnect())
	if err != nil {
		t.Fatal(err)
	}
	defer st.Close()
	if st.StartedEmpty() || st.Migrated() {
		t.Error("the seeded store is not a current store (it would be created or upgraded by the first spawn)")
	}
}

func targetNames(ts []Target) []string {
	var names []string
	for _, tg := range ts {
		names = append(names, tg.Name)
	}
	return names
}
