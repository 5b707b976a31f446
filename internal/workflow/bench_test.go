package workflow

import (
	"strings"
	"testing"
)

// BenchmarkCreateWork: one work item per write transaction.
func BenchmarkCreateWork(b *testing.B) {
	f := newFixture(b)
	in := CreateWorkInput{Objective: "benchmark objective", AcceptanceCriteria: []string{"fast"}, Risks: []string{"none"}}
	b.ReportAllocs()
	for b.Loop() {
		if _, err := f.svc.CreateWork(f.ctx, in); err != nil {
			b.Fatal(err)
		}
	}
	b.ReportMetric(float64(b.N)/b.Elapsed().Seconds(), "appends/s")
}

func benchEvidence(workID string) AddEvidenceInput {
	return AddEvidenceInput{WorkID: &workID, Kind: "command", Trust: "runtime_observed",
		Source: EvidenceSource{Adapter: "bench"}, Summary: "go test exited 0",
		Data: map[string]any{"command": "go test ./...", "exitCode": 0, "stdout": "ok  \tpkg\t0.1s\n"}}
}

// BenchmarkAddEvidenceOnePerTx: one evidence record (validated, canonical,
// hashed, work touched) per write transaction.
func BenchmarkAddEvidenceOnePerTx(b *testing.B) {
	f := newFixture(b)
	in := benchEvidence(f.work("w").ID)
	b.ReportAllocs()
	for b.Loop() {
		if _, err := f.svc.AddEvidence(f.ctx, in); err != nil {
			b.Fatal(err)
		}
	}
	b.ReportMetric(float64(b.N)/b.Elapsed().Seconds(), "appends/s")
}

// BenchmarkAddEvidenceBatched: 100 records per transaction; one op is one
// batch, appends/s counts records.
func BenchmarkAddEvidenceBatched(b *testing.B) {
	f := newFixture(b)
	one := benchEvidence(f.work("w").ID)
	batch := make([]AddEvidenceInput, 100)
	for i := range batch {
		batch[i] = one
	}
	b.ReportAllocs()
	for b.Loop() {
		if _, err := f.svc.AddEvidenceBatch(f.ctx, batch); err != nil {
			b.Fatal(err)
		}
	}
	b.ReportMetric(float64(b.N*len(batch))/b.Elapsed().Seconds(), "appends/s")
}

// BenchmarkBuildPacket: fitting a handoff into its token budget (tokenizer
// already loaded).
func BenchmarkBuildPacket(b *testing.B) {
	f := newFixture(b)
	small := f.handoffInput("work_1")
	big := f.handoffInput("work_1")
	for i := 0; i < 60; i++ {
		big.Risks = append(big.Risks, "risk number "+itoa(i)+" could break the deployment pipeline badly")
		big.UnresolvedQuestions = append(big.UnresolvedQuestions, strings.Repeat("why ", 10))
	}
	for _, c := range []struct {
		name string
		in   CreateHandoffInput
	}{{"small", small}, {"omissions", big}} {
		h, err := validateHandoff(c.in)
		if err != nil {
			b.Fatal(err)
		}
		h.ID = "handoff_00000000-0000-4000-8000-000000000000"
		b.Run(c.name, func(b *testing.B) {
			if _, _, err := f.svc.buildPacket(&h, 2000); err != nil { // load the tokenizer
				b.Fatal(err)
			}
			b.ReportAllocs()
			for b.Loop() {
				if _, _, err := f.svc.buildPacket(&h, 2000); err != nil {
					b.Fatal(err)
				}
			}
		})
	}
}
