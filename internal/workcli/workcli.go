// Package workcli is the `interop-runtime work` command: list, show and
// graph the coordination store's work from a terminal, as readable tables
// or as the MCP answers' compact JSON, streaming what could be large.
package workcli

import (
	"context"
	"flag"
	"fmt"
	"io"
	"strings"
	"text/tabwriter"

	"github.com/agent-interop/runtime/internal/delivery"
	"github.com/agent-interop/runtime/internal/workflow"
)

const workUsage = `usage: interop-runtime work list [--status S] [--session S] [--limit N] [--cursor C] [--all]
                                [--json]
       interop-runtime work show <workId> [--limit N] [--cursor C] [--json]
       interop-runtime work graph [--json | --dot | --mermaid]
                                  (the whole store, streamed; --json is JSON Lines)
       interop-runtime work graph --work <workId> [--depth N] [--json] (one neighbourhood)`

// Run runs `interop-runtime work ...` and returns the exit code:
// 0 on success, 1 when the command failed, 2 on a usage error. Output is a
// readable table by default and compact JSON (the MCP answer shape) with
// --json. `work graph` streams the whole store (JSON Lines, DOT or
// Mermaid) without holding it in memory; `work list --all` pages through
// every work the same way.
func Run(ctx context.Context, svc *workflow.Service, args []string, stdout, stderr io.Writer, opts ...Option) int {
	var o options
	for _, opt := range opts {
		opt(&o)
	}
	fs := flag.NewFlagSet("work", flag.ContinueOnError)
	fs.SetOutput(io.Discard)
	asJSON := fs.Bool("json", false, "compact JSON (the MCP answer); with graph (whole store): JSON Lines, one node or edge per line")
	dot := fs.Bool("dot", false, "graph: Graphviz DOT")
	mermaid := fs.Bool("mermaid", false, "graph: a Mermaid flowchart")
	all := fs.Bool("all", false, "list: every page, streamed")
	status := fs.String("status", "", "list: only this status (open, in_progress, blocked, accepted, rejected)")
	session := fs.String("session", "", "list: only works of this session")
	limit := fs.Int64("limit", 0, "page size (0: the default)")
	cursor := fs.String("cursor", "", "the next page's cursor, printed after a page")
	workID := fs.String("work", "", "graph: only this work's neighbourhood")
	depth := fs.Int64("depth", workflow.DefaultGraphDepth, "graph --work: how many dependency steps to follow")
	for _, a := range args {
		if a == "-h" || a == "--help" || a == "-help" || a == "help" {
			printUsage(stdout, fs)
			return 0
		}
	}
	rest, err := parseInterleaved(fs, args)
	if err != nil {
		fmt.Fprintf(stderr, "interop-runtime work: %v\n", err)
		printUsage(stderr, fs)
		return 2
	}
	if len(rest) == 0 {
		rest = []string{"list"}
	}
	var (
		result any
		render func(io.Writer)
	)
	switch {
	case rest[0] == "list" && len(rest) == 1 && *all:
		err = streamWorkList(ctx, svc, workflow.WorkFilter{Status: *status, Session: *session}, *asJSON, stdout)
		if err == nil {
			return 0
		}
	case rest[0] == "list" && len(rest) == 1:
		var l workflow.WorkList
		l, err = svc.ListWorks(ctx, workflow.ListWorksInput{WorkFilter: workflow.WorkFilter{Status: *status, Session: *session}, Limit: *limit, Cursor: *cursor})
		result, render = l, func(w io.Writer) { renderWorkList(w, l, true) }
	case rest[0] == "show" && len(rest) == 2:
		var d workflow.WorkDetail
		d, err = svc.GetWork(ctx, workflow.GetWorkInput{WorkID: rest[1], Limit: *limit, Cursor: *cursor})
		shown := workShown{WorkDetail: d}
		var usage string
		if err == nil && o.totals != nil {
			var t delivery.Totals
			if t, err = o.totals(ctx, d.Work.ID); err == nil {
				shown.Usage, usage = totalsAnswer(t), t.Text()
			}
		}
		result, render = shown, func(w io.Writer) { renderWorkDetail(w, d, usage) }
	case rest[0] == "graph" && len(rest) == 1 && *workID != "":
		var g workflow.Graph
		g, err = svc.WorkGraph(ctx, workflow.GraphInput{WorkID: *workID, Depth: depth, Limit: *limit, Cursor: *cursor})
		result, render = g, func(w io.Writer) { renderGraph(w, g) }
	case rest[0] == "graph" && len(rest) == 1:
		sink := newGraphWriter(stdout, *dot, *mermaid, *asJSON)
		if err = svc.StreamGraph(ctx, sink); err == nil {
			err = sink.Close()
		}
		if err == nil {
			return 0
		}
	default:
		printUsage(stderr, fs)
		return 2
	}
	if err != nil {
		fmt.Fprintln(stderr, "interop-runtime work:", err)
		return 1
	}
	return printResult(result, render, *asJSON, stdout, stderr)
}

// printUsage prints the synopsis and every flag with its help.
func printUsage(w io.Writer, fs *flag.FlagSet) {
	fmt.Fprintln(w, workUsage)
	fmt.Fprintln(w, "\nflags:")
	PrintFlags(w, fs)
	fmt.Fprintln(w, "  -db string\n"+flagIndent+"the store: a SQLite file or a postgres:// URL (overrides INTEROP_DB)")
}

// parseInterleaved parses args with fs, letting flags follow the
// subcommand and its argument, and returns the non-flag arguments.
func parseInterleaved(fs *flag.FlagSet, args []string) ([]string, error) {
	var rest []string
	for len(args) > 0 {
		if err := fs.Parse(args); err != nil {
			return nil, err
		}
		args = fs.Args()
		if len(args) > 0 {
			rest = append(rest, args[0])
			args = args[1:]
		}
	}
	return rest, nil
}

// newGraphWriter is the sink `work graph` streams into: DOT, Mermaid,
// JSON Lines or, by default, a table.
func newGraphWriter(w io.Writer, dot, mermaid, asJSON bool) graphWriter {
	switch {
	case dot:
		return newDOTWriter(w)
	case mermaid:
		return newMermaidWriter(w)
	case asJSON:
		return newJSONLinesWriter(w)
	default:
		return newTableWriter(w)
	}
}

// printResult prints a command's answer: compact JSON with --json, else
// render's table.
func printResult(result any, render func(io.Writer), asJSON bool, stdout, stderr io.Writer) int {
	if asJSON {
		raw, err := workflow.CompactJSON(result)
		if err != nil {
			fmt.Fprintln(stderr, "interop-runtime work:", err)
			return 1
		}
		fmt.Fprintln(stdout, string(raw))
		return 0
	}
	render(stdout)
	return 0
}

// streamWorkList prints every work the filter selects, page by page.
func streamWorkList(ctx context.Context, svc *workflow.Service, f workflow.WorkFilter, asJSON bool, w io.Writer) error {
	cursor := ""
	first := true
	for {
		l, err := svc.ListWorks(ctx, workflow.ListWorksInput{WorkFilter: f, Limit: workflow.MaxPageLimit, Cursor: cursor})
		if err != nil {
			return err
		}
		if asJSON {
			for _, x := range l.Works {
				raw, err := workflow.CompactJSON(x)
				if err != nil {
					return err
				}
				fmt.Fprintln(w, string(raw))
			}
		} else {
			renderWorkList(w, workflow.WorkList{Works: l.Works}, first)
		}
		first = false
		if l.NextCursor == "" {
			return nil
		}
		cursor = l.NextCursor
	}
}

func table(w io.Writer) *tabwriter.Writer { return tabwriter.NewWriter(w, 0, 4, 2, ' ', 0) }

func orDash(p *string) string {
	if p == nil || *p == "" {
		return "-"
	}
	return *p
}

// oneLine shortens s to n characters on a single line.
func oneLine(s string, n int) string {
	s = strings.Join(strings.Fields(s), " ")
	if r := []rune(s); len(r) > n {
		return string(r[:n]) + "…"
	}
	return s
}

func renderWorkList(w io.Writer, l workflow.WorkList, header bool) {
	if len(l.Works) == 0 && header {
		fmt.Fprintln(w, "No work items.")
		return
	}
	tw := table(w)
	if header {
		fmt.Fprintln(tw, "ID\tSTATUS\tUPDATED\tCRITERIA\tEVIDENCE\tOBJECTIVE")
	}
	for _, x := range l.Works {
		n := len(x.EvidenceIDs)
		if x.EvidenceCount > 0 {
			n = x.EvidenceCount
		}
		fmt.Fprintf(tw, "%s\t%s\t%s\t%d\t%d\t%s\n", x.ID, x.Status, x.UpdatedAt, x.AcceptanceCriteriaCount, n, oneLine(x.ObjectivePreview, 60))
	}
	tw.Flush()
	if l.NextCursor != "" {
		fmt.Fprintf(w, "\nMore: --cursor %s (or --all)\n", l.NextCursor)
	}
}

func renderWorkDetail(w io.Writer, d workflow.WorkDetail, usage string) {
	x := d.Work
	tw := table(w)
	fmt.Fprintf(tw, "Work\t%s\n", x.ID)
	fmt.Fprintf(tw, "Status\t%s\n", x.Status)
	fmt.Fprintf(tw, "Sessions\t%s -> %s\n", orDash(x.SourceSession), orDash(x.DestinationSession))
	fmt.Fprintf(tw, "Created / updated\t%s / %s\n", x.CreatedAt, x.UpdatedAt)
	if len(x.DependsOn) > 0 {
		fmt.Fprintf(tw, "Depends on\t%s\n", strings.Join(x.DependsOn, ", "))
	}
	if usage != "" {
		fmt.Fprintf(tw, "Usage\t%s\n", usage)
	}
	tw.Flush()
	fmt.Fprintf(w, "\nObjective:\n  %s\n", strings.ReplaceAll(x.Objective, "\n", "\n  "))
	bullets := func(title string, items []string) {
		if len(items) == 0 {
			return
		}
		fmt.Fprintf(w, "\n%s:\n", title)
		for _, it := range items {
			fmt.Fprintf(w, "  - %s\n", it)
		}
	}
	bullets("Acceptance criteria", x.AcceptanceCriteria)
	bullets("Risks", x.Risks)
	bullets("Unresolved questions", x.UnresolvedQuestions)
	bullets("Changed files", x.ChangedFiles)
	if len(d.Evidence) > 0 {
		fmt.Fprintln(w, "\nEvidence:")
		tw = table(w)
		fmt.Fprintln(tw, "  ID\tKIND\tTRUST\tCAPTURED\tSUMMARY")
		for _, e := range d.Evidence {
			fmt.Fprintf(tw, "  %s\t%s\t%s\t%s\t%s\n", e.ID, e.Kind, e.Trust, e.CapturedAt, oneLine(e.Summary, 60))
		}
		tw.Flush()
	}
	if len(d.Handoffs) > 0 {
		fmt.Fprintln(w, "\nHandoffs:")
		tw = table(w)
		fmt.Fprintln(tw, "  ID\tSTATUS\tFROM\tTO\tTOKENS\tOMITTED")
		for _, h := range d.Handoffs {
			fmt.Fprintf(tw, "  %s\t%s\t%s\t%s\t%d/%d\t%s\n", h.ID, h.Status, h.SourceSession, orDash(h.DestinationSession),
				h.ContextTokens, h.TokenBudget, strings.Join(h.OmittedFields, ","))
		}
		tw.Flush()
	}
	if len(d.Reviews) > 0 {
		fmt.Fprintln(w, "\nReviews:")
		tw = table(w)
		fmt.Fprintln(tw, "  ID\tVERDICT\tREVIEWER\tFINDINGS\tPROVENANCE")
		for _, r := range d.Reviews {
			fmt.Fprintf(tw, "  %s\t%s\t%s\t%d\t%s\n", r.ID, r.Verdict, r.ReviewerSessionID, len(r.Findings), r.Provenance)
		}
		tw.Flush()
	}
	if d.NextCursor != "" {
		fmt.Fprintf(w, "\nMore related records: --cursor %s\n", d.NextCursor)
	}
}

func renderGraph(w io.Writer, g workflow.Graph) {
	if r := g.StateRecoveryRequired; r != nil {
		fmt.Fprintf(w, "STATE RECOVERY REQUIRED: %s was moved to %s (%s)\n\n", r.File, r.PreservedFile, r.Reason)
	}
	fmt.Fprintf(w, "%d sessions, %d works, %d evidence, %d handoffs, %d reviews, %d claims, %d edges\n",
		len(g.Sessions), len(g.Works), len(g.Evidence), len(g.Handoffs), len(g.Reviews), len(g.Claims), len(g.Edges))
	if o := g.Omitted; o.Works+o.Evidence+o.Handoffs+o.Reviews+o.Claims+o.Edges > 0 {
		fmt.Fprintf(w, "left out: %d works, %d evidence, %d handoffs, %d reviews, %d claims, %d edges (%s)\n",
			o.Works, o.Evidence, o.Handoffs, o.Reviews, o.Claims, o.Edges, o.Narrow)
	}
	if g.NextCursor != "" {
		fmt.Fprintf(w, "More: --cursor %s\n", g.NextCursor)
	}
	if len(g.Edges) == 0 {
		return
	}
	fmt.Fprintln(w)
	tw := table(w)
	fmt.Fprintln(tw, "FROM\tKIND\tTO\tVIA")
	for _, e := range g.Edges {
		via := e.Ref
		if via == "" {
			via = "-"
		}
		fmt.Fprintf(tw, "%s\t%s\t%s\t%s\n", e.From, e.Kind, e.To, via)
	}
	tw.Flush()
}
