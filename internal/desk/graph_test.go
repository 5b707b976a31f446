package desk

import (
	"context"
	"regexp"
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

// The graph's nodes take the style sheet's colours (light or dark): the
// Mermaid source fixes none, and desk.css colours every status class.
func TestGraphNodesFollowThePageColours(t *testing.T) {
	f := newFixture(t)
	f.addWork("work_a", "a")
	f.addWork("work_b", "b", "work_a")
	d, err := f.h.read.workItem(context.Background(), "work_b", 2)
	if err != nil {
		t.Fatal(err)
	}
	if regexp.MustCompile(`#[0-9a-fA-F]{3,6}\b|fill:|color:`).MatchString(d.Graph.Mermaid) {
		t.Errorf("the Mermaid source fixes a colour, which stays light in dark mode:\n%s", d.Graph.Mermaid)
	}
	css, err := assetFiles.ReadFile("assets/desk.css")
	if err != nil {
		t.Fatal(err)
	}
	for _, status := range workStatuses {
		if !strings.Contains(d.Graph.Mermaid, "classDef st_"+status+" ") {
			t.Errorf("no classDef for %s:\n%s", status, d.Graph.Mermaid)
		}
		for _, part := range []string{".label-container", ".nodeLabel"} {
			if !strings.Contains(string(css), "pre.mermaid .node.st_"+status+" "+part) {
				t.Errorf("desk.css does not colour %s's %s", status, part)
			}
		}
	}
}

// The graph script draws one graph at a time: a live update that arrives
// while the page's first draw runs must not hand the same <pre> to
// Mermaid twice (the race that logged "reading 'getAttribute'").
func TestGraphDrawsAreSerialized(t *testing.T) {
	js, err := assetFiles.ReadFile("assets/desk.js")
	if err != nil {
		t.Fatal(err)
	}
	for _, want := range []string{"drawing = drawing.then(", ":not([data-drawing])", "isConnected"} {
		if !strings.Contains(string(js), want) {
			t.Errorf("desk.js lacks %q", want)
		}
	}
}
