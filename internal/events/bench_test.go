package events

import (
	"context"
	"fmt"
	"path/filepath"
	"sort"
	"testing"
	"time"

	"github.com/agent-interop/runtime/internal/providers"
	"github.com/agent-interop/runtime/internal/store"
	"github.com/agent-interop/runtime/internal/testutil/teststore"
	"github.com/agent-interop/runtime/internal/testutil/wait"
)

var benchData = []byte(`{"threadId":"01a22b15-980c-7983-b68d-47d09f412ced","turnId":"01a22b15-9817-7210-95e1-83b1e8b69a71","itemId":"msg_1","delta":"Hello from fake."}`)

// cpuTime is this process's user+system CPU time. The benchmarks report
// CPU per operation too: on a shared machine wall-clock figures mostly
// measure the neighbours.
func cpuTime() time.Duration { return processCPUTime() }

func reportCPU(b *testing.B, start time.Duration, units float64, unit string) {
	cpu := cpuTime() - start
	if cpu > 0 && units > 0 {
		b.ReportMetric(units/cpu.Seconds(), unit+"/cpu-s")
	}
}

func benchEvents(n int) []providers.NativeEvent {
	evs := make([]providers.NativeEvent, n)
	ts := time.Date(2026, 11, 30, 6, 0, 0, 0, time.UTC)
	for i := range evs {
		evs[i] = providers.NativeEvent{Timestamp: ts.Add(time.Duration(i) * time.Millisecond), Type: "item/agentMessage/delta", Data: benchData}
	}
	return evs
}

// BenchmarkPage100At1M reads pages of 100 events at random cursors from a
// log holding 1,000,000 events (100 sessions at the default retention of
// 10,000). It reports p50/p99 per page.
func BenchmarkPage100At1M(b *testing.B) {
	st := teststore.Open(b)
	l := NewLog(st, LogOptions{})
	ctx := context.Background()
	const sessions, per = 100, 10000
	evs := benchEvents(1000)
	for s := 0; s < sessions; s++ {
		id := fmt.Sprintf("thread-%03d", s)
		for i := 0; i < per; i += len(evs) {
			if _, err := l.Append(ctx, providers.Codex, id, 1, evs); err != nil {
				b.Fatal(err)
			}
		}
	}
	var n int64
	if err := st.DB().QueryRow("SELECT count(*) FROM session_events").Scan(&n); err != nil || n != sessions*per {
		b.Fatalf("stored %d events (%v)", n, err)
	}
	lat := make([]time.Duration, 0, 1<<16)
	b.ResetTimer()
	c0 := cpuTime()
	b.ReportAllocs()
	i := 0
	for b.Loop() {
		i++
		id := fmt.Sprintf("thread-%03d", (i*37)%sessions)
		after := int64((i * 7919) % (per - 100))
		t0 := time.Now()
		p, err := l.Page(ctx, providers.Codex, id, after, 100)
		lat = append(lat, time.Since(t0))
		if err != nil || len(p.Events) != 100 {
			b.Fatalf("page: %d events, %v", len(p.Events), err)
		}
	}
	cpu := cpuTime() - c0
	b.ReportMetric(float64(cpu.Microseconds())/float64(len(lat)), "cpu-µs/page")
	sort.Slice(lat, func(i, j int) bool { return lat[i] < lat[j] })
	b.ReportMetric(float64(lat[len(lat)/2].Microseconds()), "p50-µs")
	b.ReportMetric(float64(lat[len(lat)*99/100].Microseconds()), "p99-µs")
}

// BenchmarkAppendOnePerTx appends one event per transaction.
func BenchmarkAppendOnePerTx(b *testing.B) {
	st := teststore.Open(b)
	l := NewLog(st, LogOptions{})
	ctx := context.Background()
	ev := benchEvents(1)
	b.ReportAllocs()
	c0 := cpuTime()
	for b.Loop() {
		if _, err := l.Append(ctx, providers.Codex, "thread-1", 1, ev); err != nil {
			b.Fatal(err)
		}
	}
	b.ReportMetric(float64(b.N)/b.Elapsed().Seconds(), "appends/s")
	reportCPU(b, c0, float64(b.N), "appends")
}

// BenchmarkAppendBatched appends 100 events per transaction.
func BenchmarkAppendBatched(b *testing.B) {
	st := teststore.Open(b)
	l := NewLog(st, LogOptions{})
	ctx := context.Background()
	evs := benchEvents(100)
	n := 0
	b.ReportAllocs()
	c0 := cpuTime()
	for b.Loop() {
		if _, err := l.Append(ctx, providers.Codex, "thread-1", 1, evs); err != nil {
			b.Fatal(err)
		}
		n += len(evs)
	}
	b.ReportMetric(float64(n)/b.Elapsed().Seconds(), "appends/s")
	reportCPU(b, c0, float64(n), "appends")
}

// BenchmarkWaitWakeAndCancel measures how long a waiting read takes to
// answer once an event arrives (wake-ns/op) and to return once its caller
// cancels (cancel-ns/op). DESIGN.md's bound for cancellation is 100 ms.
func BenchmarkWaitWakeAndCancel(b *testing.B) {
	st, err := store.Open(context.Background(), filepath.Join(b.TempDir(), "interop.db"))
	if err != nil {
		b.Fatal(err)
	}
	defer st.Close()
	f := newFakeStreams()
	h := NewHub(NewLog(st, LogOptions{}), HubOptions{Open: f.open})
	defer h.Close()
	ctx := context.Background()
	if _, err := h.Read(ctx, ReadRequest{Provider: providers.Codex, NativeID: "w"}); err != nil {
		b.Fatal(err)
	}
	ch := wait.Recv(b, "the hub to open the session's event stream", wait.InProcess, f.opened)
	var wake, cancelled time.Duration
	b.ResetTimer()
	for i := 0; i < b.N; i++ {
		after := int64(i)
		done := make(chan time.Time, 1)
		go func() {
			_, _ = h.Read(ctx, ReadRequest{Provider: providers.Codex, NativeID: "w", AfterSequence: after, Timeout: 10 * time.Second})
			done <- time.Now()
		}()
		time.Sleep(2 * time.Millisecond) // let the read start waiting
		sent := time.Now()
		ch <- providers.NativeEvent{NativeID: "w", Type: "tick", Data: []byte(`{}`)}
		wake += (<-done).Sub(sent)

		cctx, cancel := context.WithCancel(ctx)
		go func() {
			_, _ = h.Read(cctx, ReadRequest{Provider: providers.Codex, NativeID: "w", AfterSequence: after + 1, Timeout: 10 * time.Second})
			done <- time.Now()
		}()
		time.Sleep(2 * time.Millisecond)
		t0 := time.Now()
		cancel()
		cancelled += (<-done).Sub(t0)
	}
	b.ReportMetric(float64(wake.Nanoseconds())/float64(b.N), "wake-ns/op")
	b.ReportMetric(float64(cancelled.Nanoseconds())/float64(b.N), "cancel-ns/op")
}
