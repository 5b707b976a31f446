package importstate

import (
	"fmt"
	"io"
	"strings"
	"text/tabwriter"
)

// Record kinds, in the order an import writes them.
const (
	KindWork         = "work items"
	KindEvidence     = "evidence"
	KindHandoff      = "handoffs"
	KindReview       = "reviews"
	KindClaim        = "claims"
	KindConversation = "conversations"
	KindParticipant  = "participants"
	KindMessage      = "messages" // each with the delivery operation that carries it
)

var kindOrder = []string{KindWork, KindEvidence, KindHandoff, KindReview, KindClaim, KindConversation, KindParticipant, KindMessage}

// Count is what an import found for one kind of record.
type Count struct {
	Kind string `json:"kind"`
	// InFiles is how many records the files hold.
	InFiles int `json:"inFiles"`
	// New records are not in the store yet: a real run writes them.
	New int `json:"new"`
	// Present records are in the store with the same content; Changed of
	// them have since changed in the store (a status, a lease, a later
	// outcome), which the import keeps as the store has it.
	Present int `json:"present"`
	Changed int `json:"changedInStore"`
	// Conflicts are records whose id is in the store with other content.
	Conflicts int `json:"conflicts"`
}

// Conflict is a record the store cannot take as it is: its id is there
// with other content in Field (Store and File are the two values), or,
// with Reason, it collides with another record of the store.
type Conflict struct {
	Kind   string `json:"kind"`
	ID     string `json:"id"`
	At     string `json:"at"` // file:line:column of the field (or record)
	Field  string `json:"field"`
	Store  string `json:"store,omitempty"`
	File   string `json:"file,omitempty"`
	Reason string `json:"reason,omitempty"`
}

func (c Conflict) String() string {
	if c.Reason != "" {
		return fmt.Sprintf("%s: %s %s: %s", c.At, singular(c.Kind), c.ID, c.Reason)
	}
	return fmt.Sprintf("%s: %s %s: %s differs (store %s, file %s)", c.At, singular(c.Kind), c.ID, c.Field, c.Store, c.File)
}

// Report is the outcome of an import or a dry run.
type Report struct {
	DryRun bool          `json:"dryRun"`
	Store  string        `json:"store"`
	Files  []FileSummary `json:"files"`
	Counts []Count       `json:"counts"`
	// Deliveries counts the imported delivery operations by the status they
	// were given; InFlight of the delivery_unknown ones were in flight.
	Deliveries map[string]int `json:"deliveries"`
	InFlight   int            `json:"inFlight"`
	Conflicts  []Conflict     `json:"conflicts"`
	Notes      []string       `json:"notes"`
	// Written is true when the import committed records; Unchanged when
	// every record was already there (a repeated run).
	Written   bool `json:"written"`
	Unchanged bool `json:"unchanged"`
	// StoreMissing: the store did not exist (a dry run creates none; a real
	// run creates it).
	StoreMissing bool `json:"storeMissing,omitempty"`
}

func (r *Report) count(kind string) *Count {
	for i := range r.Counts {
		if r.Counts[i].Kind == kind {
			return &r.Counts[i]
		}
	}
	r.Counts = append(r.Counts, Count{Kind: kind})
	return &r.Counts[len(r.Counts)-1]
}

// New returns how many records of all kinds are new.
func (r *Report) New() int {
	n := 0
	for _, c := range r.Counts {
		n += c.New
	}
	return n
}

// Total returns how many records the files hold.
func (r *Report) Total() int {
	n := 0
	for _, c := range r.Counts {
		n += c.InFiles
	}
	return n
}

// Render writes the report for a person.
func (r *Report) Render(w io.Writer) {
	verb := "import"
	if r.DryRun {
		verb = "dry run"
	}
	var files []string
	for _, f := range r.Files {
		switch {
		case f.Found:
			files = append(files, f.Path)
		default:
			files = append(files, f.Path+" (not found, skipped)")
		}
	}
	fmt.Fprintf(w, "%s: %s\n  into %s\n", verb, strings.Join(files, ", "), r.Store)
	for _, f := range r.Files {
		for _, ig := range f.Ignored {
			fmt.Fprintf(w, "  not imported from %s: %s\n", f.Path, ig)
		}
	}
	fmt.Fprintln(w)
	tw := tabwriter.NewWriter(w, 0, 0, 2, ' ', tabwriter.AlignRight)
	fmt.Fprintln(tw, "\tin files\tnew\talready there\tchanged there since\tconflicts\t")
	for _, c := range r.Counts {
		fmt.Fprintf(tw, "%s\t%d\t%d\t%d\t%d\t%d\t\n", c.Kind, c.InFiles, c.New, c.Present, c.Changed, c.Conflicts)
	}
	tw.Flush()
	if len(r.Deliveries) > 0 {
		var parts []string
		for _, s := range []string{"completed", "queued", "rejected", "delivery_unknown"} {
			if n := r.Deliveries[s]; n > 0 {
				p := fmt.Sprintf("%s %d", s, n)
				if s == "delivery_unknown" && r.InFlight > 0 {
					p += fmt.Sprintf(" (%d in flight in 0.3.x, never resent)", r.InFlight)
				}
				parts = append(parts, p)
			}
		}
		fmt.Fprintf(w, "\nnew delivery operations: %s\n", strings.Join(parts, ", "))
	}
	if len(r.Notes) > 0 {
		fmt.Fprintln(w, "\nnotes:")
		for _, n := range r.Notes {
			fmt.Fprintln(w, "  "+n)
		}
	}
	if len(r.Conflicts) > 0 {
		fmt.Fprintln(w, "\nconflicts with what the store has:")
		for _, c := range r.Conflicts {
			fmt.Fprintln(w, "  "+c.String())
		}
	}
	fmt.Fprintln(w)
	fmt.Fprintln(w, r.Summary())
}

// Summary is the report's last line.
func (r *Report) Summary() string {
	switch {
	case len(r.Conflicts) > 0 && r.DryRun:
		return fmt.Sprintf("dry run: %d conflicts; a real run would refuse the import. Nothing was written.", len(r.Conflicts))
	case len(r.Conflicts) > 0:
		return fmt.Sprintf("refused: %d conflicts; nothing was written (the store is unchanged).", len(r.Conflicts))
	case r.DryRun && r.New() == 0:
		return fmt.Sprintf("dry run: every one of the %d records is already in the store; a real run would change nothing. Nothing was written.", r.Total())
	case r.DryRun:
		return fmt.Sprintf("dry run: a real run would write %d new records in one transaction. Nothing was written.", r.New())
	case r.Unchanged:
		return fmt.Sprintf("nothing to import: every one of the %d records is already in the store; the store is unchanged.", r.Total())
	}
	return fmt.Sprintf("imported %d new records in one transaction.", r.New())
}

func singular(kind string) string {
	switch kind {
	case KindWork:
		return "work item"
	case KindEvidence:
		return "evidence"
	}
	return strings.TrimSuffix(kind, "s")
}
