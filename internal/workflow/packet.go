package workflow

import (
	"bytes"
	"encoding/json"
	"fmt"
	"math"
	"strconv"
	"strings"
)

// EnvHandoffBudget overrides the handoff packet token budget.
const EnvHandoffBudget = "INTEROP_HANDOFF_TOKEN_BUDGET"

// Budget bounds (upstream: values below 100 or not numbers are ignored).
const (
	DefaultHandoffBudget = 2000
	minHandoffBudget     = 100
	maxHandoffBudget     = 1 << 30
)

// Packet is the bounded delivery form of a handoff. Field order is the
// upstream key order: routing and mandatory content, then the optional
// fields that fit (tried in this order), then omissions and the counts.
type Packet struct {
	HandoffID           string      `json:"handoffId"`
	WorkID              string      `json:"workId"`
	SourceSession       string      `json:"sourceSession"`
	DestinationSession  *string     `json:"destinationSession,omitempty"`
	Objective           string      `json:"objective"`
	AcceptanceCriteria  []string    `json:"acceptanceCriteria"`
	AuthorityBoundaries []string    `json:"authorityBoundaries"`
	EvidenceIDs         *[]string   `json:"evidenceIds,omitempty"`
	ChangedFiles        *[]string   `json:"changedFiles,omitempty"`
	UnresolvedQuestions *[]string   `json:"unresolvedQuestions,omitempty"`
	Risks               *[]string   `json:"risks,omitempty"`
	ContinuationState   *string     `json:"continuationState,omitempty"`
	LatestValidation    *Validation `json:"latestValidation,omitempty"`
	Assumptions         *[]string   `json:"assumptions,omitempty"`
	RollbackNotes       *[]string   `json:"rollbackNotes,omitempty"`
	NextAction          *string     `json:"nextAction,omitempty"`
	RepositoryRevision  *string     `json:"repositoryRevision,omitempty"`
	Omissions           []Omission  `json:"omissions"`
	ContextTokens       int         `json:"contextTokens"`
	TokenBudget         int         `json:"tokenBudget"`
	Tokenizer           string      `json:"tokenizer"`
}

// Omission names a field left out of a packet and where to get it.
type Omission struct {
	Field  string `json:"field"`
	Reason string `json:"reason"`
}

// optionalField is one packet field that may be left out.
type optionalField struct {
	name    string
	present func(h *Handoff) bool
	set     func(p *Packet, h *Handoff)
}

// optionalFields in the order they are tried. The four upstream 0.2 fields
// come first (upstream order); the 0.3 additions follow in the order of
// create_handoff's arguments (their upstream order is not known). The four
// required lists are included even when empty ("none" is information);
// the 0.3 additions only when given.
func optionalFields() []optionalField {
	list := func(name string, get func(h *Handoff) []string, required bool, put func(p *Packet, v *[]string)) optionalField {
		return optionalField{
			name:    name,
			present: func(h *Handoff) bool { return required || len(get(h)) > 0 },
			set: func(p *Packet, h *Handoff) {
				v := nonNil(get(h))
				put(p, &v)
			},
		}
	}
	return []optionalField{
		list("evidenceIds", func(h *Handoff) []string { return h.EvidenceIDs }, true, func(p *Packet, v *[]string) { p.EvidenceIDs = v }),
		list("changedFiles", func(h *Handoff) []string { return h.ChangedFiles }, true, func(p *Packet, v *[]string) { p.ChangedFiles = v }),
		list("unresolvedQuestions", func(h *Handoff) []string { return h.UnresolvedQuestions }, true, func(p *Packet, v *[]string) { p.UnresolvedQuestions = v }),
		list("risks", func(h *Handoff) []string { return h.Risks }, true, func(p *Packet, v *[]string) { p.Risks = v }),
		{
			name:    "continuationState",
			present: func(h *Handoff) bool { return h.ContinuationState != nil },
			set:     func(p *Packet, h *Handoff) { p.ContinuationState = h.ContinuationState },
		},
		{
			name:    "latestValidation",
			present: func(h *Handoff) bool { return h.LatestValidation != nil },
			set:     func(p *Packet, h *Handoff) { p.LatestValidation = h.LatestValidation },
		},
		list("assumptions", func(h *Handoff) []string { return h.Assumptions }, false, func(p *Packet, v *[]string) { p.Assumptions = v }),
		list("rollbackNotes", func(h *Handoff) []string { return h.RollbackNotes }, false, func(p *Packet, v *[]string) { p.RollbackNotes = v }),
		{
			name:    "nextAction",
			present: func(h *Handoff) bool { return h.NextAction != nil },
			set:     func(p *Packet, h *Handoff) { p.NextAction = h.NextAction },
		},
		{
			name:    "repositoryRevision",
			present: func(h *Handoff) bool { return h.RepositoryRevision != nil },
			set:     func(p *Packet, h *Handoff) { p.RepositoryRevision = h.RepositoryRevision },
		},
	}
}

// handoffBudget reads INTEROP_HANDOFF_TOKEN_BUDGET like upstream's
// Number(raw): surrounding spaces are ignored, the value is floored, and a
// value that is not a finite number or is below 100 falls back to 2000.
func (s *Service) handoffBudget() int {
	raw, ok := s.env(EnvHandoffBudget)
	if !ok {
		return DefaultHandoffBudget
	}
	f, err := strconv.ParseFloat(strings.TrimSpace(raw), 64)
	if err != nil || math.IsNaN(f) || math.IsInf(f, 0) || f < minHandoffBudget {
		return DefaultHandoffBudget
	}
	return int(math.Min(math.Floor(f), maxHandoffBudget))
}

// creationReason and packetReason are the omission notes at creation and
// when get_handoff_packet rebuilds the packet (upstream drops "delivery").
func creationReason(budget int, workID string) string {
	return fmt.Sprintf("exceeds %d-token handoff delivery budget; request field explicitly from work %s", budget, workID)
}

func packetReason(budget int, workID string) string {
	return fmt.Sprintf("exceeds %d-token handoff budget; request field explicitly from work %s", budget, workID)
}

// basePacket has the routing and mandatory content only.
func basePacket(h *Handoff, budget int) Packet {
	return Packet{
		HandoffID:           h.ID,
		WorkID:              h.WorkID,
		SourceSession:       h.SourceSession,
		DestinationSession:  h.DestinationSession,
		Objective:           h.Objective,
		AcceptanceCriteria:  nonNil(h.AcceptanceCriteria),
		AuthorityBoundaries: nonNil(h.AuthorityBoundaries),
		Omissions:           []Omission{},
		TokenBudget:         budget,
		Tokenizer:           TokenizerLabel,
	}
}

// buildPacket fits h into budget greedily (upstream §4.9): the mandatory
// packet must fit; each present optional field is added when the complete
// packet still fits, otherwise it is replaced by an omission note, which
// itself must fit. It returns the packet and the omitted field names.
func (s *Service) buildPacket(h *Handoff, budget int) (Packet, []string, error) {
	fields := optionalFields()
	// Fast path: when everything fits, greedy would keep every field.
	full := basePacket(h, budget)
	for _, f := range fields {
		if f.present(h) {
			f.set(&full, h)
		}
	}
	n, err := s.measure(&full, 0)
	if err != nil {
		return Packet{}, nil, err
	}
	if n <= budget {
		return full, []string{}, nil
	}

	p := basePacket(h, budget)
	if n, err = s.measure(&p, 0); err != nil {
		return Packet{}, nil, err
	}
	if n > budget {
		return Packet{}, nil, invalid("Handoff exceeds its %d-token delivery budget even with every optional field omitted "+
			"(mandatory routing, objective, acceptance criteria, and authority boundaries measure %d tokens). "+
			"Raise INTEROP_HANDOFF_TOKEN_BUDGET or shorten the objective/criteria/boundaries; the handoff was NOT created.", budget, n)
	}
	omitted := []string{}
	for _, f := range fields {
		if !f.present(h) {
			continue
		}
		trial := p
		f.set(&trial, h)
		m, err := s.measure(&trial, n)
		if err != nil {
			return Packet{}, nil, err
		}
		if m <= budget {
			p, n = trial, m
			continue
		}
		trial = p
		trial.Omissions = append(append([]Omission(nil), p.Omissions...), Omission{Field: f.name, Reason: creationReason(budget, h.WorkID)})
		if m, err = s.measure(&trial, n); err != nil {
			return Packet{}, nil, err
		}
		if m > budget {
			return Packet{}, nil, invalid("Handoff exceeds its %d-token delivery budget: even the omission note for '%s' does not fit "+
				"(the packet would measure %d tokens). Raise INTEROP_HANDOFF_TOKEN_BUDGET or shorten the "+
				"objective/criteria/boundaries; the handoff was NOT created.", budget, f.name, m)
		}
		p, n = trial, m
		omitted = append(omitted, f.name)
	}
	return p, omitted, nil
}

// rebuildPacket is get_handoff_packet: the stored record with its recorded
// omissions (upstream's rebuild wording), measured afresh.
func (s *Service) rebuildPacket(h *Handoff) (Packet, error) {
	p := basePacket(h, h.TokenBudget)
	omitted := make(map[string]bool, len(h.OmittedFields))
	for _, f := range h.OmittedFields {
		omitted[f] = true
	}
	for _, f := range optionalFields() {
		if !f.present(h) {
			continue
		}
		if omitted[f.name] {
			p.Omissions = append(p.Omissions, Omission{Field: f.name, Reason: packetReason(h.TokenBudget, h.WorkID)})
			continue
		}
		f.set(&p, h)
	}
	if _, err := s.measure(&p, h.ContextTokens); err != nil {
		return Packet{}, err
	}
	return p, nil
}

// measure counts the complete serialized packet and stores the count in
// p.ContextTokens. The count includes its own digits, so it is iterated to a
// fixed point: contextTokens always equals the o200k token count of the
// packet that carries it. guess (a nearby packet's count, or 0) is where
// the iteration starts; a good guess makes it one tokenization. Upstream
// starts from 0 and re-measures at most three times; so does this when the
// guess is off.
func (s *Service) measure(p *Packet, guess int) (int, error) {
	n, err := s.countPacket(p, guess)
	if err != nil {
		return 0, err
	}
	if n != guess {
		for i := 0; i < 3; i++ {
			m, err := s.countPacket(p, n)
			if err != nil {
				return 0, err
			}
			if m == n {
				break
			}
			n = m
		}
	}
	p.ContextTokens = n
	return n, nil
}

func (s *Service) countPacket(p *Packet, contextTokens int) (int, error) {
	p.ContextTokens = contextTokens
	raw, err := CompactJSON(p)
	if err != nil {
		return 0, err
	}
	return s.tokens.Count(string(raw))
}

// CompactJSON is JSON.stringify's output: compact, '<', '>' and '&' kept
// literal (encoding/json would escape them and inflate the count), no
// trailing newline. The work CLI prints the answers with it.
func CompactJSON(v any) ([]byte, error) {
	var b bytes.Buffer
	enc := json.NewEncoder(&b)
	enc.SetEscapeHTML(false)
	if err := enc.Encode(v); err != nil {
		return nil, fmt.Errorf("encode packet: %w", err)
	}
	return bytes.TrimSuffix(b.Bytes(), []byte("\n")), nil
}
