package bench

import (
	"context"
	"encoding/json"
	"flag"
	"io"
	"path/filepath"
	"testing"
	"time"

	"github.com/agent-interop/runtime/internal/store"
	"github.com/agent-interop/runtime/internal/workflow"
)

// graphN is the works of each shape's store of BenchmarkWorkGraphShapes
// (go test ./internal/bench -run '^$' -bench WorkGraphShapes -args -graph-n 20000).
var graphN = flag.Int("graph-n", 100000, "works of each shape's store in BenchmarkWorkGraphShapes (at least 100)")

// BenchmarkWorkGraphShapes measures get_work_graph (default arguments and
// a depth-3 neighbourhood) and list_work_items at its largest page on a
// store of each graph shape, answers encoded as the server encodes them.
// Each shape's store is seeded once per run (one bulk transaction per
// chunk) and shared by its sub-benchmarks. Profile with
// go test ./internal/bench -run '^$' -bench WorkGraphShapes -cpuprofile cpu.out.
func BenchmarkWorkGraphShapes(b *testing.B) {
	ctx := context.Background()
	n := *graphN
	if n < 100 {
		b.Fatalf("-graph-n %d: want at least 100", n)
	}
	dir := b.TempDir()
	for _, shape := range Shapes() {
		b.Run(shape, func(sb *testing.B) {
			var svc *workflow.Service
			var sd Seed
			// open seeds and opens the shape's store once; it stays open
			// until the shape's benchmarks end.
			open := func(b *testing.B) {
				if svc != nil {
					return
				}
				loc := filepath.Join(dir, shape+".db")
				var err error
				start := time.Now()
				if sd, err = SeedShape(ctx, loc, shape, n, time.Now(), io.Discard); err != nil {
					b.Fatal(err)
				}
				b.Logf("seeded %d works (%s) in %s", n, shape, time.Since(start).Round(time.Millisecond))
				st, err := store.Open(ctx, loc)
				if err != nil {
					b.Fatal(err)
				}
				sb.Cleanup(func() { _ = st.Close() })
				svc = workflow.New(st, workflow.Options{})
			}
			depth := int64(3)
			calls := []struct {
				name string
				call func() (any, error)
			}{
				{"get_work_graph", func() (any, error) { return svc.WorkGraph(ctx, workflow.GraphInput{}) }},
				{"get_work_graph_depth3", func() (any, error) {
					return svc.WorkGraph(ctx, workflow.GraphInput{WorkID: sd.WorkID, Depth: &depth})
				}},
				{"list_work_items_limit100", func() (any, error) {
					return svc.ListWorks(ctx, workflow.ListWorksInput{Limit: 100})
				}},
			}
			for _, c := range calls {
				sb.Run(c.name, func(b *testing.B) {
					open(b)
					b.ReportAllocs()
					for b.Loop() {
						v, err := c.call()
						if err != nil {
							b.Fatal(err)
						}
						if _, err := json.Marshal(v); err != nil {
							b.Fatal(err)
						}
					}
				})
			}
		})
	}
}
