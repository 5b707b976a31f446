package workflow

import (
	"context"
	"fmt"
	"io"
	"strings"
	"text/tabwriter"
)

const workUsage = "usage: interop-runtime work list [--json] | show <workId> [--json] | graph [--json]"

// RunWorkCLI runs `interop-runtime work ...` and returns the exit code:
// 0 on success, 1 when the command failed, 2 on a usage error. Output is a
// readable table by default and compact JSON (the MCP answer shape) with
// --json.
func RunWorkCLI(ctx context.Context, svc *Service, args []string, stdout, stderr io.Writer) int {
	asJSON := false
	var rest []string
	for _, a := range args {
		switch a {
		case "--json", "-json":
			asJSON = true
		case "-h", "--help", "help":
			fmt.Fprintln(stdout, workUsage)
			return 0
		default:
			rest = append(rest, a)
		}
	}
	if len(rest) == 0 {
		rest = []string{"list"}
	}
	var (
		result any
		render func(io.Writer)
		err    error
	)
	switch {
	case rest[0] == "list" && len(rest) == 1:
		var l WorkList
		l, err = svc.ListWorks(ctx)
		result, render = l, func(w io.Writer) { renderWorkList(w, l) }
	case rest[0] == "show" && len(rest) == 2:
		var d WorkDetail
		d, err = svc.GetWork(ctx, rest[1])
		result, render = d, func(w io.Writer) { renderWorkDetail(w, d) }
	case rest[0] == "graph" && len(rest) == 1:
		var g Graph
		g, err = svc.WorkGraph(ctx)
		result, render = g, func(w io.Writer) { renderGraph(w, g) }
	default:
		fmt.Fprintln(stderr, workUsage)
		return 2
	}
	if err != nil {
		fmt.Fprintln(stderr, "interop-runtime work:", err)
		return 1
	}
	if asJSON {
		raw, err := compactJSON(result)
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
	if p := preview(s, n); p != s {
		return p + "…"
	}
	return s
}

func renderWorkList(w io.Writer, l WorkList) {
	if len(l.Works) == 0 {
		fmt.Fprintln(w, "No work items.")
		return
	}
	tw := table(w)
	fmt.Fprintln(tw, "ID\tSTATUS\tUPDATED\tCRITERIA\tEVIDENCE\tOBJECTIVE")
	for _, x := range l.Works {
		fmt.Fprintf(tw, "%s\t%s\t%s\t%d\t%d\t%s\n", x.ID, x.Status, x.UpdatedAt, x.AcceptanceCriteriaCount, len(x.EvidenceIDs), oneLine(x.ObjectivePreview, 60))
	}
	tw.Flush()
}

func renderWorkDetail(w io.Writer, d WorkDetail) {
	x := d.Work
	tw := table(w)
	fmt.Fprintf(tw, "Work\t%s\n", x.ID)
	fmt.Fprintf(tw, "Status\t%s\n", x.Status)
	fmt.Fprintf(tw, "Sessions\t%s -> %s\n", orDash(x.SourceSession), orDash(x.DestinationSession))
	fmt.Fprintf(tw, "Created / updated\t%s / %s\n", x.CreatedAt, x.UpdatedAt)
	if len(x.DependsOn) > 0 {
		fmt.Fprintf(tw, "Depends on\t%s\n", strings.Join(x.DependsOn, ", "))
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
}

func renderGraph(w io.Writer, g Graph) {
	if r := g.StateRecoveryRequired; r != nil {
		fmt.Fprintf(w, "STATE RECOVERY REQUIRED: %s was moved to %s (%s)\n\n", r.File, r.PreservedFile, r.Reason)
	}
	fmt.Fprintf(w, "%d sessions, %d works, %d evidence, %d handoffs, %d reviews, %d claims, %d edges\n",
		len(g.Sessions), len(g.Works), len(g.Evidence), len(g.Handoffs), len(g.Reviews), len(g.Claims), len(g.Edges))
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
