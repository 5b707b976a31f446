package desk

import (
	"context"
	"strings"
	"testing"
)

func TestNeighbourhoodIsBoundedByDepth(t *testing.T) {
	f := newFixture(t)
	// a <- b <- c <- d <- e (each depends on the previous), and x <- c.
	f.addWork("work_a", "a")
	f.addWork("work_b", "b", "work_a")
	f.addWork("work_x", "x")
	f.addWork("work_c", "c", "work_b", "work_x")
	f.addWork("work_d", "d", "work_c")
	f.addWork("work_e", "e", "work_d")
	tests := []struct {
		depth int
		nodes string
		edges int
	}{
		{1, "work_c work_b work_x work_d", 3},
		{2, "work_c work_b work_x work_d work_a work_e", 5},
		{3, "work_c work_b work_x work_d work_a work_e", 5},
	}
	for _, tt := range tests {
		d, err := f.h.read.workItem(context.Background(), "work_c", tt.depth)
		if err != nil {
			t.Fatal(err)
		}
		var ids []string
		for _, n := range d.Graph.Nodes {
			ids = append(ids, n.ID)
		}
		if strings.Join(ids, " ") != tt.nodes || len(d.Graph.Edges) != tt.edges {
			t.Errorf("depth %d: nodes %v, %d edges; want %s, %d", tt.depth, ids, len(d.Graph.Edges), tt.nodes, tt.edges)
		}
		if !strings.Contains(d.Graph.Mermaid, "n0 -->|depends on| n1") || !strings.Contains(d.Graph.Mermaid, "class n0 focus") {
			t.Errorf("depth %d: mermaid source\n%s", tt.depth, d.Graph.Mermaid)
		}
	}
}
