package bench

import (
	"context"
	"io"
	"path/filepath"
	"testing"
	"time"

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
	for _, c := range cases {
		t.Run(c.shape, func(t *testing.T) {
			loc := filepath.Join(t.TempDir(), "interop.db")
			sd, err := SeedShape(ctx, loc, c.shape, n, time.Now(), io.Discard)
			if err != nil {
				t.Fatal(err)
			}
			if sd.Shape != c.shape || sd.Evidence != c.evidence || sd.Claims != n {
				t.Errorf("seed = %+v", sd)
			}
			st, err := store.Open(ctx, loc)
			if err != nil {
				t.Fatal(err)
			}
			defer st.Close()
			cl := st.Client()
			edges, err := cl.WorkItem.Query().QueryDependsOn().Count(ctx)
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
			if pairs != c.edges || edges == 0 {
				t.Errorf("%d dependencies (%d distinct targets), want %d", pairs, edges, c.edges)
			}
			hub, err := cl.WorkItem.Query().Where(workitem.ID(c.hub)).QueryDependsOn().Count(ctx)
			if err != nil {
				t.Fatal(err)
			}
			if hub != c.hubDeps {
				t.Errorf("%s depends on %d works, want %d", c.hub, hub, c.hubDeps)
			}
			ev, err := cl.Evidence.Query().Count(ctx)
			if err != nil {
				t.Fatal(err)
			}
			if ev != c.evidence {
				t.Errorf("%d evidence records, want %d", ev, c.evidence)
			}
		})
	}
	if _, err := SeedShape(ctx, filepath.Join(t.TempDir(), "x.db"), "star", n, time.Now(), io.Discard); err == nil {
		t.Error("an unknown shape was seeded")
	}
}
