package bench

import (
	"bytes"
	"context"
	"encoding/json"
	"fmt"
	"io"
	"math"
	"net/http"
	"net/http/httptest"
	"strings"
	"sync"
	"sync/atomic"
	"testing"
	"time"
)

// fakeMCP is a Streamable HTTP server just big enough for LoadHTTP: it
// opens sessions, creates work items and reads them back, answering as an
// SSE stream. With leakFrom set, the session of that work item is answered
// with another session's work item.
type fakeMCP struct {
	mu       sync.Mutex
	sessions atomic.Int64
	works    map[string]string // id → objective
	leak     bool
	fail5xx  atomic.Int64 // answer this many calls with 500
}

func (f *fakeMCP) ServeHTTP(w http.ResponseWriter, r *http.Request) {
	if r.Header.Get("Authorization") != "Bearer tok" {
		w.WriteHeader(http.StatusUnauthorized)
		return
	}
	if r.Method == http.MethodDelete {
		w.WriteHeader(http.StatusNoContent)
		return
	}
	body, _ := io.ReadAll(r.Body)
	var req struct {
		ID     *int64 `json:"id"`
		Method string `json:"method"`
		Params struct {
			Name      string          `json:"name"`
			Arguments json.RawMessage `json:"arguments"`
		} `json:"params"`
	}
	_ = json.Unmarshal(body, &req)
	if req.ID == nil {
		w.WriteHeader(http.StatusAccepted)
		return
	}
	var result any
	switch {
	case req.Method == "initialize":
		w.Header().Set("Mcp-Session-Id", fmt.Sprint("s", f.sessions.Add(1)))
		result = map[string]any{"protocolVersion": "2025-06-18"}
	case req.Params.Name == "create_work_item":
		var a struct{ Objective string }
		_ = json.Unmarshal(req.Params.Arguments, &a)
		f.mu.Lock()
		id := fmt.Sprint("w", len(f.works))
		f.works[id] = a.Objective
		f.mu.Unlock()
		result = map[string]any{"structuredContent": map[string]any{"id": id, "objective": a.Objective}}
	case req.Params.Name == "get_work_item":
		if f.fail5xx.Add(-1) >= 0 {
			w.WriteHeader(http.StatusInternalServerError)
			return
		}
		var a struct{ WorkID string }
		_ = json.Unmarshal(req.Params.Arguments, &a)
		f.mu.Lock()
		objective := f.works[a.WorkID]
		if f.leak && a.WorkID == "w0" {
			a.WorkID, objective = "elsewhere", "another session's"
		}
		f.mu.Unlock()
		result = map[string]any{"structuredContent": map[string]any{"work": map[string]any{"id": a.WorkID, "objective": objective}}}
	}
	b, _ := json.Marshal(map[string]any{"jsonrpc": "2.0", "id": *req.ID, "result": result})
	w.Header().Set("Content-Type", "text/event-stream")
	fmt.Fprintf(w, "event: message\ndata: %s\n\n", b)
}

func TestLoadHTTPCountsLeaksAndStatuses(t *testing.T) {
	tests := []struct {
		name      string
		leak      bool
		fail      int64
		wantLeaks int
		want5xx   int
	}{
		{name: "clean", wantLeaks: 0},
		{name: "one session's answers leak", leak: true, wantLeaks: 10},
		{name: "server errors", fail: 3, want5xx: 3},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			f := &fakeMCP{works: map[string]string{}, leak: tt.leak}
			f.fail5xx.Store(tt.fail)
			srv := httptest.NewServer(f)
			defer srv.Close()
			rep, err := LoadHTTP(context.Background(), &HTTPServer{URL: srv.URL, Token: "tok"}, "2025-06-18", 3, 10, 5*time.Second)
			if err != nil {
				t.Fatal(err)
			}
			// per session: initialize, initialized, create, 10 calls, DELETE
			if rep.Requests != 3*14 || rep.Leaks != tt.wantLeaks || rep.Status["5xx"] != tt.want5xx || rep.Status["2xx"] != 3*14-tt.want5xx || rep.TransportErrors != 0 {
				t.Fatalf("report %+v", rep)
			}
			if n := 30 - tt.want5xx; float64(rep.P50Us) <= 0 || float64(rep.P99Us) < float64(rep.P50Us) || n <= 0 {
				t.Fatalf("percentiles %v %v", rep.P50Us, rep.P99Us)
			}
		})
	}
}

func TestHTTPSessionReadsJSONAndSSE(t *testing.T) {
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		body, _ := io.ReadAll(r.Body)
		var req struct{ ID int64 }
		_ = json.Unmarshal(body, &req)
		if strings.Contains(string(body), `"initialize"`) {
			w.Header().Set("Mcp-Session-Id", "abc")
			w.Header().Set("Content-Type", "application/json")
			fmt.Fprintf(w, `{"jsonrpc":"2.0","id":%d,"result":{}}`, req.ID)
			return
		}
		if strings.Contains(string(body), "notifications/") {
			w.WriteHeader(http.StatusAccepted)
			return
		}
		w.Header().Set("Content-Type", "text/event-stream")
		// A notification first, then the answer split over two data lines.
		fmt.Fprintf(w, "event: message\ndata: {\"jsonrpc\":\"2.0\",\"method\":\"notifications/progress\",\"params\":{}}\n\n")
		fmt.Fprintf(w, "event: message\ndata: {\"jsonrpc\":\"2.0\",\ndata: \"id\":%d,\"result\":{\"ok\":true}}\n\n", req.ID)
	}))
	defer srv.Close()
	s := NewHTTPSession(srv.URL, "t", srv.Client())
	if _, err := s.Initialize(context.Background(), "2025-06-18"); err != nil || s.ID() != "abc" {
		t.Fatalf("initialize: %v, session %q", err, s.ID())
	}
	ex, err := s.Call(context.Background(), "tools/call", nil)
	if err != nil || string(ex.Result) != `{"ok":true}` || ex.Latency() <= 0 {
		t.Fatalf("call: %v %s", err, ex.Result)
	}
}

func TestSummarizeHTTPFloor(t *testing.T) {
	nan := math.NaN()
	baseline := &Row{Name: "baseline", Baseline: true, InitMs: 2, CallP50Us: 100, CallP99Us: 200}
	minimal := []HTTPSample{{InitMs: 1, CallP50Us: 150, CallP99Us: 400}, {InitMs: 3, CallP50Us: 170, CallP99Us: 300}, {InitMs: 2, CallP50Us: 160, CallP99Us: 500}}
	ours := &HTTPReport{InitMs: 4, CallP50Us: 240, CallP99Us: 800,
		Samples: []HTTPSample{{CallP50Us: 300}, {CallP50Us: 255}, {CallP50Us: 320}}}
	tests := []struct {
		name     string
		ours     *HTTPReport
		baseline *Row
		minimal  []HTTPSample
		wantNil  bool
		// minimal HTTP p50, floor p50, floor p99, ours p50, ours init, paired
		want [6]float64
	}{
		{name: "no samples", ours: ours, baseline: baseline, wantNil: true},
		{name: "all measured", ours: ours, baseline: baseline, minimal: minimal,
			// medians 2 ms, 160 µs, 400 µs; paired ratios 2, 1.5, 2 → 2
			want: [6]float64{160, 1.6, 2, 1.5, 2, 2}},
		{name: "no baseline row: no floor", ours: ours, minimal: minimal,
			want: [6]float64{160, nan, nan, 1.5, 2, 2}},
		{name: "rounds not paired", ours: &HTTPReport{InitMs: 4, CallP50Us: 240, CallP99Us: 800, Samples: ours.Samples[:2]}, baseline: baseline, minimal: minimal,
			want: [6]float64{160, 1.6, 2, 1.5, 2, nan}},
		{name: "minimal not measured", ours: ours, baseline: baseline, minimal: []HTTPSample{{InitMs: Figure(nan), CallP50Us: Figure(nan), CallP99Us: Figure(nan)}},
			want: [6]float64{nan, nan, nan, nan, nan, nan}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			m := summarizeHTTPFloor(tt.ours, tt.baseline, 12, tt.minimal)
			if tt.wantNil {
				if m != nil {
					t.Fatalf("got %+v, want nil", m)
				}
				return
			}
			got := [6]float64{float64(m.CallP50Us), float64(m.Floor.CallP50), float64(m.Floor.CallP99), float64(m.Ours.CallP50), float64(m.Ours.Init), float64(m.OursPairedCallP50)}
			for i := range got {
				if !(got[i] == tt.want[i] || (math.IsNaN(got[i]) && math.IsNaN(tt.want[i]))) {
					t.Errorf("figure %d = %v, want %v (all %v)", i, got[i], tt.want[i], got)
				}
			}
			if m.ListenMs != 12 || len(m.Samples) != len(tt.minimal) || (tt.baseline != nil) != (m.Stdio != nil) {
				t.Errorf("listen %v, samples %d, stdio %+v", m.ListenMs, len(m.Samples), m.Stdio)
			}
		})
	}
}

func TestWriteHTTPFloor(t *testing.T) {
	r := testReport()
	r.HTTP = &HTTPReport{Profile: "full", Sessions: 3, InitMs: 4, CallP50Us: 240, CallP99Us: 800,
		Samples: []HTTPSample{{CallP50Us: 300}, {CallP50Us: 255}, {CallP50Us: 320}}}
	r.HTTP.Minimal = summarizeHTTPFloor(r.HTTP, r.baseline(), 12, []HTTPSample{{InitMs: 1, CallP50Us: 150, CallP99Us: 400}, {InitMs: 3, CallP50Us: 170, CallP99Us: 300}, {InitMs: 2, CallP50Us: 160, CallP99Us: 500}})
	var b bytes.Buffer
	if err := r.WriteTable(&b); err != nil {
		t.Fatal(err)
	}
	out := b.String()
	// baseline stdio p50 50 µs: floor 160/50 = 3.20×; ours 240/160 = 1.50×.
	for _, want := range []string{"HTTP floor: minimalserver -http", "floor: minimal HTTP/stdio", "ours: serve-http/minimal HTTP", "3.20×", "1.50×", "paired by round: 2.00×"} {
		if !strings.Contains(out, want) {
			t.Errorf("table lacks %q:\n%s", want, out)
		}
	}
	b.Reset()
	if err := r.WriteJSON(&b); err != nil {
		t.Fatal(err)
	}
	var back struct {
		HTTP struct {
			Minimal struct {
				CallP50Us Figure
				Floor     struct{ CallP50 Figure }
				Ours      struct{ CallP50 Figure } `json:"oursToMinimal"`
			}
		}
	}
	if err := json.Unmarshal(b.Bytes(), &back); err != nil {
		t.Fatal(err)
	}
	if m := back.HTTP.Minimal; m.CallP50Us != 160 || m.Floor.CallP50 != 3.2 || m.Ours.CallP50 != 1.5 {
		t.Errorf("JSON minimal = %+v", m)
	}
}
