package workflow

import (
	"encoding/json"
	"strings"
	"testing"
	"time"

	"github.com/agent-interop/runtime/catalogs/limits"
)

func (f *fixture) handoffInput(workID string) CreateHandoffInput {
	return CreateHandoffInput{
		WorkID:              workID,
		SourceSession:       "codex:a",
		DestinationSession:  ptr("claude-code:b"),
		Objective:           "Finish the retry loop",
		AcceptanceCriteria:  []string{"tests pass"},
		EvidenceIDs:         []string{},
		ChangedFiles:        []string{"retry.go"},
		Risks:               []string{},
		UnresolvedQuestions: []string{},
		AuthorityBoundaries: []string{"do not touch the API"},
	}
}

// tokensOf counts a packet exactly as the service does.
func tokensOf(t *testing.T, f *fixture, p Packet) int {
	t.Helper()
	raw, err := CompactJSON(p)
	if err != nil {
		t.Fatal(err)
	}
	n, err := f.svc.tokens.Count(string(raw))
	if err != nil {
		t.Fatal(err)
	}
	return n
}

func TestCreateHandoffSmallHasNoOmissions(t *testing.T) {
	f := newFixture(t)
	w := f.work("w")
	f.clock.Advance(time.Second)
	in := f.handoffInput(w.ID)
	in.ContinuationState = ptr("in_progress")
	in.LatestValidation = &Validation{Command: "go test ./...", Outcome: "passed"}
	in.NextAction = ptr("run the linter")
	h, err := f.svc.CreateHandoff(f.ctx, in)
	if err != nil {
		t.Fatal(err)
	}
	if !strings.HasPrefix(h.ID, "handoff_") || h.Status != "created" || h.TokenBudget != 2000 || len(h.OmittedFields) != 0 {
		t.Fatalf("handoff = %+v", h)
	}
	p, err := f.svc.GetHandoffPacket(f.ctx, h.ID)
	if err != nil {
		t.Fatal(err)
	}
	if p.ContextTokens != tokensOf(t, f, p) || p.ContextTokens > 2000 || p.ContextTokens != h.ContextTokens {
		t.Fatalf("contextTokens %d, measured %d, record %d", p.ContextTokens, tokensOf(t, f, p), h.ContextTokens)
	}
	if p.Tokenizer != TokenizerLabel || len(p.Omissions) != 0 || p.NextAction == nil || *p.ContinuationState != "in_progress" {
		t.Fatalf("packet = %+v", p)
	}
	raw, _ := CompactJSON(p)
	wantOrder := []string{`"handoffId"`, `"workId"`, `"sourceSession"`, `"destinationSession"`, `"objective"`, `"acceptanceCriteria"`,
		`"authorityBoundaries"`, `"evidenceIds"`, `"changedFiles"`, `"unresolvedQuestions"`, `"risks"`, `"continuationState"`,
		`"latestValidation"`, `"nextAction"`, `"omissions"`, `"contextTokens"`, `"tokenBudget"`, `"tokenizer"`}
	last := -1
	for _, k := range wantOrder {
		i := strings.Index(string(raw), k)
		if i <= last {
			t.Fatalf("key %s out of order in %s", k, raw)
		}
		last = i
	}
	d, _ := f.svc.GetWork(f.ctx, GetWorkInput{WorkID: w.ID, FullEvidence: true})
	if d.Work.Status != "in_progress" || *d.Work.DestinationSession != "claude-code:b" || d.Work.UpdatedAt != h.CreatedAt {
		t.Fatalf("work after handoff = %+v", d.Work)
	}
}

func TestCreateHandoffOmitsWhatDoesNotFit(t *testing.T) {
	f := newFixture(t)
	f.env[EnvHandoffBudget] = "400"
	w := f.work("w")
	in := f.handoffInput(w.ID)
	for i := 0; i < 60; i++ {
		in.Risks = append(in.Risks, "risk number "+itoa(i)+" could break the deployment pipeline badly")
	}
	in.NextAction = ptr("ship it")
	h, err := f.svc.CreateHandoff(f.ctx, in)
	if err != nil {
		t.Fatal(err)
	}
	if h.TokenBudget != 400 || strings.Join(h.OmittedFields, ",") != "risks" || len(h.Risks) != 60 {
		t.Fatalf("record: budget %d omitted %v risks %d", h.TokenBudget, h.OmittedFields, len(h.Risks))
	}
	if h.ContextTokens > 400 {
		t.Fatalf("contextTokens %d over budget", h.ContextTokens)
	}
	p, err := f.svc.GetHandoffPacket(f.ctx, h.ID)
	if err != nil {
		t.Fatal(err)
	}
	if p.Risks != nil || p.NextAction == nil || len(p.Omissions) != 1 {
		t.Fatalf("packet = %+v", p)
	}
	want := "exceeds 400-token handoff budget; request field explicitly from work " + w.ID
	if p.Omissions[0].Field != "risks" || p.Omissions[0].Reason != want {
		t.Fatalf("omission = %+v", p.Omissions[0])
	}
	if p.ContextTokens != tokensOf(t, f, p) || p.ContextTokens > 400 {
		t.Fatalf("packet tokens %d measured %d", p.ContextTokens, tokensOf(t, f, p))
	}
	// The creation-time packet used the "delivery" wording.
	built, omitted, err := f.svc.buildPacket(&h, 400)
	if err != nil || len(omitted) != 1 {
		t.Fatal(err, omitted)
	}
	if r := built.Omissions[0].Reason; r != "exceeds 400-token handoff delivery budget; request field explicitly from work "+w.ID {
		t.Fatalf("creation reason %q", r)
	}
	// The durable record keeps the omitted field; the work item still has it.
	raw, _ := json.Marshal(h)
	if !strings.Contains(string(raw), "risk number 59") {
		t.Fatal("durable record lost the omitted field")
	}
}

func TestCreateHandoffRefusals(t *testing.T) {
	f := newFixture(t)
	w := f.work("w")
	e := f.evidence(w.ID, "", 1)
	f.env[EnvHandoffBudget] = "100"
	huge := f.handoffInput(w.ID)
	huge.Objective = strings.Repeat("refactor the module carefully ", 40)
	err := f.unchanged(func() error { _, err := f.svc.CreateHandoff(f.ctx, huge); return err })
	wantErr(t, err, ErrInvalid, "Handoff exceeds its 100-token delivery budget even with every optional field omitted (mandatory routing, objective, acceptance criteria, and authority boundaries measure ",
		" tokens). Raise INTEROP_HANDOFF_TOKEN_BUDGET or shorten the objective/criteria/boundaries; the handoff was NOT created.")
	delete(f.env, EnvHandoffBudget)

	bad := func(fn func(*CreateHandoffInput)) CreateHandoffInput { in := f.handoffInput(w.ID); fn(&in); return in }
	tests := []struct {
		name string
		in   CreateHandoffInput
		kind error
		msg  string
	}{
		{"unknown work", bad(func(in *CreateHandoffInput) { in.WorkID = "work_x" }), ErrNotFound, "Unknown work work_x"},
		{"unknown evidence", bad(func(in *CreateHandoffInput) { in.EvidenceIDs = []string{e.ID, "evidence_x"} }), ErrNotFound, "Unknown evidence evidence_x"},
		{"blank source", bad(func(in *CreateHandoffInput) { in.SourceSession = "" }), ErrInvalid, "sourceSession must not be blank"},
		{"blank objective", bad(func(in *CreateHandoffInput) { in.Objective = " " }), ErrInvalid, "objective must not be blank"},
		{"bad continuation", bad(func(in *CreateHandoffInput) { in.ContinuationState = ptr("done") }), ErrInvalid, `Invalid continuationState "done"`},
		{"bad outcome", bad(func(in *CreateHandoffInput) { in.LatestValidation = &Validation{Outcome: "ok"} }), ErrInvalid, `Invalid latestValidation.outcome "ok"`},
		{"too many files", bad(func(in *CreateHandoffInput) {
			in.ChangedFiles = make([]string, limits.CreateHandoffChangedFilesMaxItems+1)
		}), ErrInvalid, "changedFiles accepts at most 1000"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			err := f.unchanged(func() error { _, err := f.svc.CreateHandoff(f.ctx, tt.in); return err })
			wantErr(t, err, tt.kind, tt.msg)
		})
	}
}

func TestCreateHandoffOmissionNoteMustFit(t *testing.T) {
	f := newFixture(t)
	w := f.work("w")
	in := f.handoffInput(w.ID)
	in.Objective = strings.Repeat("make the scheduler fair under load ", 12)
	for i := 0; i < 10; i++ {
		in.EvidenceIDs = append(in.EvidenceIDs, f.evidence(w.ID, "", i).ID)
	}
	// Measure the mandatory packet, then allow only 10 tokens more: the
	// first optional field (10 evidence IDs) cannot fit, nor can its
	// ~30-token omission note. (Handoff IDs are random UUIDs whose token
	// count varies by a few tokens, hence the margin.)
	h, err := validateHandoff(in)
	if err != nil {
		t.Fatal(err)
	}
	h.ID = randomID("handoff")
	p := basePacket(&h, 1000)
	n, err := f.svc.measure(&p, 0)
	if err != nil || n < 100 {
		t.Fatalf("mandatory packet measures %d (%v); the test needs >= 100", n, err)
	}
	f.env[EnvHandoffBudget] = itoa(n + 10)
	err = f.unchanged(func() error { _, err := f.svc.CreateHandoff(f.ctx, in); return err })
	wantErr(t, err, ErrInvalid, "Handoff exceeds its "+itoa(n+10)+"-token delivery budget",
		"even the omission note for 'evidenceIds' does not fit", "the handoff was NOT created.")
}

func TestHandoffBudgetFromEnv(t *testing.T) {
	tests := []struct {
		raw  *string
		want int
	}{
		{nil, 2000}, {ptr(""), 2000}, {ptr("abc"), 2000}, {ptr("99"), 2000}, {ptr("99.9"), 2000},
		{ptr("100"), 100}, {ptr(" 300 "), 300}, {ptr("2500.7"), 2500}, {ptr("1e3"), 1000},
		{ptr("NaN"), 2000}, {ptr("Inf"), 2000}, {ptr("-5000"), 2000},
	}
	for _, tt := range tests {
		env := fakeEnv{}
		if tt.raw != nil {
			env[EnvHandoffBudget] = *tt.raw
		}
		s := New(nil, Options{LookupEnv: env.lookup})
		if got := s.handoffBudget(); got != tt.want {
			t.Errorf("budget(%v) = %d, want %d", tt.raw, got, tt.want)
		}
	}
}

func TestHandoffLifecycle(t *testing.T) {
	f := newFixture(t)
	w := f.work("w")
	h, err := f.svc.CreateHandoff(f.ctx, f.handoffInput(w.ID))
	if err != nil {
		t.Fatal(err)
	}
	for _, next := range []string{"accepted", "applied", "verified", "completed"} {
		f.clock.Advance(time.Second)
		got, err := f.svc.UpdateHandoffStatus(f.ctx, h.ID, next)
		if err != nil {
			t.Fatalf("-> %s: %v", next, err)
		}
		if got.Status != next || got.UpdatedAt != Timestamp(f.clock.Now()) {
			t.Fatalf("after %s: %+v", next, got)
		}
	}
	err = f.unchanged(func() error { _, err := f.svc.UpdateHandoffStatus(f.ctx, h.ID, "blocked"); return err })
	wantErr(t, err, ErrInvalid, "Invalid handoff transition completed -> blocked; completed is terminal")
}

func TestHandoffTransitionTable(t *testing.T) {
	all := []string{"created", "accepted", "applied", "verified", "completed", "blocked", "superseded"}
	allowed := map[string]string{
		"created":    "accepted,blocked,superseded",
		"accepted":   "applied,blocked,superseded",
		"applied":    "verified,blocked,superseded",
		"verified":   "completed,blocked,superseded",
		"blocked":    "accepted,superseded",
		"completed":  "",
		"superseded": "",
	}
	for _, from := range all {
		for _, to := range all {
			err := checkTransition(from, to)
			ok := strings.Contains(","+allowed[from]+",", ","+to+",")
			if ok != (err == nil) {
				t.Errorf("%s -> %s: allowed %v, err %v", from, to, ok, err)
			}
			if err != nil && !strings.HasPrefix(err.Error(), "Invalid handoff transition "+from+" -> "+to) {
				t.Errorf("message %q", err)
			}
			if err != nil && allowed[from] != "" && !strings.Contains(err.Error(), "allowed next states: "+strings.ReplaceAll(allowed[from], ",", ", ")) {
				t.Errorf("message %q lacks the allowed states", err)
			}
		}
	}
}

func TestUpdateHandoffStatusRejects(t *testing.T) {
	f := newFixture(t)
	w := f.work("w")
	h, _ := f.svc.CreateHandoff(f.ctx, f.handoffInput(w.ID))
	f.svc.UpdateHandoffStatus(f.ctx, h.ID, "accepted")
	f.svc.UpdateHandoffStatus(f.ctx, h.ID, "applied")
	tests := []struct {
		id, status string
		kind       error
		msg        string
	}{
		{h.ID, "completed", ErrInvalid, "Invalid handoff transition applied -> completed; allowed next states: verified, blocked, superseded"},
		{h.ID, "applied", ErrInvalid, "Invalid handoff transition applied -> applied"},
		{h.ID, "done", ErrInvalid, `Invalid handoff status "done"`},
		{"handoff_missing", "accepted", ErrNotFound, "Unknown handoff handoff_missing"},
		{"", "accepted", ErrInvalid, "handoffId must not be blank"},
	}
	for _, tt := range tests {
		err := f.unchanged(func() error { _, err := f.svc.UpdateHandoffStatus(f.ctx, tt.id, tt.status); return err })
		wantErr(t, err, tt.kind, tt.msg)
	}
	_, err := f.svc.GetHandoffPacket(f.ctx, "handoff_missing")
	wantErr(t, err, ErrNotFound, "Unknown handoff handoff_missing")
}

func TestHandoffIDsUniqueUnderFrozenClock(t *testing.T) {
	f := newFixture(t)
	w := f.work("w")
	seen := map[string]bool{}
	for i := 0; i < 20; i++ {
		h, err := f.svc.CreateHandoff(f.ctx, f.handoffInput(w.ID))
		if err != nil {
			t.Fatal(err)
		}
		if seen[h.ID] {
			t.Fatalf("duplicate id %s", h.ID)
		}
		seen[h.ID] = true
	}
}
