package bench

import (
	"context"
	"encoding/json"
	"fmt"
	"io"
	"strings"
	"time"

	"github.com/agent-interop/runtime/ent"
	"github.com/agent-interop/runtime/ent/operation"
	"github.com/agent-interop/runtime/ent/schema"
	"github.com/agent-interop/runtime/ent/workitem"
	"github.com/agent-interop/runtime/internal/store"
)

// Seed is what SeedStore wrote: the record counts and a few IDs the
// measured calls address.
type Seed struct {
	Works, Evidence, Claims, Messages, Events int
	Conversations, EventSessions              int
	// WorkID is a work in the middle of a dependency chain; ConversationID
	// a conversation with messages; EventSession a session with events;
	// Session a session that owns works.
	WorkID, ConversationID, EventProvider, EventSession, Session string
	// Participants of ConversationID: the sender and recipient of a send.
	Sender, Recipient string
	// Shape is how the works depend on each other (ShapeChain when empty).
	Shape string `json:"shape,omitempty"`
}

// Graph shapes of the seeded works: the dependencies between them and how
// much evidence they carry. Every shape has one active claim per work.
const (
	// ShapeChain: chains of seedChain works, evidence on every tenth.
	ShapeChain = "chain"
	// ShapeTree: one binary dependency tree (work i depends on work
	// (i-1)/2), evidence on every tenth.
	ShapeTree = "tree"
	// ShapeFanIn: in every block of seedFanIn works the newest depends on
	// all the others (100, the most one work may depend on), evidence on
	// every tenth.
	ShapeFanIn = "fanin"
	// ShapeDense: chains as ShapeChain with evidence on every work.
	ShapeDense = "dense"
	// seedFanIn is the block of ShapeFanIn.
	seedFanIn = 101
)

// Shapes lists every graph shape SeedStore writes.
func Shapes() []string { return []string{ShapeChain, ShapeTree, ShapeFanIn, ShapeDense} }

// validShape reports whether s names a shape.
func validShape(s string) bool {
	for _, x := range Shapes() {
		if s == x {
			return true
		}
	}
	return false
}

// Seeding shape: every size in n.
const (
	// seedChunk is the rows per bulk insert: ent binds one value per
	// column (a dozen at most), well inside PostgreSQL's 65,535
	// parameters per statement.
	seedChunk            = 1000
	seedSessions         = 50   // sessions that own works and claims
	seedChain            = 10   // works per dependency chain
	seedMessagesPerCov   = 250  // messages per conversation (below the 500 retained)
	seedEventsPerSes     = 5000 // events per session (below the 10,000 retained)
	seedMinConversations = 40   // conversations at the smallest sizes
)

// SeedStore opens (creating) the store at location (a SQLite file or a
// PostgreSQL URL, as store.Open takes) and writes n work items
// (chains of seedChain dependencies), n/10 evidence records, n active
// claims, n conversation messages and n session events with direct bulk
// inserts through the generated ent client, so the seed follows the schema
// (and fails to compile rather than at run time when it changes).
func SeedStore(ctx context.Context, location string, n int, now time.Time, progress io.Writer) (Seed, error) {
	return SeedShape(ctx, location, ShapeChain, n, now, progress)
}

// SeedShape is SeedStore with the works in one of the Shapes.
func SeedShape(ctx context.Context, location, shape string, n int, now time.Time, progress io.Writer) (Seed, error) {
	if !validShape(shape) {
		return Seed{}, fmt.Errorf("shape %q is not one of %s", shape, strings.Join(Shapes(), ", "))
	}
	st, err := store.Open(ctx, location)
	if err != nil {
		return Seed{}, err
	}
	defer st.Close()
	sd := seedPlan(shape, n)
	sr := &seeder{ctx: ctx, st: st, n: n, now: now.UTC().Truncate(time.Millisecond), progress: progress, sd: &sd}
	for _, fn := range []func() error{
		sr.workItems, sr.evidence, sr.claims, sr.conversations, sr.messages, sr.sessionEvents, sr.sessionHeads,
	} {
		if err := fn(); err != nil {
			return sd, err
		}
	}
	return sd, nil
}

// seedPlan is the Seed that SeedShape(shape, n) writes, without writing it.
func seedPlan(shape string, n int) Seed {
	sd := Seed{Works: n, Evidence: max(n/10, 1), Claims: n, Messages: n, Events: n, Shape: shape}
	if shape == ShapeDense {
		sd.Evidence = n
	}
	sd.Session = seedSession(0)
	sd.WorkID = seedWorkID(n/2 - n/2%seedChain + seedChain/2)
	// At least a few pages of conversations at every size, so a listing
	// page does the same work at 1,000 records as at 100,000.
	sd.Conversations = max(seedMinConversations, n/seedMessagesPerCov)
	sd.Sender, sd.Recipient = "codex:seed-00", "claude-code:seed-reviewer"
	sd.ConversationID = seedConversationID(sd.Conversations / 2)
	sd.EventSessions = max(1, n/min(n, seedEventsPerSes))
	sd.EventProvider = "codex"
	sd.EventSession = fmt.Sprintf("thr_seed_%03d", sd.EventSessions/2)
	return sd
}

// seeder writes one SeedStore run's records, one table per method.
type seeder struct {
	ctx      context.Context
	st       *store.Store
	n        int
	now      time.Time
	progress io.Writer
	sd       *Seed
}

func seedSession(i int) string        { return fmt.Sprintf("codex:seed-%02d", i%seedSessions) }
func seedWorkID(i int) string         { return fmt.Sprintf("work_seed_%07d", i) }
func seedConversationID(i int) string { return fmt.Sprintf("conversation_seed_%05d", i) }

// step writes total records in transactions of seedChunk rows, fn writing
// rows from..to, and reports progress every 20 chunks.
func (sr *seeder) step(what string, total int, fn func(tx *ent.Tx, from, to int) error) error {
	for from := 0; from < total; from += seedChunk {
		to := min(from+seedChunk, total)
		if err := sr.st.Tx(sr.ctx, func(tx *ent.Tx) error { return fn(tx, from, to) }); err != nil {
			return fmt.Errorf("seed %s %d..%d: %w", what, from, to, err)
		}
		if to == total || (to/seedChunk)%20 == 0 {
			fmt.Fprintf(sr.progress, "  seeded %d/%d %s\n", to, total, what)
		}
	}
	return nil
}

// workItems writes n works in dependency chains of seedChain.
func (sr *seeder) workItems() error {
	n, now := sr.n, sr.now
	objective := strings.Repeat("Make the importer idempotent and cover it with tests. ", 3)
	statuses := []string{"open", "in_progress", "blocked", "accepted", "rejected"}
	return sr.step("work items", n, func(tx *ent.Tx, from, to int) error {
		b := make([]*ent.WorkItemCreate, 0, to-from)
		for i := from; i < to; i++ {
			src := seedSession(i)
			w := tx.WorkItem.Create().SetID(seedWorkID(i)).SetObjective(objective).
				SetAcceptanceCriteria([]string{"imports twice without duplicates", "tests pass"}).
				SetRisks([]string{}).SetUnresolvedQuestions([]string{}).SetChangedFiles([]string{"src/importer.go"}).
				SetSourceSession(src).SetStatus(workStatus(statuses[i%len(statuses)])).
				SetCreatedAt(now.Add(-time.Duration(n-i) * time.Second)).SetUpdatedAt(now.Add(-time.Duration(n-i) * time.Second))
			// ent inserts the batch's nodes, then its edges in one
			// statement; a dependency is either in the same chunk or
			// written by an earlier one.
			switch sr.sd.Shape {
			case ShapeTree:
				if i > 0 {
					w.AddDependsOnIDs(seedWorkID((i - 1) / 2))
				}
			case ShapeFanIn:
				if i%seedFanIn == seedFanIn-1 {
					deps := make([]string, 0, seedFanIn-1)
					for j := i - seedFanIn + 1; j < i; j++ {
						deps = append(deps, seedWorkID(j))
					}
					w.AddDependsOnIDs(deps...)
				}
			default:
				if i%seedChain != 0 {
					w.AddDependsOnIDs(seedWorkID(i - 1))
				}
			}
			b = append(b, w)
		}
		return tx.WorkItem.CreateBulk(b...).Exec(sr.ctx)
	})
}

// evidence writes the Seed's evidence records, a diff each.
func (sr *seeder) evidence() error {
	n, now, total := sr.n, sr.now, sr.sd.Evidence
	data := json.RawMessage(`{"diff":"` + strings.Repeat("+ line of the change\\n", 20) + `"}`)
	return sr.step("evidence records", total, func(tx *ent.Tx, from, to int) error {
		b := make([]*ent.EvidenceCreate, 0, to-from)
		for i := from; i < to; i++ {
			w, s := seedWorkID(i*n/total), seedSession(i)
			b = append(b, tx.Evidence.Create().SetID(fmt.Sprintf("evidence_seed_%07d", i)).SetWorkID(w).SetSessionID(s).
				SetKind("diff").SetTrust("provider_observed").SetSource(schema.EvidenceSource{Adapter: "codex"}).
				SetCapturedAt(now.Add(-time.Duration(total-i)*time.Second)).SetSummary("diff of the importer change").
				SetData(string(data)).SetDataBytes(len(data)).SetContentHash(strings.Repeat("ab", 32)))
		}
		return tx.Evidence.CreateBulk(b...).Exec(sr.ctx)
	})
}

// claims writes n active claims on distinct files.
func (sr *seeder) claims() error {
	n, now := sr.n, sr.now
	return sr.step("active claims", n, func(tx *ent.Tx, from, to int) error {
		b := make([]*ent.ClaimCreate, 0, to-from)
		for i := from; i < to; i++ {
			at := now.Add(-time.Duration(i%1800) * time.Second)
			b = append(b, tx.Claim.Create().SetID(fmt.Sprintf("claim_seed_%07d", i)).SetWorkID(seedWorkID(i%n)).
				SetSessionID(seedSession(i)).SetResource(fmt.Sprintf("src/pkg%04d/file%07d.go", i/100, i)).
				SetAcquiredAt(at).SetExpiresAt(at.Add(2*time.Hour)))
		}
		return tx.Claim.CreateBulk(b...).Exec(sr.ctx)
	})
}

// conversations writes the Seed's conversations with their two
// participants, Sender and Recipient.
func (sr *seeder) conversations() error {
	n, now, sd := sr.n, sr.now, sr.sd
	return sr.step("conversations", sd.Conversations, func(tx *ent.Tx, from, to int) error {
		for i := from; i < to; i++ {
			per := n / sd.Conversations
			if err := tx.Conversation.Create().SetID(seedConversationID(i)).SetTitle(fmt.Sprintf("review %d", i)).
				SetCreatedAt(now.Add(-time.Hour)).SetUpdatedAt(now.Add(-time.Duration(sd.Conversations-i) * time.Second)).
				SetLastSequence(int64(per)).Exec(sr.ctx); err != nil {
				return err
			}
			for _, p := range []struct{ id, prov, native string }{{sd.Sender, "codex", "seed-00"}, {sd.Recipient, "claude-code", "seed-reviewer"}} {
				if err := tx.Participant.Create().SetConversationID(seedConversationID(i)).SetParticipantID(p.id).SetProvider(p.prov).
					SetNativeID(p.native).SetJoinedAt(now.Add(-time.Hour)).Exec(sr.ctx); err != nil {
					return err
				}
			}
		}
		return nil
	})
}

// messages writes n conversation messages spread evenly over the
// conversations, each with the delivery operation that carried it.
func (sr *seeder) messages() error {
	n, now, sd := sr.n, sr.now, sr.sd
	text := strings.Repeat("Please review the importer change; the tests cover the duplicate case. ", 3)
	return sr.step("conversation messages", n, func(tx *ent.Tx, from, to int) error {
		// Every message references the delivery operation that carried it
		// (the one ledger), here a completed send.
		ops := make([]*ent.OperationCreate, 0, to-from)
		b := make([]*ent.MessageCreate, 0, to-from)
		per := n / sd.Conversations
		for i := from; i < to; i++ {
			conv := min(i/per, sd.Conversations-1)
			seq := i - conv*per + 1
			at := now.Add(-time.Duration(n-i) * time.Second)
			opID, key := fmt.Sprintf("op_seed_%07d", i), fmt.Sprintf("seed-%07d", i)
			ops = append(ops, tx.Operation.Create().SetID(opID).SetIdempotencyKey(key).SetProvider("claude-code").
				SetNativeID("seed-reviewer").SetOperation("send").SetStatus(operation.StatusCompleted).
				SetProviderState("outcome_observed").SetCreatedAt(at).SetUpdatedAt(at))
			b = append(b, tx.Message.Create().SetID(fmt.Sprintf("message_seed_%07d", i)).SetConversationID(seedConversationID(conv)).
				SetSequence(int64(seq)).SetSender(sd.Sender).SetRecipient(sd.Recipient).SetText(text).
				SetCreatedAt(at).SetOperationID(opID).SetIdempotencyKey(key))
		}
		if err := tx.Operation.CreateBulk(ops...).Exec(sr.ctx); err != nil {
			return err
		}
		return tx.Message.CreateBulk(b...).Exec(sr.ctx)
	})
}

// eventsPerSession is the events each seeded session holds (the last
// takes the remainder).
func (sr *seeder) eventsPerSession() int { return min(sr.n, seedEventsPerSes) }

// sessionEvents writes n session events over the Seed's event sessions.
func (sr *seeder) sessionEvents() error {
	n, now, sd, per := sr.n, sr.now, sr.sd, sr.eventsPerSession()
	eventData := json.RawMessage(`{"type":"item.completed","text":"` + strings.Repeat("ran the tests; all pass. ", 6) + `"}`)
	return sr.step("session events", n, func(tx *ent.Tx, from, to int) error {
		b := make([]*ent.SessionEventCreate, 0, to-from)
		for i := from; i < to; i++ {
			ses := min(i/per, sd.EventSessions-1)
			seq := i - ses*per + 1
			b = append(b, tx.SessionEvent.Create().SetProvider("codex").SetNativeID(fmt.Sprintf("thr_seed_%03d", ses)).
				SetSequence(int64(seq)).SetEpoch(1).SetType("item.completed").SetData(eventData).
				SetTimestamp(now.Add(-time.Duration(n-i)*time.Millisecond)))
		}
		return tx.SessionEvent.CreateBulk(b...).Exec(sr.ctx)
	})
}

// sessionHeads writes each event session's stream head and registry
// entry, so reading its events needs no provider program.
func (sr *seeder) sessionHeads() error {
	n, now, sd, per := sr.n, sr.now, sr.sd, sr.eventsPerSession()
	err := sr.st.Tx(sr.ctx, func(tx *ent.Tx) error {
		for s := range sd.EventSessions {
			last := per
			if s == sd.EventSessions-1 {
				last = n - s*per
			}
			native := fmt.Sprintf("thr_seed_%03d", s)
			if err := tx.SessionStream.Create().SetProvider("codex").SetNativeID(native).SetLastSequence(int64(last)).
				SetEpoch(1).SetUpdatedAt(now).Exec(sr.ctx); err != nil {
				return err
			}
			// Known to the registry, so reading its events needs no
			// provider program.
			if err := tx.ProviderSession.Create().SetProvider("codex").SetNativeID(native).
				SetFirstSeenAt(now).SetLastSeenAt(now).Exec(sr.ctx); err != nil {
				return err
			}
		}
		return nil
	})
	if err != nil {
		return fmt.Errorf("seed session heads: %w", err)
	}
	return nil
}

func workStatus(s string) workitem.Status { return workitem.Status(s) }
