package workcli

import (
	"bufio"
	"fmt"
	"io"
	"strings"

	"github.com/agent-interop/runtime/internal/store"
	"github.com/agent-interop/runtime/internal/workflow"
)

// graphWriter renders the streamed whole-store graph in one format.
type graphWriter interface {
	workflow.GraphSink
	Close() error
}

// jsonLinesWriter writes one JSON object per line: {"work":{...}},
// {"evidence":{...}}, ..., {"edge":{...}}.
type jsonLinesWriter struct{ w *bufio.Writer }

func newJSONLinesWriter(w io.Writer) *jsonLinesWriter { return &jsonLinesWriter{w: bufio.NewWriter(w)} }

func (j *jsonLinesWriter) line(kind string, v any) error {
	raw, err := workflow.CompactJSON(map[string]any{kind: v})
	if err != nil {
		return err
	}
	j.w.Write(raw)
	return j.w.WriteByte('\n')
}

func (j *jsonLinesWriter) Recovery(r *store.Recovery) error {
	return j.line("stateRecoveryRequired", r)
}
func (j *jsonLinesWriter) Work(v workflow.Work) error             { return j.line("work", v) }
func (j *jsonLinesWriter) Evidence(v workflow.EvidenceMeta) error { return j.line("evidence", v) }
func (j *jsonLinesWriter) Handoff(v workflow.Handoff) error       { return j.line("handoff", v) }
func (j *jsonLinesWriter) Review(v workflow.Review) error         { return j.line("review", v) }
func (j *jsonLinesWriter) Claim(v workflow.GraphClaim) error      { return j.line("claim", v) }
func (j *jsonLinesWriter) Session(v workflow.GraphSession) error  { return j.line("session", v) }
func (j *jsonLinesWriter) Edge(v workflow.Edge) error             { return j.line("edge", v) }
func (j *jsonLinesWriter) Close() error                           { return j.w.Flush() }

// tableWriter prints the edges as they arrive and the counts at the end.
type tableWriter struct {
	w                                          *bufio.Writer
	works, evidence, handoffs, reviews, claims int
	sessions, edges                            int
	header                                     bool
}

func newTableWriter(w io.Writer) *tableWriter { return &tableWriter{w: bufio.NewWriter(w)} }

func (t *tableWriter) Recovery(r *store.Recovery) error {
	if r != nil {
		fmt.Fprintf(t.w, "STATE RECOVERY REQUIRED: %s was moved to %s (%s)\n\n", r.File, r.PreservedFile, r.Reason)
	}
	return nil
}
func (t *tableWriter) Work(workflow.Work) error             { t.works++; return nil }
func (t *tableWriter) Evidence(workflow.EvidenceMeta) error { t.evidence++; return nil }
func (t *tableWriter) Handoff(workflow.Handoff) error       { t.handoffs++; return nil }
func (t *tableWriter) Review(workflow.Review) error         { t.reviews++; return nil }
func (t *tableWriter) Claim(workflow.GraphClaim) error      { t.claims++; return nil }
func (t *tableWriter) Session(workflow.GraphSession) error  { t.sessions++; return nil }

func (t *tableWriter) Edge(e workflow.Edge) error {
	if !t.header {
		fmt.Fprintf(t.w, "%-40s %-22s %-40s %s\n", "FROM", "KIND", "TO", "VIA")
		t.header = true
	}
	t.edges++
	via := e.Ref
	if via == "" {
		via = "-"
	}
	_, err := fmt.Fprintf(t.w, "%-40s %-22s %-40s %s\n", e.From, e.Kind, e.To, via)
	return err
}

func (t *tableWriter) Close() error {
	if t.header {
		t.w.WriteByte('\n')
	}
	fmt.Fprintf(t.w, "%d sessions, %d works, %d evidence, %d handoffs, %d reviews, %d claims, %d edges\n",
		t.sessions, t.works, t.evidence, t.handoffs, t.reviews, t.claims, t.edges)
	return t.w.Flush()
}

// dotWriter writes a Graphviz digraph: one node line per record, one edge
// line per edge (a node named only by an edge is drawn by Graphviz too).
type dotWriter struct{ w *bufio.Writer }

func newDOTWriter(w io.Writer) *dotWriter {
	d := &dotWriter{w: bufio.NewWriter(w)}
	d.w.WriteString("digraph work {\n  rankdir=LR;\n  node [shape=box, fontsize=10];\n")
	return d
}

func dotQuote(s string) string {
	return `"` + strings.NewReplacer(`\`, `\\`, `"`, `\"`, "\n", `\n`).Replace(s) + `"`
}

func (d *dotWriter) node(id, label, shape string) error {
	_, err := fmt.Fprintf(d.w, "  %s [label=%s, shape=%s];\n", dotQuote(id), dotQuote(label), shape)
	return err
}

func (d *dotWriter) Recovery(r *store.Recovery) error {
	if r != nil {
		fmt.Fprintf(d.w, "  // STATE RECOVERY REQUIRED: %s was moved to %s\n", r.File, r.PreservedFile)
	}
	return nil
}

func (d *dotWriter) Work(v workflow.Work) error {
	return d.node(v.ID, v.ID+"\n"+v.Status+"\n"+oneLine(v.Objective, 40), "box")
}
func (d *dotWriter) Evidence(v workflow.EvidenceMeta) error {
	return d.node(v.ID, v.ID+"\n"+v.Kind+" / "+v.Trust, "note")
}
func (d *dotWriter) Handoff(v workflow.Handoff) error { return d.node(v.ID, v.ID+"\n"+v.Status, "cds") }
func (d *dotWriter) Review(v workflow.Review) error {
	return d.node(v.ID, v.ID+"\n"+v.Verdict, "diamond")
}
func (d *dotWriter) Claim(v workflow.GraphClaim) error {
	return d.node(v.ID, v.ID+"\n"+v.Resource+" ("+v.Status+")", "hexagon")
}
func (d *dotWriter) Session(v workflow.GraphSession) error { return d.node(v.ID, v.ID, "ellipse") }
func (d *dotWriter) Edge(e workflow.Edge) error {
	_, err := fmt.Fprintf(d.w, "  %s -> %s [label=%s];\n", dotQuote(e.From), dotQuote(e.To), dotQuote(e.Kind))
	return err
}
func (d *dotWriter) Close() error {
	d.w.WriteString("}\n")
	return d.w.Flush()
}

// mermaidWriter writes a Mermaid flowchart; node IDs are the record IDs
// with every character outside [A-Za-z0-9_] replaced by '_'.
type mermaidWriter struct{ w *bufio.Writer }

func newMermaidWriter(w io.Writer) *mermaidWriter {
	m := &mermaidWriter{w: bufio.NewWriter(w)}
	m.w.WriteString("flowchart LR\n")
	return m
}

func mermaidID(id string) string {
	return strings.Map(func(r rune) rune {
		if r == '_' || r >= 'a' && r <= 'z' || r >= 'A' && r <= 'Z' || r >= '0' && r <= '9' {
			return r
		}
		return '_'
	}, id)
}

func mermaidLabel(s string) string {
	return `"` + strings.NewReplacer(`"`, "#quot;", "\n", "<br/>").Replace(s) + `"`
}

func (m *mermaidWriter) node(id, label, open, close string) error {
	_, err := fmt.Fprintf(m.w, "  %s%s%s%s\n", mermaidID(id), open, mermaidLabel(label), close)
	return err
}

func (m *mermaidWriter) Recovery(r *store.Recovery) error {
	if r != nil {
		fmt.Fprintf(m.w, "  %%%% STATE RECOVERY REQUIRED: %s was moved to %s\n", r.File, r.PreservedFile)
	}
	return nil
}

func (m *mermaidWriter) Work(v workflow.Work) error {
	return m.node(v.ID, v.ID+"\n"+v.Status+"\n"+oneLine(v.Objective, 40), "[", "]")
}
func (m *mermaidWriter) Evidence(v workflow.EvidenceMeta) error {
	return m.node(v.ID, v.ID+"\n"+v.Kind, "[/", "/]")
}
func (m *mermaidWriter) Handoff(v workflow.Handoff) error {
	return m.node(v.ID, v.ID+"\n"+v.Status, ">", "]")
}
func (m *mermaidWriter) Review(v workflow.Review) error {
	return m.node(v.ID, v.ID+"\n"+v.Verdict, "{", "}")
}
func (m *mermaidWriter) Claim(v workflow.GraphClaim) error {
	return m.node(v.ID, v.ID+"\n"+v.Resource+" ("+v.Status+")", "{{", "}}")
}
func (m *mermaidWriter) Session(v workflow.GraphSession) error { return m.node(v.ID, v.ID, "([", "])") }
func (m *mermaidWriter) Edge(e workflow.Edge) error {
	_, err := fmt.Fprintf(m.w, "  %s -->|%s| %s\n", mermaidID(e.From), e.Kind, mermaidID(e.To))
	return err
}
func (m *mermaidWriter) Close() error { return m.w.Flush() }
