package desk

import (
	"context"
	"fmt"
	"strings"

	"github.com/agent-interop/runtime/ent"
	"github.com/agent-interop/runtime/ent/workitem"
)

// Bounds of a work item's neighbourhood graph.
const (
	DefaultGraphDepth = 2
	MaxGraphDepth     = 3
	maxGraphNodes     = 40
)

// Graph is the dependency neighbourhood of one work item: the items it
// depends on and the items that depend on it, up to a depth, as nodes and
// "depends on" edges, with the Mermaid source that draws it.
type Graph struct {
	Focus     string
	Depth     int
	Nodes     []GraphNode
	Edges     []GraphEdge
	Truncated bool
	Mermaid   string
}

// GraphNode is one work item of the graph.
type GraphNode struct {
	Key       string // n0, n1, ...: the Mermaid node id (never user text)
	ID        string
	Objective string
	Status    string
	Distance  int
}

// GraphEdge says From depends on To.
type GraphEdge struct{ From, To string }

// DOMID is the element id of the edge's line in a list of ties.
func (e GraphEdge) DOMID() string { return domID("ge-", e.From+"--"+e.To) }

// neighbourhood walks depends_on edges both ways from w, breadth first.
func (r *reader) neighbourhood(ctx context.Context, w *ent.WorkItem, depth int) (Graph, error) {
	if depth <= 0 {
		depth = DefaultGraphDepth
	}
	depth = min(depth, MaxGraphDepth)
	g := Graph{Focus: w.ID, Depth: depth}
	keys := map[string]string{}
	add := func(item *ent.WorkItem, dist int) bool {
		if _, ok := keys[item.ID]; ok {
			return true
		}
		if len(g.Nodes) >= maxGraphNodes {
			g.Truncated = true
			return false
		}
		key := fmt.Sprintf("n%d", len(g.Nodes))
		keys[item.ID] = key
		g.Nodes = append(g.Nodes, GraphNode{Key: key, ID: item.ID, Objective: item.Objective, Status: string(item.Status), Distance: dist})
		return true
	}
	add(w, 0)
	edges := map[GraphEdge]bool{}
	frontier := []string{w.ID}
	for dist := 1; dist <= depth && len(frontier) > 0; dist++ {
		var next []string
		for _, id := range frontier {
			deps, err := r.client.WorkItem.Query().Where(workitem.ID(id)).QueryDependsOn().
				Order(ent.Asc(workitem.FieldID)).Limit(maxGraphNodes+1).
				Select(workitem.FieldID, workitem.FieldObjective, workitem.FieldStatus).All(ctx)
			if err != nil {
				return g, fmt.Errorf("read the dependencies of %s: %w", id, err)
			}
			waiting, err := r.client.WorkItem.Query().Where(workitem.ID(id)).QueryDependents().
				Order(ent.Asc(workitem.FieldID)).Limit(maxGraphNodes+1).
				Select(workitem.FieldID, workitem.FieldObjective, workitem.FieldStatus).All(ctx)
			if err != nil {
				return g, fmt.Errorf("read the dependents of %s: %w", id, err)
			}
			for _, d := range deps {
				_, seen := keys[d.ID]
				if !add(d, dist) {
					continue
				}
				edges[GraphEdge{From: id, To: d.ID}] = true
				if !seen {
					next = append(next, d.ID)
				}
			}
			for _, d := range waiting {
				_, seen := keys[d.ID]
				if !add(d, dist) {
					continue
				}
				edges[GraphEdge{From: d.ID, To: id}] = true
				if !seen {
					next = append(next, d.ID)
				}
			}
		}
		frontier = next
	}
	for _, n := range g.Nodes { // keep a stable order: by node, then target
		for _, m := range g.Nodes {
			if edges[GraphEdge{From: n.ID, To: m.ID}] {
				g.Edges = append(g.Edges, GraphEdge{From: n.ID, To: m.ID})
			}
		}
	}
	if err := r.markBlockedNodes(ctx, g.Nodes); err != nil {
		return g, err
	}
	g.Mermaid = mermaidSource(g, keys)
	return g, nil
}

// mermaidSource writes the graph as a Mermaid flowchart. Every label is
// user text: it is cut, and each character Mermaid gives a meaning inside
// a quoted label is written as an entity code, so the label is drawn as
// text (the page also runs Mermaid with securityLevel "strict").
func mermaidSource(g Graph, keys map[string]string) string {
	var b strings.Builder
	b.WriteString("flowchart LR\n")
	for _, n := range g.Nodes {
		fmt.Fprintf(&b, "  %s[\"%s<br/>%s · %s\"]\n", n.Key, mermaidText(n.ID, 40), mermaidText(n.Objective, 60), mermaidText(n.Status, 20))
	}
	for _, e := range g.Edges {
		fmt.Fprintf(&b, "  %s -->|depends on| %s\n", keys[e.From], keys[e.To])
	}
	b.WriteString("  classDef focus stroke-width:4px\n")
	for _, n := range g.Nodes {
		if n.Distance == 0 {
			fmt.Fprintf(&b, "  class %s focus\n", n.Key)
		}
	}
	for _, status := range workStatuses {
		var ks []string
		for _, n := range g.Nodes {
			if n.Status == status {
				ks = append(ks, n.Key)
			}
		}
		if len(ks) > 0 {
			fmt.Fprintf(&b, "  class %s st_%s\n", strings.Join(ks, ","), status)
		}
	}
	// Mermaid's classDef cannot name CSS variables, so the classes only
	// mark the nodes: desk.css colours them with the page's variables,
	// and the nodes follow its light or dark scheme like the badges do.
	for _, status := range workStatuses {
		fmt.Fprintf(&b, "  classDef st_%s stroke-dasharray:0\n", status)
	}
	return b.String()
}

// mermaidText makes s safe and short for a quoted Mermaid label.
func mermaidText(s string, limit int) string {
	s = strings.Join(strings.Fields(s), " ")
	if r := []rune(s); len(r) > limit {
		s = string(r[:limit-1]) + "…"
	}
	var b strings.Builder
	for _, c := range s {
		switch c {
		case '#':
			b.WriteString("#35;")
		case '"':
			b.WriteString("#quot;")
		case '<':
			b.WriteString("#lt;")
		case '>':
			b.WriteString("#gt;")
		case '&':
			b.WriteString("#amp;")
		case '`':
			b.WriteString("#96;")
		case '\\':
			b.WriteString("#92;")
		default:
			b.WriteRune(c)
		}
	}
	return b.String()
}
