package bench

import (
	"context"
	"io"
	"path/filepath"
	"testing"
	"time"

	"github.com/agent-interop/runtime/ent/claim"
	"github.com/agent-interop/runtime/ent/workitem"
	"github.com/agent-interop/runtime/internal/store"
)

// TestSeedShapes seeds a small store of each graph shape and checks the
// dependencies and evidence each shape promises.
func TestSeedShapes(t *testing.T) {
	const n = 303
	cases := []struct {
		shape           string
		edges, evidence int
		hub             string // a work and how many works it depends on
		hubDeps         int
	}{
		{ShapeChain, n - (n+seedChain-1)/seedChain, n / 10, seedWorkID(19), 1},
		{ShapeTree, n - 1, n / 10, seedWorkID(2), 1},
		{ShapeFanIn, n / seedFanIn * (seedFanIn - 1), n / 10, seedWorkID(seedFanIn - 1), seedFanIn - 1},
		{ShapeDense, n - (n+seedChain-1)/seedChain, n, seedWorkID(19), 1},
	}
	ctx := context.Background()
	// SeedGraphs writes every shape from one base store; each copy must
	// hold what SeedShape writes of the works, claims and evidence.
	graphDir := t.TempDir()
	var shapes, graphLocs []string
	for _, c := range cases {
		shapes, graphLocs = append(shapes, c.shape), append(graphLocs, filepath.Join(graphDir, c.shape+".db"))
	}
	graphSeeds, err := SeedGraphs(ctx, filepath.Join(graphDir, "base.db"), shapes, graphLocs, n, time.Now(), io.Discard)
	if err != nil {
		t.Fatal(err)
	}
	for i, c := range cases {
		for _, seeder := range []string{"SeedShape", "SeedGraphs"} {
			t.Run(c.shape+"/"+seeder, func(t *testing.T) {
				loc, sd := graphLocs[i], graphSeeds[i]
				if seeder == "SeedShape" {
					loc = filepath.Join(t.TempDir(), "interop.db")
					var err error
					if sd, err = SeedShape(ctx, loc, c.shape, n, time.Now(), io.Discard); err != nil {
						t.Fatal(err)
					}
				}
				checkSeededShape(t, loc, sd, c.shape, n, c.edges, c.evidence, c.hub, c.hubDeps)
			})
		}
	}
	if _, err := SeedShape(ctx, filepath.Join(t.TempDir(), "x.db"), "star", n, time.Now(), io.Discard); err == nil {
		t.Error("an unknown shape was seeded")
	}
	if _, err := SeedGraphs(ctx, filepath.Join(t.TempDir(), "b.db"), []string{"star"}, []string{filepath.Join(t.TempDir(), "x.db")}, n, time.Now(), io.Discard); err == nil {
		t.Error("SeedGraphs seeded an unknown shape")
	}
}

// checkSeededShape checks the store at loc holds n works in shape with
// edges dependencies, evidence records, hub depending on hubDeps works,
// and a claim on every work.
func checkSeededShape(t *testing.T, loc string, sd Seed, shape string, n, wantEdges, evidence int, hub string, hubDeps int) {
	t.Helper()
	ctx := context.Background()
	if sd.Shape != shape || sd.Evidence != evidence || sd.Claims != n {
		t.Errorf("seed = %+v", sd)
	}
	st, err := store.Open(ctx, loc)
	if err != nil {
		t.Fatal(err)
	}
	defer st.Close()
	cl := st.Client()
	targets, err := cl.WorkItem.Query().QueryDependsOn().Count(ctx)
	if err != nil {
		t.Fatal(err)
	}
	// QueryDependsOn counts distinct targets; count the pairs.
	pairs := 0
	works, err := cl.WorkItem.Query().WithDependsOn().All(ctx)
	if err != nil {
		t.Fatal(err)
	}
	for _, w := range works {
		pairs += len(w.Edges.DependsOn)
	}
	if pairs != wantEdges || targets == 0 {
		t.Errorf("%d dependencies (%d distinct targets), want %d", pairs, targets, wantEdges)
	}
	deps, err := cl.WorkItem.Query().Where(workitem.ID(hub)).QueryDependsOn().Count(ctx)
	if err != nil {
		t.Fatal(err)
	}
	if deps != hubDeps {
		t.Errorf("%s depends on %d works, want %d", hub, deps, hubDeps)
	}
	ev, err := cl.Evidence.Query().Count(ctx)
	if err != nil {
		t.Fatal(err)
	}
	if ev != evidence {
		t.Errorf("%d evidence records, want %d", ev, evidence)
	}
	claimed, err := cl.Claim.Query().Unique(true).Select(claim.FieldWorkID).Strings(ctx)
	if err != nil {
		t.Fatal(err)
	}
	if len(claimed) != n {
		t.Errorf("%d works with a claim, want %d", len(claimed), n)
	}
}
