package doctor

import (
	"encoding/json"
	"fmt"
	"io"
	"strings"
	"text/tabwriter"

	"github.com/agent-interop/runtime/internal/providers"
)

// RenderJSON writes the report as one line of compact JSON.
func RenderJSON(w io.Writer, rep Report) error {
	enc := json.NewEncoder(w)
	enc.SetEscapeHTML(false)
	if err := enc.Encode(rep); err != nil {
		return fmt.Errorf("write the doctor report: %w", err)
	}
	return nil
}

// Width is the terminal width the text reports fit: every line of Render
// and RenderProviders is at most Width columns; longer text wraps.
const Width = 100

// TextOptions tune the text reports.
type TextOptions struct {
	// Verbose adds program paths (otherwise only in --json).
	Verbose bool
}

// Render writes the report for a person: the store, a summary table of the
// providers, then each provider's handshake, capabilities (reasons and
// fixes as numbered notes) and limitations, within Width columns.
func Render(w io.Writer, rep Report) error { return RenderText(w, rep, TextOptions{}) }

// RenderText is Render with options.
func RenderText(w io.Writer, rep Report, o TextOptions) error {
	p := &printer{w: w, verbose: o.Verbose}
	p.f("interop-runtime doctor %s  (%s)\n", rep.Runtime, duration(rep.ElapsedMS))
	if rep.DeadlineReached {
		p.f("warning: the overall deadline passed; what did not answer in time is marked timeout/unknown\n")
	}
	p.f("\n")
	renderStore(p, rep.Store)
	p.f("\n")
	renderSummary(p, rep.Providers)
	for _, pr := range rep.Providers {
		p.f("\n")
		renderProvider(p, pr)
	}
	if len(rep.Cleanup) > 0 {
		p.f("\ncleanup\n")
		for _, c := range rep.Cleanup {
			p.wrapped("  - ", "    ", c)
		}
	}
	if p.err != nil {
		return fmt.Errorf("write the doctor report: %w", p.err)
	}
	return nil
}

// printer remembers the first write error.
type printer struct {
	w       io.Writer
	err     error
	verbose bool
	pad     int // between table columns (0: 2)
}

// wrapped writes text after first, wrapped at Width; continuation lines
// start with indent.
func (p *printer) wrapped(first, indent, text string) {
	for i, l := range wrap(oneLine(text), Width-len(first), Width-len(indent)) {
		lead := first
		if i > 0 {
			lead = indent
		}
		p.f("%s%s\n", lead, l)
	}
}

// kv writes label/value rows, the values aligned after the longest label
// and wrapped at Width.
func (p *printer) kv(rows [][]string) {
	n := 0
	for _, r := range rows {
		n = max(n, len(r[0]))
	}
	indent := strings.Repeat(" ", n+2)
	for _, r := range rows {
		p.wrapped(r[0]+strings.Repeat(" ", n+2-len(r[0])), indent, r[1])
	}
}

// wrap splits text into lines of at most first (the first line) and rest
// (the others) columns at spaces; a word longer than a line is cut.
func wrap(text string, first, rest int) []string {
	if text == "" {
		return []string{""}
	}
	var lines []string
	limit := max(first, 10)
	line := ""
	for _, word := range strings.Fields(text) {
		for line == "" && len(word) > limit {
			lines = append(lines, word[:limit])
			word, limit = word[limit:], max(rest, 10)
		}
		switch {
		case line == "":
			line = word
		case len(line)+1+len(word) <= limit:
			line += " " + word
		default:
			lines = append(lines, line)
			line, limit = "", max(rest, 10)
			for len(word) > limit {
				lines = append(lines, word[:limit])
				word = word[limit:]
			}
			line = word
		}
	}
	return append(lines, line)
}

func (p *printer) f(format string, args ...any) {
	if p.err == nil {
		_, p.err = fmt.Fprintf(p.w, format, args...)
	}
}

func (p *printer) table(rows [][]string) {
	if p.err != nil {
		return
	}
	pad := p.pad
	if pad == 0 {
		pad = 2
	}
	tw := tabwriter.NewWriter(p.w, 0, 0, pad, ' ', 0)
	for _, r := range rows {
		fmt.Fprintln(tw, strings.Join(r, "\t"))
	}
	p.err = tw.Flush()
}

func renderStore(p *printer, s StoreReport) {
	p.f("store\n")
	path := s.Path
	if path == "" {
		path = "-"
	}
	status := ""
	switch {
	case s.Opens && s.IntegrityChecked:
		status = "opens (integrity check passed)"
	case s.Opens:
		status = "opens"
	case !s.Exists && s.Path != "":
		status = "not created yet"
	default:
		status = "does not open"
	}
	if s.Dialect != "" && !s.Opens {
		status = "does not answer"
	}
	rows := [][]string{
		{"  path", path},
		{"  status", status},
		{"  schema", shortHash(s.SchemaVersion)},
	}
	if s.Dialect != "" {
		rows = append(rows, []string{"  dialect", s.Dialect + " (team store)"})
	}
	if s.Recovery != nil {
		rows = append(rows, []string{"  recovery", oneLine(fmt.Sprintf("REQUIRED: %s was moved aside to %s (%s) at %s",
			s.Recovery.File, s.Recovery.PreservedFile, s.Recovery.Reason, s.Recovery.DetectedAt))})
	} else if s.Opens {
		rows = append(rows, []string{"  recovery", "none"})
	}
	if s.Error != "" {
		rows = append(rows, []string{"  note", oneLine(s.Error)})
	}
	if s.Fix != "" {
		rows = append(rows, []string{"  fix", oneLine(s.Fix)})
	}
	p.kv(rows)
}

func shortHash(h string) string {
	if len(h) > 12 {
		return h[:12]
	}
	if h == "" {
		return "-"
	}
	return h
}

func renderSummary(p *printer, prs []ProviderReport) {
	rows := [][]string{{"PROVIDER", "SUMMARY", "AUTH", "PROGRAM", "VERSION", "HANDSHAKE"}}
	for _, pr := range prs {
		prog := "found"
		switch {
		case pr.Program.Path == "" || !pr.Program.Found:
			prog = "not found"
		case p.verbose:
			prog = pr.Program.Path
		}
		ver := pr.Program.Version
		if ver == "" {
			ver = "-"
		}
		hs := string(pr.Handshake.Status)
		if pr.Handshake.Status != HandshakeNotSupported {
			hs += " (" + duration(pr.Handshake.DurationMS) + ")"
		}
		rows = append(rows, []string{string(pr.Provider), pr.Summary, pr.Authorization, prog, ver, hs})
	}
	p.table(rows)
}

func renderProvider(p *printer, pr ProviderReport) {
	p.f("%s: %s (authorization %s)\n", pr.Provider, pr.Summary, pr.Authorization)
	var rows [][]string
	if pr.Program.Found {
		v := pr.Program.Version
		switch pr.Program.VersionSource {
		case VersionFromProvider:
			v += " (reported by the provider)"
		case VersionFromFlag:
			v += " (from --version)"
		case "":
			v = "version unknown"
		}
		prog := "found"
		if p.verbose {
			prog = pr.Program.Path
		}
		rows = append(rows, []string{"  program", prog + "  " + v})
	} else if pr.Program.Version != "" {
		rows = append(rows, []string{"  program", "not found here; the provider reports version " + pr.Program.Version})
	} else {
		rows = append(rows, []string{"  program", "not found"})
	}
	hs := string(pr.Handshake.Status)
	if pr.Handshake.Status != HandshakeNotSupported {
		hs += " in " + duration(pr.Handshake.DurationMS)
	}
	if pr.Handshake.Detail != "" {
		hs += ": " + pr.Handshake.Detail
	}
	rows = append(rows, []string{"  handshake", oneLine(hs)})
	if pr.Handshake.Fix != "" {
		rows = append(rows, []string{"  fix", oneLine(pr.Handshake.Fix)})
	}
	proto := commonProtocol(pr.Capabilities)
	if proto != "" {
		rows = append(rows, []string{"  protocol", oneLine(proto)})
	}
	if pr.CloseError != "" {
		rows = append(rows, []string{"  close", oneLine(pr.CloseError)})
	}
	p.kv(rows)

	// Reasons (and protocols that differ from the common one) become
	// numbered notes so a reason shared by several operations prints once.
	type note struct{ text, fix string }
	var notes []note
	index := map[note]int{}
	table := [][]string{{"  CAPABILITY", "STATE", "TRANSPORT", "NOTE"}}
	for _, c := range pr.Capabilities {
		n := note{text: c.Reason, fix: c.Fix}
		if n.text == "" && c.Protocol != proto {
			n.text = c.Protocol
		}
		ref := "-"
		if n.text != "" || n.fix != "" {
			i, ok := index[n]
			if !ok {
				notes = append(notes, n)
				i = len(notes)
				index[n] = i
			}
			ref = fmt.Sprintf("[%d]", i)
		}
		transport := c.Transport
		if transport == "" {
			transport = "-"
		}
		state := string(c.State)
		if state == "" {
			state = string(providers.Unknown)
		}
		table = append(table, []string{"  " + c.Name, state, transport, ref})
	}
	p.table(table)
	for i, n := range notes {
		text := n.text
		if text == "" {
			text = "-"
		}
		p.wrapped(fmt.Sprintf("  [%d] ", i+1), "      ", text)
		if n.fix != "" {
			p.wrapped("      fix: ", "           ", n.fix)
		}
	}
	if len(pr.Limitations) > 0 {
		p.f("  limitations\n")
		for _, l := range pr.Limitations {
			p.wrapped("    - ", "      ", l)
		}
	}
}

// commonProtocol is the protocol most capabilities name (ties: the first).
func commonProtocol(caps []NamedCapability) string {
	count := map[string]int{}
	best, bestN := "", 0
	for _, c := range caps {
		if c.Protocol == "" {
			continue
		}
		count[c.Protocol]++
		if n := count[c.Protocol]; n > bestN {
			best, bestN = c.Protocol, n
		}
	}
	if bestN < 2 {
		return ""
	}
	return best
}

// duration formats milliseconds for people.
func duration(ms int64) string {
	if ms < 1000 {
		return fmt.Sprintf("%d ms", ms)
	}
	return fmt.Sprintf("%.1f s", float64(ms)/1000)
}

// RenderProviders writes capability records (what list_providers answers)
// as one table row per provider; each operation that is not available is
// marked with a numbered note that gives the reason and the fix.
func RenderProviders(w io.Writer, list []providers.Capabilities) error {
	return RenderProvidersText(w, list, TextOptions{})
}

// RenderProvidersText is RenderProviders with options: the VERSION and
// PROGRAM columns (paths) only with Verbose, so the table fits Width
// columns (doctor shows each version too).
func RenderProvidersText(w io.Writer, list []providers.Capabilities, o TextOptions) error {
	p := &printer{w: w, verbose: o.Verbose, pad: 1}
	head := []string{"PROVIDER", "AUTH"}
	if o.Verbose {
		head = []string{"PROVIDER", "VERSION", "AUTH"}
	}
	for _, n := range capabilityNames {
		head = append(head, strings.ToUpper(shortName(n)))
	}
	if o.Verbose {
		head = append(head, "PROGRAM")
	}
	rows := [][]string{head}
	type note struct {
		provider  providers.ID
		text, fix string
	}
	var notes []note
	index := map[note]int{}
	for _, c := range list {
		row := []string{string(c.Provider), orDash(c.Authorization)}
		if o.Verbose {
			row = []string{string(c.Provider), orDash(c.ProviderVersion), orDash(c.Authorization)}
		}
		for _, nc := range named(c) {
			cell := stateWord(nc.State)
			// Only what is not plainly available gets a note: the
			// reason it is not, and the fix.
			if nc.State != providers.Available && (nc.Reason != "" || nc.Fix != "") {
				n := note{c.Provider, nc.Reason, nc.Fix}
				i, ok := index[n]
				if !ok {
					notes = append(notes, n)
					i = len(notes)
					index[n] = i
				}
				cell += fmt.Sprintf("[%d]", i)
			}
			row = append(row, cell)
		}
		if o.Verbose {
			row = append(row, orDash(c.Program))
		}
		rows = append(rows, row)
	}
	p.table(rows)
	p.f("\nyes = available, part = partial (degraded), no = unavailable, ? = unknown\n")
	for i, n := range notes {
		p.wrapped(fmt.Sprintf("[%d] ", i+1), "    ", string(n.provider)+": "+orDash(oneLine(n.text)))
		if n.fix != "" {
			p.wrapped("    fix: ", "         ", n.fix)
		}
	}
	if p.err != nil {
		return fmt.Errorf("write the provider table: %w", p.err)
	}
	return nil
}

// shortName is a capability's column head in RenderProviders.
func shortName(n string) string {
	switch n {
	case "sendMessage":
		return "send"
	case "permissions":
		return "perms"
	case "reasoning":
		return "reason"
	case "discovery":
		return "discover"
	}
	return n
}

func stateWord(s providers.CapabilityState) string {
	switch s {
	case providers.Available:
		return "yes"
	case providers.Degraded:
		return "part"
	case providers.Unavailable:
		return "no"
	}
	return "?"
}

func orDash(s string) string {
	if s == "" {
		return "-"
	}
	return s
}

// oneLine folds line breaks and tabs into single spaces: a multi-line
// error (errors.Join) must not break a table.
func oneLine(s string) string {
	if !strings.ContainsAny(s, "\n\r\t") {
		return s
	}
	return strings.Join(strings.Fields(s), " ")
}
