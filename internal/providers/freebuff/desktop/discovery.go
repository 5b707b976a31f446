package desktop

import (
	"context"
	"encoding/json"
	"fmt"
	"net/http"
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"time"

	"github.com/agent-interop/runtime/internal/lazy"
	"github.com/agent-interop/runtime/internal/providers/freebuff/core"
)

// candidate is one place the Desktop orchestrator might be.
type candidate struct {
	URL      string
	LaunchID string
	PID      int
	Source   string
}

// desktopConn is a probed Desktop endpoint. Verified means GET /healthz
// accepted LaunchID, which is what allows writes.
type desktopConn struct {
	Base      string
	LaunchID  string
	Verified  bool
	PID       int
	Source    string
	CheckedAt time.Time
	// ServerPID is the pid /healthz reported: with Base it identifies the
	// orchestrator process across launch-id changes.
	ServerPID int
	// Note says why the connection is read-only, when it is.
	Note string
}

// origin identifies the orchestrator process behind conn.
func (c *desktopConn) origin() string {
	if c.ServerPID > 0 {
		return c.Base + " pid " + strconv.Itoa(c.ServerPID)
	}
	return c.Base + " " + c.LaunchID
}

// candidates lists every discovery source in priority order, with notes on
// sources that were present but unusable.
func (d *Backend) candidates() ([]candidate, []string) {
	var out []candidate
	var notes []string
	envLaunch := d.cfg.Env(core.EnvLaunchID)

	// 1. A readiness file a deployment supplies (the app writes none).
	if file := d.cfg.Env(core.EnvReadinessFile); file != "" {
		c, err := readReadiness(file, d.cfg.Clock.Now())
		if err != nil {
			notes = append(notes, err.Error())
		} else {
			out = append(out, c)
		}
	}
	// 2. FREEBUFF_ORCHESTRATOR_URL (+ FREEBUFF_LAUNCH_ID).
	if raw := d.cfg.Env(core.EnvOrchestratorURL); raw != "" {
		if u, err := parseLoopbackURL(raw); err != nil {
			notes = append(notes, fmt.Sprintf("%s ignored: %v", core.EnvOrchestratorURL, err))
		} else {
			out = append(out, candidate{URL: u.String(), LaunchID: envLaunch, Source: core.EnvOrchestratorURL})
		}
	}
	// 3. The orchestrator process: launch id from its environment, port
	//    from its listening sockets.
	if d.cfg.ProcDir != "-" {
		for _, p := range scanProcesses(d.cfg.Clock, d.cfg.ProcDir, os.Getpid()) {
			for _, port := range p.Ports {
				out = append(out, candidate{
					URL:      "http://127.0.0.1:" + strconv.Itoa(port),
					LaunchID: p.LaunchID,
					PID:      p.PID,
					Source:   fmt.Sprintf("orchestrator process %d", p.PID),
				})
			}
		}
	}
	// 4. The orchestrator's stderr log (the newest listening line only;
	//    older lines are stale).
	if port, file := d.logPort(); port > 0 {
		out = append(out, candidate{URL: "http://127.0.0.1:" + strconv.Itoa(port), LaunchID: envLaunch, Source: file})
	}
	return out, notes
}

// readReadiness parses a readiness record: url or port, a launch id, a pid
// and a timestamp; records older than 10 minutes (by their timestamp, else
// by the file's modification time) and non-loopback URLs are refused.
func readReadiness(file string, now time.Time) (candidate, error) {
	st, err := os.Stat(file)
	if err != nil {
		return candidate{}, fmt.Errorf("readiness file %s unreadable: %w", file, err)
	}
	if st.Size() > 64*1024 {
		return candidate{}, fmt.Errorf("readiness file %s is too large", file)
	}
	b, err := os.ReadFile(file)
	if err != nil {
		return candidate{}, fmt.Errorf("readiness file %s unreadable: %w", file, err)
	}
	v, err := core.DecodeJSON(b)
	m := core.AsMap(v)
	if err != nil || m == nil {
		return candidate{}, fmt.Errorf("readiness file %s is not a JSON object", file)
	}
	at := st.ModTime()
	for _, k := range []string{"timestamp", "updatedAt", "updated_at", "freshness"} {
		if n, ok := core.Num(m[k]); ok && n > 0 {
			at = time.UnixMilli(n)
			break
		}
		if s := core.Str(m[k]); s != "" {
			if t, err := time.Parse(time.RFC3339Nano, s); err == nil {
				at = t
				break
			}
		}
	}
	if now.Sub(at) > readinessMaxAge {
		return candidate{}, fmt.Errorf("readiness file %s ignored: its record is older than 10 minutes", file)
	}
	raw := core.Str(m["url"])
	if raw == "" {
		if p, ok := core.Num(m["port"]); ok && p > 0 && p < 65536 {
			raw = "http://127.0.0.1:" + strconv.FormatInt(p, 10)
		} else if s := core.Str(m["port"]); s != "" {
			raw = "http://127.0.0.1:" + s
		}
	}
	u, err := parseLoopbackURL(raw)
	if err != nil {
		return candidate{}, fmt.Errorf("readiness file %s ignored: %w", file, err)
	}
	pid, _ := core.Num(firstNonNil(m["pid"], m["processId"], m["process_id"]))
	return candidate{
		URL:      u.String(),
		LaunchID: core.FirstStr(m, "launchId", "launch-id", "launch_id"),
		PID:      int(pid),
		Source:   "readiness file " + file,
	}, nil
}

var listeningLine = lazy.Regexp{Expr: `listening on https?://127\.0\.0\.1:(\d{1,5})`}

// logPort returns the port of the last listening line in the first
// orchestrator stderr log found.
func (d *Backend) logPort() (int, string) {
	home := d.cfg.HomeDir
	if home == "" {
		return 0, ""
	}
	for _, rel := range []string{
		".config/Freebuff/logs/orchestrator-stderr.log",
		".local/share/Freebuff/logs/orchestrator-stderr.log",
		"Library/Logs/Freebuff/orchestrator-stderr.log",
		"Library/Application Support/Freebuff/logs/orchestrator-stderr.log",
	} {
		file := filepath.Join(home, filepath.FromSlash(rel))
		f, err := os.Open(file)
		if err != nil {
			continue
		}
		st, _ := f.Stat()
		if st != nil && st.Size() > 64*1024 {
			_, _ = f.Seek(st.Size()-64*1024, 0)
		}
		buf := make([]byte, 64*1024)
		n, _ := f.Read(buf)
		f.Close()
		ms := listeningLine.Get().FindAllSubmatch(buf[:n], -1)
		if len(ms) == 0 {
			continue
		}
		p, _ := strconv.Atoi(string(ms[len(ms)-1][1]))
		if p > 0 && p < 65536 {
			return p, "orchestrator log " + file
		}
	}
	return 0, ""
}

// discover probes every candidate and returns the first verified one, else
// the first readable one. The error lists what was checked.
func (d *Backend) discover(ctx context.Context) (*desktopConn, error) {
	cands, notes := d.candidates()
	seen := map[string]struct{}{}
	var readable *desktopConn
	for _, c := range cands {
		key := c.URL + "\x00" + c.LaunchID
		if _, dup := seen[key]; dup {
			continue
		}
		seen[key] = struct{}{}
		conn, err := d.probe(ctx, c)
		if err != nil {
			notes = append(notes, err.Error())
			continue
		}
		if conn.Verified {
			return conn, nil
		}
		if readable == nil {
			readable = conn
		}
	}
	if readable != nil {
		return readable, nil
	}
	reason := "No Freebuff Desktop orchestrator was found (checked " + EnvDesktopSources + ")"
	if len(notes) > 0 {
		reason += ": " + strings.Join(notes, "; ")
	}
	return nil, &core.UnavailableError{Reason: reason}
}

// EnvDesktopSources names the Desktop discovery sources for messages.
const EnvDesktopSources = "FREEBUFF_DESKTOP_READINESS_FILE, FREEBUFF_ORCHESTRATOR_URL + FREEBUFF_LAUNCH_ID, orchestrator processes, orchestrator logs"

// probe checks one candidate: GET /api/projects must answer a projects
// list; with a launch id, GET /healthz must answer {"ok":true} (and echo the
// same launch id when it echoes one) for the connection to be verified.
func (d *Backend) probe(ctx context.Context, c candidate) (*desktopConn, error) {
	conn := &desktopConn{Base: c.URL, LaunchID: c.LaunchID, PID: c.PID, Source: c.Source, CheckedAt: d.cfg.Clock.Now()}
	pctx, cancel := d.withTimeout(ctx, d.cfg.ProbeTimeout, TagProbe)
	defer cancel()
	res, err := d.do(pctx, conn, http.MethodGet, "/api/projects", nil)
	if err != nil {
		return nil, fmt.Errorf("%s (%s): %v", c.URL, c.Source, err)
	}
	if res.status < 200 || res.status > 299 {
		if c.LaunchID == "" && (res.status == http.StatusUnauthorized || res.status == http.StatusForbidden) {
			return nil, fmt.Errorf("%s (%s) requires a launch id: %s", c.URL, c.Source, res.reason())
		}
		return nil, fmt.Errorf("%s (%s): %s", c.URL, c.Source, res.reason())
	}
	v, err := core.DecodeJSON(res.body)
	if _, ok := core.AsMap(v)["projects"].([]any); err != nil || !ok {
		return nil, fmt.Errorf("%s (%s): invalid /api/projects response", c.URL, c.Source)
	}
	if c.LaunchID == "" {
		conn.Note = "no launch id was found for it"
		return conn, nil
	}
	hctx, hcancel := d.withTimeout(ctx, d.cfg.ProbeTimeout, TagProbe)
	defer hcancel()
	h, err := d.do(hctx, conn, http.MethodGet, "/healthz", nil)
	switch {
	case err != nil:
		conn.Note = "GET /healthz failed: " + err.Error()
	case h.status != http.StatusOK:
		conn.Note = "GET /healthz refused the launch id: " + h.reason()
	default:
		var body struct {
			OK       bool   `json:"ok"`
			LaunchID string `json:"launchId"`
			PID      int    `json:"pid"`
		}
		if json.Unmarshal(h.body, &body) != nil || !body.OK {
			conn.Note = "GET /healthz did not answer ok"
		} else if body.LaunchID != "" && body.LaunchID != c.LaunchID {
			conn.Note = "GET /healthz reported a different launch id"
		} else {
			conn.Verified, conn.ServerPID = true, body.PID
		}
	}
	return conn, nil
}
