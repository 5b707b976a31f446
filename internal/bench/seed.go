package bench

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"io/fs"
	"os"
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
	seedChunk = 1000
	// seedChunksPerTx is the bulk inserts per transaction: a commit
	// writes every page its transaction dirtied to the WAL, and the
	// claims' seven indexes take rows in scattered order, so 1,000 rows
	// per commit wrote the same index pages again and again (a 100,000
	// claim seed: 12.9 s of CPU at one chunk per commit, 6.4 s at 20).
	seedChunksPerTx = 20
	// seedCacheKiB is the SQLite page cache of the seeding connection
	// (2 MiB by default), so a transaction's dirty index pages stay in
	// memory until its commit: 20.3 s of CPU to seed works, evidence
	// and claims of 100,000 works at the default, 13.5 s with this.
	seedCacheKiB         = 128 << 10
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
	return seedShape(ctx, location, shape, n, false, now, progress)
}

// SeedGraph is SeedShape with only what get_work_graph and list_work_items
// read: the works in the shape, their evidence and their active claims (no
// conversation, message or session event, about half of SeedShape's rows).
// The Seed's message, event and conversation counts are 0.
func SeedGraph(ctx context.Context, location, shape string, n int, now time.Time, progress io.Writer) (Seed, error) {
	return seedShape(ctx, location, shape, n, true, now, progress)
}

// SeedGraphs writes what SeedGraph writes for each of shapes, a store
// each at locations[i] (SQLite files), sharing the work: it seeds a base
// store at base once with the works (no dependency) and their claims,
// which every shape has alike, then per shape copies the closed base file
// and writes the shape's dependencies and evidence into the copy. A
// 100,000-work shape costs about a fifth of SeedGraph's CPU this way, the
// claims' seven indexes being most of a seed.
func SeedGraphs(ctx context.Context, base string, shapes, locations []string, n int, now time.Time, progress io.Writer) ([]Seed, error) {
	if len(shapes) != len(locations) {
		return nil, fmt.Errorf("seed graphs: %d shapes and %d locations", len(shapes), len(locations))
	}
	for _, loc := range append([]string{base}, locations...) {
		if store.IsPostgres(loc) {
			return nil, fmt.Errorf("seed graphs: %s is not a SQLite file", store.RedactDSN(loc))
		}
	}
	for _, sh := range shapes {
		if !validShape(sh) {
			return nil, fmt.Errorf("shape %q is not one of %s", sh, strings.Join(Shapes(), ", "))
		}
	}
	now = now.UTC().Truncate(time.Millisecond)
	err := withSeeder(ctx, base, ShapeChain, n, true, now, progress, func(sr *seeder) error {
		sr.noEdges = true
		for _, fn := range []func() error{sr.workItems, sr.claims} {
			if err := fn(); err != nil {
				return err
			}
		}
		return nil
	})
	if err != nil {
		return nil, err
	}
	out := make([]Seed, len(shapes))
	for i, sh := range shapes {
		if err := copySQLite(base, locations[i]); err != nil {
			return nil, err
		}
		err := withSeeder(ctx, locations[i], sh, n, true, now, progress, func(sr *seeder) error {
			out[i] = *sr.sd
			for _, fn := range []func() error{sr.edges, sr.evidence} {
				if err := fn(); err != nil {
					return err
				}
			}
			return nil
		})
		if err != nil {
			return nil, fmt.Errorf("seed the %s shape: %w", sh, err)
		}
	}
	return out, nil
}

// copySQLite copies the closed SQLite store src (its file, and its WAL
// when closing left one) to dst.
func copySQLite(src, dst string) error {
	for _, suffix := range []string{"", "-wal"} {
		if err := copyFile(src+suffix, dst+suffix); err != nil {
			if suffix != "" && errors.Is(err, fs.ErrNotExist) {
				continue
			}
			return fmt.Errorf("copy the base store: %w", err)
		}
	}
	return nil
}

// copyFile copies src to a new file dst.
func copyFile(src, dst string) error {
	in, err := os.Open(src)
	if err != nil {
		return err
	}
	defer in.Close()
	out, err := os.OpenFile(dst, os.O_WRONLY|os.O_CREATE|os.O_EXCL, 0o600)
	if err != nil {
		return err
	}
	if _, err := io.Copy(out, in); err != nil {
		out.Close()
		return err
	}
	return out.Close()
}

// withSeeder opens (creating) the store at location for a seed of n works
// in shape, runs fn with its seeder and closes the store.
func withSeeder(ctx context.Context, location, shape string, n int, graphOnly bool, now time.Time, progress io.Writer, fn func(*seeder) error) error {
	st, err := store.Open(ctx, location)
	if err != nil {
		return err
	}
	defer st.Close()
	if !store.IsPostgres(location) {
		// One connection, so the page cache pragma holds for every
		// transaction of the seed.
		st.DB().SetMaxOpenConns(1)
		if _, err := st.DB().ExecContext(ctx, fmt.Sprintf("PRAGMA cache_size = -%d", seedCacheKiB)); err != nil {
			return fmt.Errorf("seed %s: set the page cache: %w", location, err)
		}
	}
	sd := seedPlan(shape, n, graphOnly)
	return fn(&seeder{ctx: ctx, st: st, n: n, now: now.UTC().Truncate(time.Millisecond), progress: progress, sd: &sd})
}

func seedShape(ctx context.Context, location, shape string, n int, graphOnly bool, now time.Time, progress io.Writer) (Seed, error) {
	if !validShape(shape) {
		return Seed{}, fmt.Errorf("shape %q is not one of %s", shape, strings.Join(Shapes(), ", "))
	}
	var sd Seed
	err := withSeeder(ctx, location, shape, n, graphOnly, now, progress, func(sr *seeder) error {
		steps := []func() error{sr.workItems, sr.evidence, sr.claims}
		if !graphOnly {
			steps = append(steps, sr.conversations, sr.messages, sr.sessionEvents, sr.sessionHeads)
		}
		for _, fn := range steps {
			if err := fn(); err != nil {
				sd = *sr.sd
				return err
			}
		}
		sd = *sr.sd
		return nil
	})
	return sd, err
}

// seedPlan is the Seed that SeedShape(shape, n) writes (SeedGraph with
// graphOnly), without writing it.
func seedPlan(shape string, n int, graphOnly bool) Seed {
	sd := Seed{Works: n, Evidence: max(n/10, 1), Claims: n, Messages: n, Events: n, Shape: shape}
	if shape == ShapeDense {
		sd.Evidence = n
	}
	sd.Session = seedSession(0)
	sd.WorkID = seedWorkID(n/2 - n/2%seedChain + seedChain/2)
	if graphOnly {
		sd.Messages, sd.Events = 0, 0
		return sd
	}
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
	noEdges  bool // workItems writes the works without their dependencies
}

func seedSession(i int) string        { return fmt.Sprintf("codex:seed-%02d", i%seedSessions) }
func seedWorkID(i int) string         { return fmt.Sprintf("work_seed_%07d", i) }
func seedConversationID(i int) string { return fmt.Sprintf("conversation_seed_%05d", i) }

// step writes total records in bulk inserts of seedChunk rows,
// seedChunksPerTx of them per transaction, fn writing rows from..to, and
// reports progress after each transaction.
func (sr *seeder) step(what string, total int, fn func(tx *ent.Tx, from, to int) error) error {
	for start := 0; start < total; start += seedChunk * seedChunksPerTx {
		end := min(start+seedChunk*seedChunksPerTx, total)
		err := sr.st.Tx(sr.ctx, func(tx *ent.Tx) error {
			for from := start; from < end; from += seedChunk {
				if err := fn(tx, from, min(from+seedChunk, end)); err != nil {
					return fmt.Errorf("%d..%d: %w", from, min(from+seedChunk, end), err)
				}
			}
			return nil
		})
		if err != nil {
			return fmt.Errorf("seed %s: %w", what, err)
		}
		fmt.Fprintf(sr.progress, "  seeded %d/%d %s\n", end, total, what)
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
			if !sr.noEdges {
				w.AddDependsOnIDs(seedDeps(sr.sd.Shape, i)...)
			}
			b = append(b, w)
		}
		return tx.WorkItem.CreateBulk(b...).Exec(sr.ctx)
	})
}

// seedDeps are the works that work i depends on in shape.
func seedDeps(shape string, i int) []string {
	switch shape {
	case ShapeTree:
		if i > 0 {
			return []string{seedWorkID((i - 1) / 2)}
		}
	case ShapeFanIn:
		if i%seedFanIn == seedFanIn-1 {
			deps := make([]string, 0, seedFanIn-1)
			for j := i - seedFanIn + 1; j < i; j++ {
				deps = append(deps, seedWorkID(j))
			}
			return deps
		}
	default:
		if i%seedChain != 0 {
			return []string{seedWorkID(i - 1)}
		}
	}
	return nil
}

// edges writes the dependencies of the shape between works written
// without them (SeedGraphs' base store): ent has no bulk insert of a
// many-to-many edge alone, so these are multi-row inserts into its table,
// named by ent's generated constants, seedChunk rows each.
func (sr *seeder) edges() error {
	type edge struct{ from, to string }
	var all []edge
	for i := range sr.n {
		for _, d := range seedDeps(sr.sd.Shape, i) {
			all = append(all, edge{seedWorkID(i), d})
		}
	}
	head := fmt.Sprintf("INSERT INTO %s (%s, %s) VALUES ", workitem.DependsOnTable, workitem.DependsOnPrimaryKey[0], workitem.DependsOnPrimaryKey[1])
	return sr.step("dependencies", len(all), func(tx *ent.Tx, from, to int) error {
		var q strings.Builder
		q.WriteString(head)
		args := make([]any, 0, 2*(to-from))
		for k, e := range all[from:to] {
			if k > 0 {
				q.WriteString(", ")
			}
			q.WriteString("(?, ?)")
			args = append(args, e.from, e.to)
		}
		_, err := tx.ExecContext(sr.ctx, q.String(), args...)
		return err
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
