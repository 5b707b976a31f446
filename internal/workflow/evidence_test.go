package workflow

import (
	"encoding/json"
	"regexp"
	"strings"
	"testing"
	"time"
)

func TestEvidenceRoundTrip(t *testing.T) {
	f := newFixture(t)
	w := f.work("w")
	f.clock.Advance(time.Second)
	e, err := f.svc.AddEvidence(f.ctx, AddEvidenceInput{
		WorkID:    &w.ID,
		SessionID: ptr("codex:abc"),
		Kind:      "diff",
		Trust:     "provider_observed",
		Source:    EvidenceSource{Adapter: "codex", Protocol: "app-server", NativeEventID: "ev1"},
		Summary:   "native diff",
		Data:      json.RawMessage(`{"z": "<b>", "a": [1, 2.50]}`),
	})
	if err != nil {
		t.Fatal(err)
	}
	if !regexp.MustCompile(`^evidence_\d{13}_[0-9a-z]{6}$`).MatchString(e.ID) {
		t.Errorf("id %q", e.ID)
	}
	if !regexp.MustCompile(`^[a-f0-9]{64}$`).MatchString(e.ContentHash) {
		t.Errorf("hash %q", e.ContentHash)
	}
	want := `{"a":[1,2.50],"z":"<b>"}`
	if string(e.Data) != want || e.ContentHash != ContentHash([]byte(want)) {
		t.Fatalf("data %s hash %s", e.Data, e.ContentHash)
	}
	got, err := f.svc.GetEvidence(f.ctx, e.ID)
	if err != nil {
		t.Fatal(err)
	}
	if got.ContentHash != e.ContentHash || string(got.Data) != want || got.Source.NativeEventID != "ev1" {
		t.Fatalf("GetEvidence = %+v", got)
	}
	list, err := f.svc.ListEvidence(f.ctx, ListEvidenceInput{WorkID: &w.ID})
	if err != nil {
		t.Fatal(err)
	}
	if len(list.Evidence) != 1 || list.Evidence[0].DataBytes != len(want) || list.Evidence[0].ContentHash != e.ContentHash {
		t.Fatalf("list = %+v", list)
	}
	raw, _ := json.Marshal(list)
	if strings.Contains(string(raw), `"data"`) || !strings.Contains(string(raw), `"dataBytes":24`) {
		t.Fatalf("list JSON %s", raw)
	}
	d, _ := f.svc.GetWork(f.ctx, GetWorkInput{WorkID: w.ID, FullEvidence: true})
	if len(d.Work.EvidenceIDs) != 1 || d.Work.EvidenceIDs[0] != e.ID || d.Work.UpdatedAt != Timestamp(t0.Add(time.Second)) {
		t.Fatalf("work after evidence = %+v", d.Work)
	}
}

func TestListEvidenceNewestFirst(t *testing.T) {
	f := newFixture(t)
	w := f.work("w")
	a := f.evidence(w.ID, "", 1)
	b := f.evidence("", "", 2) // same millisecond: ID order breaks the tie
	f.clock.Advance(time.Millisecond)
	c := f.evidence(w.ID, "", 3)
	all, _ := f.svc.ListEvidence(f.ctx, ListEvidenceInput{WorkID: nil})
	if ids := []string{all.Evidence[0].ID, all.Evidence[1].ID, all.Evidence[2].ID}; ids[0] != c.ID || ids[1] != b.ID || ids[2] != a.ID {
		t.Fatalf("order %v want %v", ids, []string{c.ID, b.ID, a.ID})
	}
	mine, _ := f.svc.ListEvidence(f.ctx, ListEvidenceInput{WorkID: &w.ID})
	if len(mine.Evidence) != 2 {
		t.Fatalf("work filter: %+v", mine)
	}
	_, err := f.svc.ListEvidence(f.ctx, ListEvidenceInput{WorkID: ptr("work_missing")})
	wantErr(t, err, ErrNotFound, "Unknown work work_missing")
}

func TestAddEvidenceRejects(t *testing.T) {
	f := newFixture(t)
	w := f.work("w")
	ok := AddEvidenceInput{WorkID: &w.ID, Kind: "test", Trust: "agent_claim", Source: EvidenceSource{Adapter: "x"}, Summary: "s", Data: 1}
	mod := func(fn func(*AddEvidenceInput)) AddEvidenceInput { in := ok; fn(&in); return in }
	tests := []struct {
		name string
		in   AddEvidenceInput
		kind error
		msg  string
	}{
		{"unknown work", mod(func(in *AddEvidenceInput) { in.WorkID = ptr("work_x") }), ErrNotFound, "Unknown work work_x"},
		{"bad kind", mod(func(in *AddEvidenceInput) { in.Kind = "guess" }), ErrInvalid, `Invalid evidence kind "guess"`},
		{"bad trust", mod(func(in *AddEvidenceInput) { in.Trust = "trusted" }), ErrInvalid, `Invalid evidence trust "trusted"`},
		{"blank adapter", mod(func(in *AddEvidenceInput) { in.Source.Adapter = " " }), ErrInvalid, "source.adapter must not be blank"},
		{"blank summary", mod(func(in *AddEvidenceInput) { in.Summary = "" }), ErrInvalid, "summary must not be blank"},
		{"bad json", mod(func(in *AddEvidenceInput) { in.Data = json.RawMessage(`{"a":`) }), ErrInvalid, "not valid JSON"},
		{"oversized data", mod(func(in *AddEvidenceInput) { in.Data = strings.Repeat("x", maxEvidenceRaw) }), ErrInvalid, "Evidence data exceeds 1048576 bytes"},
		{"unencodable", mod(func(in *AddEvidenceInput) { in.Data = make(chan int) }), ErrInvalid, "encode evidence data"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			err := f.unchanged(func() error { _, err := f.svc.AddEvidence(f.ctx, tt.in); return err })
			wantErr(t, err, tt.kind, tt.msg)
		})
	}
	t.Run("batch is all or nothing", func(t *testing.T) {
		err := f.unchanged(func() error {
			_, err := f.svc.AddEvidenceBatch(f.ctx, []AddEvidenceInput{ok, mod(func(in *AddEvidenceInput) { in.WorkID = ptr("work_x") })})
			return err
		})
		wantErr(t, err, ErrNotFound, "Unknown work work_x")
	})
	_, err := f.svc.GetEvidence(f.ctx, "evidence_missing")
	wantErr(t, err, ErrNotFound, "Unknown evidence evidence_missing")
	_, err = f.svc.GetEvidence(f.ctx, " ")
	wantErr(t, err, ErrInvalid, "evidenceId must not be blank")
}
