package gen

import (
	"fmt"

	"github.com/tiktoken-go/tokenizer"
)

// Measure is one profile's tools/list size.
type Measure struct {
	Profile      string
	Tools        int
	Bytes        int
	Tokens       int
	MaxToolName  string
	MaxToolTotal int // tokens of the largest tool's model view
}

// Counter counts o200k tokens.
type Counter interface{ Count(string) (int, error) }

// NewCounter returns the o200k_base tokenizer.
func NewCounter() (Counter, error) {
	codec, err := tokenizer.Get(tokenizer.O200kBase)
	if err != nil {
		return nil, fmt.Errorf("load o200k tokenizer: %w", err)
	}
	return codec, nil
}

// MeasureProfiles measures every profile (read-write) with counter.
func MeasureProfiles(c *Catalog, counter Counter) ([]Measure, error) {
	var out []Measure
	for _, p := range c.Profiles {
		view := ProfileView(c, p, false)
		list, err := ToolsList(view)
		if err != nil {
			return nil, err
		}
		n, err := counter.Count(string(list))
		if err != nil {
			return nil, fmt.Errorf("count tokens: %w", err)
		}
		m := Measure{Profile: p.Name, Tools: len(view), Bytes: len(list), Tokens: n}
		for _, t := range view {
			mv, err := ModelView(t)
			if err != nil {
				return nil, err
			}
			k, err := counter.Count(string(mv))
			if err != nil {
				return nil, fmt.Errorf("count tokens: %w", err)
			}
			if k > m.MaxToolTotal {
				m.MaxToolTotal, m.MaxToolName = k, t.Name
			}
		}
		out = append(out, m)
	}
	return out, nil
}

// CheckBudgets returns one message per broken budget.
func CheckBudgets(c *Catalog, ms []Measure) []string {
	by := map[string]Measure{}
	for _, m := range ms {
		by[m.Profile] = m
	}
	var fails []string
	for _, p := range c.Profiles {
		m, b := by[p.Name], p.Budget
		if m.Tools != p.Tools {
			fails = append(fails, fmt.Sprintf("profile %s: %d tools, the spec says %d", p.Name, m.Tools, p.Tools))
		}
		if b.MaxTokens > 0 && m.Tokens > b.MaxTokens {
			fails = append(fails, fmt.Sprintf("profile %s: tools/list is %d o200k tokens, budget %d", p.Name, m.Tokens, b.MaxTokens))
		}
		if b.MaxBytes > 0 && m.Bytes > b.MaxBytes {
			fails = append(fails, fmt.Sprintf("profile %s: tools/list is %d bytes, budget %d", p.Name, m.Bytes, b.MaxBytes))
		}
		if b.MaxToolTokens > 0 && m.MaxToolTotal > b.MaxToolTokens {
			fails = append(fails, fmt.Sprintf("profile %s: tool %s is %d o200k tokens in the model's view, budget %d", p.Name, m.MaxToolName, m.MaxToolTotal, b.MaxToolTokens))
		}
		if r := b.MaxBytesRatio; r != nil {
			of := by[r.Of]
			if limit := float64(of.Bytes) * r.Ratio; float64(m.Bytes) > limit {
				fails = append(fails, fmt.Sprintf("profile %s: tools/list is %d bytes, budget %.0f (%.2f × %s's %d)", p.Name, m.Bytes, limit, r.Ratio, r.Of, of.Bytes))
			}
		}
	}
	return fails
}
