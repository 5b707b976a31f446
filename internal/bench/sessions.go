package bench

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"math"
	"os"
	"os/exec"
	"path/filepath"
	"regexp"
	"slices"
	"strconv"
	"strings"
	"text/tabwriter"
	"time"

	"github.com/agent-interop/runtime/internal/testutil/realpeers"
)

// SessionsConfig configures `interop-bench sessions`: the first
// list_agent_sessions of a freshly spawned `serve` with the real provider
// programs on PATH, against the same spawn with none.
type SessionsConfig struct {
	ModuleDir string
	N         int           // measured spawns per configuration
	Timeout   time.Duration // per request
	Compare   string        // another interop-runtime binary measured in the same rounds
	// Think is how long the client waits after notifications/initialized
	// before its first list_agent_sessions (a model deciding to call it).
	Think    time.Duration
	Progress io.Writer // progress lines (nil: none)
}

// SessionsSample is one spawn's figures.
type SessionsSample struct {
	InitMs  Figure `json:"initMs"`  // spawn → initialize answer
	FirstMs Figure `json:"firstMs"` // first list_agent_sessions, request → answer
	WarmMs  Figure `json:"warmMs"`  // the second, right after
	// CompleteMs is from the first listing's request to the first answer
	// with no provider late (listings repeated every 100 ms), NaN when
	// none came within the timeout.
	CompleteMs Figure `json:"completeMs"`
	// Arrived is when each provider reported late at first was listed,
	// from the first listing's request (ms).
	Arrived map[string]Figure `json:"arrived,omitempty"`
	// Errors are the provider errors of the last answer read.
	Errors map[string]string `json:"errors,omitempty"`
	// Listed is each provider listing's own duration (ms, from the
	// serve's debug record of its end), for the listings that ended
	// before the spawn was stopped.
	Listed map[string]Figure `json:"listed,omitempty"`
	// Stopped is why the first listing stopped waiting for the providers
	// (the serve's debug record: "start grace", "soft deadline", "every
	// listing ended"; "" when not recorded).
	Stopped string `json:"stopped,omitempty"`
	// ServeCPUMs is the serve process's CPU time (user+sys, every
	// thread) when the first answer was read; TreeCPUMs adds the
	// provider programs it started (their processes still running then).
	ServeCPUMs Figure   `json:"serveCpuMs"`
	TreeCPUMs  Figure   `json:"treeCpuMs"`
	Late       []string `json:"late"`     // providers the first answer reported late
	Starting   []string `json:"starting"` // of those, the ones reported still starting (at the start grace)
	Failed     []string `json:"failed"`   // providers the first answer reported failed (not late)
	Sessions   int      `json:"sessions"` // sessions in the first answer
}

// SessionsRow is one configuration's medians.
type SessionsRow struct {
	Name       string           `json:"name"`
	Programs   bool             `json:"programs"` // the real programs on PATH
	InitMs     Figure           `json:"initMs"`
	FirstMs    Figure           `json:"firstMs"`
	WarmMs     Figure           `json:"warmMs"`
	CompleteMs Figure           `json:"completeMs"`
	ServeCPUMs Figure           `json:"serveCpuMs"`
	TreeCPUMs  Figure           `json:"treeCpuMs"`
	FirstRatio Figure           `json:"firstRatio"` // first listing / the no-programs first listing of the same build
	Samples    []SessionsSample `json:"samples"`
}

// SessionsReport is the result of RunSessions.
type SessionsReport struct {
	Started  time.Time     `json:"started"`
	Revision string        `json:"revision"`
	Load     string        `json:"load"`
	Think    string        `json:"think"` // the client's wait before its first listing
	PATH     []string      `json:"path"`  // the program folders put on PATH
	Rows     []SessionsRow `json:"rows"`
}

// ProgramPath is the PATH a spawned server gets to find the real provider
// programs of the install cache (realpeers.Find for each pinned program)
// and node, which they run under; it errs when none is installed.
func ProgramPath() ([]string, error) {
	var dirs []string
	add := func(d string) {
		if !slices.Contains(dirs, d) {
			dirs = append(dirs, d)
		}
	}
	for _, p := range []realpeers.Program{realpeers.OpenCode, realpeers.Codex, realpeers.ClaudeACP, realpeers.QwenCode, realpeers.CodexACP, realpeers.GeminiCLI} {
		path, err := realpeers.Find(p)
		if err != nil {
			continue
		}
		add(filepath.Dir(path))
	}
	if len(dirs) == 0 {
		return nil, errors.New("no provider program is installed (scripts/install-providers.sh, INTEROP_PROVIDER_CACHE)")
	}
	if node, err := exec.LookPath("node"); err == nil {
		add(filepath.Dir(node))
	}
	return dirs, nil
}

// RunSessions builds the runtime and, c.N times round-robin, spawns
// `serve --profile full` in a fresh isolated environment with and without
// the real programs on PATH, initializes it and times the first and a
// second list_agent_sessions.
func RunSessions(ctx context.Context, c SessionsConfig) (*SessionsReport, error) {
	if c.N < 1 {
		return nil, fmt.Errorf("-n: must be at least 1, got %d", c.N)
	}
	tmp, err := os.MkdirTemp("", "interop-bench-sessions-")
	if err != nil {
		return nil, fmt.Errorf("temporary directory: %w", err)
	}
	defer os.RemoveAll(tmp)
	bin, _, err := Build(ctx, c.ModuleDir, filepath.Join(tmp, "bin"))
	if err != nil {
		return nil, err
	}
	dirs, err := ProgramPath()
	if err != nil {
		return nil, err
	}
	rep := &SessionsReport{Think: c.Think.String(), Started: time.Now().UTC(), Revision: sourceRevision(ctx, c.ModuleDir), Load: loadAverage(), PATH: dirs}
	type conf struct {
		name     string
		bin      string
		programs bool
		ahead    bool // INTEROP_LIST_AHEAD=1
	}
	confs := []conf{{"no programs", bin, false, false}, {"real programs", bin, true, false}, {"real programs, list ahead", bin, true, true}}
	if c.Compare != "" {
		confs = append(confs, conf{"compare: no programs", c.Compare, false, false}, conf{"compare: real programs", c.Compare, true, false})
	}
	samples := make([][]SessionsSample, len(confs))
	for round := range c.N {
		for i, cf := range confs {
			dir := filepath.Join(tmp, fmt.Sprintf("r%d-%d", round, i))
			s, err := sessionsSpawn(ctx, cf.bin, dir, cf.programs, cf.ahead, dirs, c)
			if err != nil {
				return nil, fmt.Errorf("%s, round %d: %w", cf.name, round+1, err)
			}
			_ = os.RemoveAll(dir)
			samples[i] = append(samples[i], s)
			if c.Progress != nil {
				fmt.Fprintf(c.Progress, "round %d %-22s init %6.1f ms  first %7.1f ms  warm %6.1f ms  complete %7.1f ms  sessions %d  late %v  failed %v\n",
					round+1, cf.name, s.InitMs, s.FirstMs, s.WarmMs, s.CompleteMs, s.Sessions, s.Late, s.Failed)
				fmt.Fprintf(c.Progress, "        stopped waiting: %s; arrived (ms after the first request): %v\n", s.Stopped, s.Arrived)
			}
		}
	}
	for i, cf := range confs {
		row := SessionsRow{Name: cf.name, Programs: cf.programs, Samples: samples[i]}
		pick := func(f func(SessionsSample) Figure) Figure {
			xs := make([]float64, len(samples[i]))
			for j, s := range samples[i] {
				xs[j] = float64(f(s))
			}
			return Figure(Median(xs))
		}
		row.InitMs = pick(func(s SessionsSample) Figure { return s.InitMs })
		row.FirstMs = pick(func(s SessionsSample) Figure { return s.FirstMs })
		row.WarmMs = pick(func(s SessionsSample) Figure { return s.WarmMs })
		row.CompleteMs = pick(func(s SessionsSample) Figure { return s.CompleteMs })
		row.ServeCPUMs = pick(func(s SessionsSample) Figure { return s.ServeCPUMs })
		row.TreeCPUMs = pick(func(s SessionsSample) Figure { return s.TreeCPUMs })
		rep.Rows = append(rep.Rows, row)
	}
	for i := range rep.Rows {
		base := rep.Rows[0] // the no-programs row of the same build
		if i >= 3 {
			base = rep.Rows[3]
		}
		rep.Rows[i].FirstRatio = Figure(Ratio(float64(rep.Rows[i].FirstMs), float64(base.FirstMs)))
	}
	return rep, nil
}

// sessionsSpawn measures one spawn.
func sessionsSpawn(ctx context.Context, bin, dir string, programs, ahead bool, programDirs []string, c SessionsConfig) (SessionsSample, error) {
	var s SessionsSample
	timeout := c.Timeout
	env, err := IsolatedEnv(dir)
	if err != nil {
		return s, err
	}
	if ahead {
		env = append(env, "INTEROP_LIST_AHEAD=1")
	}
	for i, kv := range env {
		if strings.HasPrefix(kv, "INTEROP_LOG_LEVEL=") {
			env[i] = "INTEROP_LOG_LEVEL=debug" // the registry's record of each listing's end
		}
	}
	if programs {
		for i, kv := range env {
			if strings.HasPrefix(kv, "PATH=") {
				env[i] = kv + string(os.PathListSeparator) + strings.Join(programDirs, string(os.PathListSeparator))
			}
		}
	}
	t := Target{Name: "serve", Path: bin, Args: []string{"serve", "--profile", "full"}}
	o := SpawnOptions{Env: env, Dir: dir, Protocol: "2025-06-18", Timeout: timeout}
	p, err := startProcess(t, o)
	if err != nil {
		return s, err
	}
	runErr := func() error {
		if _, err := p.initialize(ctx, o); err != nil {
			return err
		}
		s.InitMs = Figure(Millis(p.ready.Sub(p.started)))
		if err := p.conn.Notify("notifications/initialized", nil); err != nil {
			return err
		}
		time.Sleep(c.Think)
		params := map[string]any{"name": "list_agent_sessions", "arguments": map[string]any{}}
		first, err := p.call(ctx, timeout, "tools/call", params)
		if err != nil {
			return fmt.Errorf("first list_agent_sessions: %w", err)
		}
		s.FirstMs = Figure(Millis(first.Latency()))
		s.ServeCPUMs, s.TreeCPUMs = Figure(math.NaN()), Figure(math.NaN())
		if d, err := ProcessCPU(p.cmd.Process.Pid); err == nil {
			s.ServeCPUMs = Figure(Millis(d))
		}
		if d, err := TreeCPU(p.cmd.Process.Pid); err == nil {
			s.TreeCPUMs = Figure(Millis(d))
		}
		if err := s.read(first.Result); err != nil {
			return err
		}
		warm, err := p.call(ctx, timeout, "tools/call", params)
		if err != nil {
			return fmt.Errorf("second list_agent_sessions: %w", err)
		}
		s.WarmMs = Figure(Millis(warm.Latency()))
		s.CompleteMs, s.Arrived = Figure(math.NaN()), map[string]Figure{}
		pending := slices.Clone(s.Late)
		deadline := first.Sent.Add(timeout)
		for ex := warm; ; {
			var later SessionsSample
			if err := later.read(ex.Result); err != nil {
				return err
			}
			at := Figure(Millis(ex.Recv.Sub(first.Sent)))
			pending = slices.DeleteFunc(pending, func(p string) bool {
				if !slices.Contains(later.Late, p) {
					s.Arrived[p] = at
					return true
				}
				return false
			})
			s.Errors = later.Errors
			if len(later.Late) == 0 {
				s.CompleteMs = at
				return nil
			}
			if time.Now().After(deadline) {
				return nil
			}
			time.Sleep(100 * time.Millisecond)
			if ex, err = p.call(ctx, timeout, "tools/call", params); err != nil {
				return fmt.Errorf("a later list_agent_sessions: %w", err)
			}
		}
	}()
	stopErr := p.stop(ctx, min(timeout, stopGrace))
	s.Listed = ListingDurations(p.stderr.String())
	s.Stopped = FirstStop(p.stderr.String())
	if runErr != nil {
		return s, fmt.Errorf("%w%s", runErr, p.diagnosis())
	}
	return s, stopErr
}

// read takes the sessions and provider errors of a list_agent_sessions
// answer.
func (s *SessionsSample) read(result json.RawMessage) error {
	var r struct {
		StructuredContent struct {
			Sessions       []json.RawMessage `json:"sessions"`
			ProviderErrors []struct {
				Provider string `json:"provider"`
				Error    string `json:"error"`
			} `json:"providerErrors"`
		} `json:"structuredContent"`
		IsError bool `json:"isError"`
	}
	if err := json.Unmarshal(result, &r); err != nil {
		return fmt.Errorf("decode list_agent_sessions: %w", err)
	}
	if r.IsError {
		return fmt.Errorf("list_agent_sessions failed: %s", truncate(result, 400))
	}
	s.Sessions = len(r.StructuredContent.Sessions)
	s.Late, s.Starting, s.Failed, s.Errors = []string{}, []string{}, []string{}, map[string]string{}
	for _, pe := range r.StructuredContent.ProviderErrors {
		s.Errors[pe.Provider] = pe.Error
		if strings.HasPrefix(pe.Error, "late: ") {
			s.Late = append(s.Late, pe.Provider)
			if strings.HasPrefix(pe.Error, "late: "+pe.Provider+" is still starting") {
				s.Starting = append(s.Starting, pe.Provider)
			}
		} else {
			s.Failed = append(s.Failed, pe.Provider)
		}
	}
	return nil
}

// spawns is the measured spawns per configuration.
func (r *SessionsReport) spawns() int {
	if len(r.Rows) == 0 {
		return 0
	}
	return len(r.Rows[0].Samples)
}

// loadAverage is the first three fields of /proc/loadavg ("" elsewhere).
func loadAverage() string {
	b, err := os.ReadFile("/proc/loadavg")
	if err != nil {
		return ""
	}
	f := strings.Fields(string(b))
	return strings.Join(f[:min(3, len(f))], " ")
}

// WriteJSON writes the report as indented JSON.
func (r *SessionsReport) WriteJSON(w io.Writer) error {
	enc := json.NewEncoder(w)
	enc.SetIndent("", "  ")
	return enc.Encode(r)
}

// WriteTable writes the medians.
func (r *SessionsReport) WriteTable(w io.Writer) error {
	fmt.Fprintf(w, "first list_agent_sessions of a spawned serve --profile full, %s after initialized (source %s, load %s, %s)\nprograms on PATH: %s\n\n",
		r.Think, r.Revision, r.Load, r.Started.Format(time.RFC3339), strings.Join(r.PATH, string(os.PathListSeparator)))
	tw := tabwriter.NewWriter(w, 0, 0, 2, ' ', tabwriter.AlignRight)
	fmt.Fprintln(tw, "configuration\tspawns\tinitialize ms\tfirst listing ms\t× no programs\tserve CPU ms\twith programs CPU ms\twarm listing ms\tevery provider listed ms\tlate (first)\tfailed (first)\tfirst stopped waiting at\t")
	for _, row := range r.Rows {
		late, failed, stops := map[string]int{}, map[string]int{}, map[string]int{}
		for _, s := range row.Samples {
			if s.Stopped != "" {
				stops[s.Stopped]++
			}
			for _, p := range s.Late {
				late[p]++
			}
			for _, p := range s.Failed {
				failed[p]++
			}
		}
		fmt.Fprintf(tw, "%s\t%d\t%.1f\t%.1f\t%.2f\t%.1f\t%.1f\t%.1f\t%.1f\t%s\t%s\t%s\t\n", row.Name, len(row.Samples), row.InitMs, row.FirstMs, row.FirstRatio, row.ServeCPUMs, row.TreeCPUMs, row.WarmMs, row.CompleteMs, counts(late), counts(failed), counts(stops))
	}
	if err := tw.Flush(); err != nil {
		return err
	}
	for _, row := range r.Rows {
		if !row.Programs {
			continue
		}
		fmt.Fprintf(w, "\nper provider, %s (first answer: listed / late, still starting / late at the soft deadline / failed; own listing and listed-after-first-request medians)\n", row.Name)
		if err := writeProviders(w, row.Samples); err != nil {
			return err
		}
	}
	return nil
}

// ProviderFigures is one provider's share of a configuration's spawns.
type ProviderFigures struct {
	Provider                       string
	Listed, Starting, Late, Failed int    // the first answer's states, counted over the spawns
	OwnMs                          Figure // median own listing duration (NaN: none ended)
	ArrivedMs                      Figure // median time to be listed after being late (NaN: never late, or never listed)
}

// PerProvider counts each provider's state in the first answers of the
// samples and takes the medians of its own listing's duration and of its
// arrival after being late, in provider name order.
func PerProvider(samples []SessionsSample) []ProviderFigures {
	byName := map[string]*ProviderFigures{}
	own, arrived := map[string][]float64{}, map[string][]float64{}
	get := func(p string) *ProviderFigures {
		if byName[p] == nil {
			byName[p] = &ProviderFigures{Provider: p}
		}
		return byName[p]
	}
	for _, s := range samples {
		for p, ms := range s.Listed {
			get(p)
			own[p] = append(own[p], float64(ms))
		}
		for p, ms := range s.Arrived {
			arrived[p] = append(arrived[p], float64(ms))
		}
		for _, p := range s.Failed {
			get(p).Failed++
		}
		for _, p := range s.Late {
			if slices.Contains(s.Starting, p) {
				get(p).Starting++
			} else {
				get(p).Late++
			}
		}
		for p := range s.Listed {
			if !slices.Contains(s.Late, p) && !slices.Contains(s.Failed, p) {
				get(p).Listed++
			}
		}
	}
	out := make([]ProviderFigures, 0, len(byName))
	for _, f := range byName {
		f.OwnMs, f.ArrivedMs = Figure(math.NaN()), Figure(math.NaN())
		if len(own[f.Provider]) > 0 {
			f.OwnMs = Figure(Median(own[f.Provider]))
		}
		if len(arrived[f.Provider]) > 0 {
			f.ArrivedMs = Figure(Median(arrived[f.Provider]))
		}
		out = append(out, *f)
	}
	slices.SortFunc(out, func(a, b ProviderFigures) int { return strings.Compare(a.Provider, b.Provider) })
	return out
}

func writeProviders(w io.Writer, samples []SessionsSample) error {
	tw := tabwriter.NewWriter(w, 0, 0, 2, ' ', tabwriter.AlignRight)
	fmt.Fprintln(tw, "provider\tlisted\tlate, starting\tlate\tfailed\town listing ms\tlisted after ms\t")
	for _, f := range PerProvider(samples) {
		fmt.Fprintf(tw, "%s\t%d\t%d\t%d\t%d\t%.1f\t%.1f\t\n", f.Provider, f.Listed, f.Starting, f.Late, f.Failed, f.OwnMs, f.ArrivedMs)
	}
	return tw.Flush()
}

// listingEnded matches the serve's debug record of a provider listing's
// end (registry: "provider listing ended").
var listingEnded = regexp.MustCompile(`msg="provider listing ended" provider=(\S+) ms=([0-9.]+)(.*)`)

// listingsAwaited matches the serve's debug record of why a listing of
// the providers stopped waiting.
var listingsAwaited = regexp.MustCompile(`msg="provider listings awaited" ms=[0-9.]+ stopped=("(?:[^"\\]|\\.)*"|\S+)`)

// FirstStop is why the serve's first listing of the providers stopped
// waiting ("" when its log has no such record).
func FirstStop(log string) string {
	m := listingsAwaited.FindStringSubmatch(log)
	if m == nil {
		return ""
	}
	if v, err := strconv.Unquote(m[1]); err == nil {
		return v
	}
	return m[1]
}

// ListingDurations reads each provider listing's duration (ms) from a
// serve's debug log; a provider listed more than once keeps its first,
// and a listing cancelled (the spawn stopped while it ran) is left out.
func ListingDurations(log string) map[string]Figure {
	out := map[string]Figure{}
	for _, m := range listingEnded.FindAllStringSubmatch(log, -1) {
		if _, seen := out[m[1]]; seen || strings.Contains(m[3], "context canceled") {
			continue
		}
		if ms, err := strconv.ParseFloat(m[2], 64); err == nil {
			out[m[1]] = Figure(ms)
		}
	}
	return out
}

func counts(m map[string]int) string {
	if len(m) == 0 {
		return "-"
	}
	keys := make([]string, 0, len(m))
	for k := range m {
		keys = append(keys, k)
	}
	slices.Sort(keys)
	for i, k := range keys {
		keys[i] = fmt.Sprintf("%s×%d", k, m[k])
	}
	return strings.Join(keys, " ")
}
