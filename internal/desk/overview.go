package desk

import (
	"context"
	"fmt"
	"net/http"
	"strings"

	"github.com/agent-interop/runtime/ent"
	"github.com/agent-interop/runtime/ent/predicate"
	"github.com/agent-interop/runtime/ent/workitem"
	"github.com/agent-interop/runtime/internal/desk/markup"
)

// The whole-store dependency overview (/desk/graph). A store of thousands
// of items drawn at once is a hairball, so the overview draws only what
// is still to be done and tied to something else still to be done: the
// unfinished items with an unfinished dependency or dependent, the most
// recently updated first, at most maxGraphNodes, clustered by status; a
// session filter narrows it to one agent's work. Everything else is
// counted, not drawn.

// Overview is the data of the overview page.
type Overview struct {
	Graph   Graph
	Session string
	Chained int // unfinished items in a dependency chain, drawn or not
	OOB     string
}

// mark is the overview's cursor for its live stream: it changes when
// what is drawn or counted changes.
func (o Overview) mark() string {
	return digest(fmt.Sprint(o.Chained, "\x00", o.Graph.Mermaid))
}

func chained() predicate.WorkItem {
	return workitem.And(unfinished(), workitem.Or(workitem.HasDependsOnWith(unfinished()), workitem.HasDependentsWith(unfinished())))
}

func (r *reader) overview(ctx context.Context, session string) (Overview, error) {
	o := Overview{Session: session}
	q := r.client.WorkItem.Query().Where(chained())
	if session != "" {
		q = q.Where(workitem.Or(workitem.SourceSession(session), workitem.DestinationSession(session)))
	}
	n, err := q.Clone().Count(ctx)
	if err != nil {
		return o, fmt.Errorf("count the work items in dependency chains: %w", err)
	}
	o.Chained = n
	items, err := q.Order(ent.Desc(workitem.FieldUpdatedAt), ent.Desc(workitem.FieldID)).Limit(maxGraphNodes).
		Select(workitem.FieldID, workitem.FieldObjective, workitem.FieldStatus).All(ctx)
	if err != nil {
		return o, fmt.Errorf("read the work items in dependency chains: %w", err)
	}
	g := Graph{Truncated: n > len(items)}
	keys := map[string]string{}
	ids := make([]string, 0, len(items))
	for i, w := range items {
		key := fmt.Sprintf("n%d", i)
		keys[w.ID] = key
		ids = append(ids, w.ID)
		g.Nodes = append(g.Nodes, GraphNode{Key: key, ID: w.ID, Objective: w.Objective, Status: string(w.Status), Distance: 1})
	}
	for _, id := range ids {
		deps, err := r.client.WorkItem.Query().Where(workitem.ID(id)).QueryDependsOn().Where(workitem.IDIn(ids...)).
			Order(ent.Asc(workitem.FieldID)).IDs(ctx)
		if err != nil {
			return o, fmt.Errorf("read the dependencies of %s: %w", id, err)
		}
		for _, d := range deps {
			g.Edges = append(g.Edges, GraphEdge{From: id, To: d})
		}
	}
	if err := r.markBlockedNodes(ctx, g.Nodes); err != nil {
		return o, err
	}
	g.Mermaid = mermaidClusters(g, keys)
	o.Graph = g
	return o, nil
}

// mermaidClusters writes the overview as a Mermaid flowchart with one
// subgraph per status; labels are cut and escaped as in mermaidSource.
func mermaidClusters(g Graph, keys map[string]string) string {
	var b strings.Builder
	b.WriteString("flowchart LR\n")
	for _, status := range workStatuses {
		var ns []GraphNode
		for _, n := range g.Nodes {
			if n.Status == status {
				ns = append(ns, n)
			}
		}
		if len(ns) == 0 {
			continue
		}
		fmt.Fprintf(&b, "  subgraph c_%s[\"%s\"]\n", status, mermaidText(strings.ReplaceAll(status, "_", " "), 20))
		for _, n := range ns {
			fmt.Fprintf(&b, "    %s[\"%s<br/>%s\"]\n", n.Key, mermaidText(n.Objective, 48), mermaidText(n.ID, 24))
		}
		b.WriteString("  end\n")
		keysOf := make([]string, len(ns))
		for i, n := range ns {
			keysOf[i] = n.Key
		}
		fmt.Fprintf(&b, "  class %s st_%s\n", strings.Join(keysOf, ","), status)
	}
	for _, e := range g.Edges {
		fmt.Fprintf(&b, "  %s --> %s\n", keys[e.From], keys[e.To])
	}
	for _, status := range workStatuses {
		fmt.Fprintf(&b, "  classDef st_%s stroke-dasharray:0\n", status)
	}
	return b.String()
}

func (h *Handler) overviewPage(w http.ResponseWriter, r *http.Request) {
	ctx, cancel := h.withCtx(r)
	defer cancel()
	o, err := snapshotOf(ctx, h.read, func(rd *reader) (Overview, error) {
		return rd.overview(ctx, strings.TrimSpace(r.URL.Query().Get("session")))
	})
	if err != nil {
		h.fail(w, err)
		return
	}
	live := Base + "/live/graph" + queryString("session", o.Session, "since", o.mark())
	h.render(w, http.StatusOK, "graph", h.page("Dependency overview", "work", live, o))
}

// stepGraph sends the overview again when what it draws or counts
// changed; desk.js draws the new graph and highlights the new ties.
func stepGraph(ctx context.Context, s *stream) ([]string, error) {
	o, err := snapshotOf(ctx, s.h.read, func(r *reader) (Overview, error) {
		return r.overview(ctx, strings.TrimSpace(s.r.URL.Query().Get("session")))
	})
	if err != nil {
		return nil, err
	}
	if m := o.mark(); m != s.mark {
		s.mark = m
		o.OOB = "true"
		return []string{fragment(func(w *markup.Writer) { overviewGraphHTML(w, o) })}, nil
	}
	return nil, nil
}
