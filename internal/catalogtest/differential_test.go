package catalogtest

import (
	"encoding/json"
	"errors"
	"strconv"
	"strings"
	"sync"
	"testing"

	"github.com/santhosh-tekuri/jsonschema/v6"

	"github.com/agent-interop/runtime/catalogs"
	"github.com/agent-interop/runtime/internal/argv"
)

// referee is santhosh-tekuri/jsonschema compiled from the exact schema the
// decoder enforces (the served schema plus the spec-wide bounds).
func referee(t testing.TB, e *catalogs.Entry) *jsonschema.Schema {
	t.Helper()
	return CompileSchema(t, e.Name, e.ExactSchema)
}

// servedReferee is santhosh-tekuri/jsonschema compiled from the schema
// tools/list serves, which leaves the spec-wide bounds out: it must accept
// everything the decoder accepts.
func servedReferee(t testing.TB, e *catalogs.Entry) *jsonschema.Schema {
	t.Helper()
	return CompileSchema(t, e.Name+".served", e.InputSchema)
}

// verdicts validates raw with both validators on the same decoded value,
// which it returns (nil when raw does not parse). comparable is false when raw is not a JSON value santhosh can be given
// safely (unparseable, or a number literal whose exact value would take
// unbounded time to compute).
func verdicts(e *catalogs.Entry, ref *jsonschema.Schema, raw []byte) (v any, ours, theirs, comparable bool, oursErr error) {
	_, oursErr = e.Decode(raw)
	v, err := argv.Parse(raw)
	if err != nil {
		if oursErr == nil {
			panic("decoder accepted input that does not parse")
		}
		return nil, false, false, false, oursErr
	}
	if hugeNumber(v) {
		return v, oursErr == nil, false, false, oursErr
	}
	return v, oursErr == nil, ref.Validate(v) == nil, true, oursErr
}

func hugeNumber(v any) bool {
	switch x := v.(type) {
	case json.Number:
		s := strings.ToLower(string(x))
		if i := strings.IndexByte(s, 'e'); i >= 0 {
			exp := strings.TrimLeft(s[i+1:], "+-")
			return len(exp) > 3
		}
		return len(s) > 200
	case []any:
		for _, e := range x {
			if hugeNumber(e) {
				return true
			}
		}
	case map[string]any:
		for _, e := range x {
			if hugeNumber(e) {
				return true
			}
		}
	}
	return false
}

// generatedCases are a tool's cases generated from its exact schema.
type generatedCases struct{ valid, invalid []string }

// caseMemo keeps each tool's generated cases for this test binary: the
// differential test and the fuzz seed corpus use the same ones, and
// generating them (quoting values at every bound) was most of both's cost.
var caseMemo sync.Map // tool name → func() generatedCases

// casesOf returns e's generated cases, generating them once.
func casesOf(t testing.TB, e *catalogs.Entry) generatedCases {
	t.Helper()
	once, _ := caseMemo.LoadOrStore(e.Name, sync.OnceValues(func() (generatedCases, error) {
		var s Schema
		if err := json.Unmarshal([]byte(e.ExactSchema), &s); err != nil {
			return generatedCases{}, err
		}
		return generatedCases{valid: validValues(s), invalid: invalidValues(s)}, nil
	}))
	g, err := once.(func() (generatedCases, error))()
	if err != nil {
		t.Fatalf("%s: exact schema: %v", e.Name, err)
	}
	return g
}

// TestValidatorsAgreeWithJSONSchema runs every served tool and alias on
// cases generated from its exact schema (non-ASCII values at and over every
// bound included) plus hand-written edge cases: each generated decoder must
// accept exactly what the JSON Schema engine accepts under the exact
// schema, the served schema must accept every case the decoder accepts,
// with at least 5 accepted and 5 rejected cases per tool, and every
// rejection must name a field and a rule.
func TestValidatorsAgreeWithJSONSchema(t *testing.T) {
	for _, e := range catalogs.All() {
		t.Run(e.Name, func(t *testing.T) {
			ref, served := referee(t, e), servedReferee(t, e)
			g := casesOf(t, e)
			cases := append(append(append([]string(nil), g.valid...), g.invalid...), handWritten...)
			accepted, rejected := 0, 0
			for _, c := range cases {
				v, ours, theirs, comparable, err := verdicts(e, ref, []byte(c))
				if !comparable {
					if err == nil {
						t.Errorf("accepted %s", c)
					}
					rejected++
					continue
				}
				if ours != theirs {
					t.Errorf("disagreement on %s: ours accept=%v (%v), jsonschema accept=%v", c, ours, err, theirs)
				}
				if ours {
					if err := served.Validate(v); err != nil {
						t.Errorf("the decoder accepts %s but the served schema refuses it: %v", clipCase(c), err)
					}
					accepted++
					continue
				}
				rejected++
				var fe *argv.Errors
				if errors.As(err, &fe) {
					for _, f := range fe.Fields {
						if f.Rule == "" {
							t.Errorf("%s: rejection without a rule: %v", c, err)
						}
					}
				} else if !strings.Contains(err.Error(), "not valid JSON") {
					t.Errorf("%s: rejection is not a field error: %v", c, err)
				}
			}
			if accepted < 5 || rejected < 5 {
				t.Errorf("only %d accepted and %d rejected cases; need 5 of each", accepted, rejected)
			}
		})
	}
}

// fuzzSeeds is one valid case and a spread of at most 12 short invalid
// ones: TestValidatorsAgreeWithJSONSchema runs every case, and a small
// corpus leaves the fuzzer its time for new inputs.
func fuzzSeeds(valid string, invalid []string) []string {
	var short []string
	for _, c := range invalid {
		if len(c) <= 512 {
			short = append(short, c)
		}
	}
	out := []string{valid}
	step := max(1, len(short)/12)
	for i := 0; i < len(short) && len(out) <= 12; i += step {
		out = append(out, short[i])
	}
	return out
}

func clipCase(c string) string {
	if len(c) > 200 {
		return c[:200] + "…"
	}
	return c
}

// handWritten are edge cases applied to every tool.
var handWritten = []string{
	`{}`, ` {} `, "{\n}", "\t{}\t", `{ }`,
	`null`, `[]`, `"x"`, `7`, `true`,
	`{"a":1,"a":2}`, `{"__proto__":{}}`, `{"":1}`,
	`{} {}`, `{`, ``, `{"x":"\ud800"}`,
	`{"nativeId":1e999999999999}`, `{"limit":1e400}`,
}

// FuzzValidators feeds arbitrary bytes to a tool chosen by the first byte:
// no panic, and agreement with the JSON Schema engine on every comparable
// input.
func FuzzValidators(f *testing.F) {
	entries := catalogs.All()
	refs := make([]*jsonschema.Schema, len(entries))
	served := make([]*jsonschema.Schema, len(entries))
	for i, e := range entries {
		refs[i], served[i] = referee(f, e), servedReferee(f, e)
		g := casesOf(f, e)
		for _, c := range fuzzSeeds(g.valid[0], g.invalid) {
			f.Add(byte(i), []byte(c))
		}
	}
	for _, c := range nonASCII {
		f.Add(byte(0), []byte(`{"nativeId":`+strconv.Quote(c)+`}`))
	}
	for _, c := range handWritten {
		f.Add(byte(0), []byte(c))
	}
	f.Fuzz(func(t *testing.T, pick byte, raw []byte) {
		i := int(pick) % len(entries)
		v, ours, theirs, comparable, err := verdicts(entries[i], refs[i], raw)
		if comparable && ours != theirs {
			t.Fatalf("%s: disagreement on %q: ours accept=%v (%v), jsonschema accept=%v", entries[i].Name, raw, ours, err, theirs)
		}
		if !ours && err == nil {
			t.Fatalf("%s: rejected without an error", entries[i].Name)
		}
		// comparable: raw parsed to v, which holds no huge number.
		if ours && comparable {
			if err := served[i].Validate(v); err != nil {
				t.Fatalf("%s: the decoder accepts %q but the served schema refuses it: %v", entries[i].Name, raw, err)
			}
		}
	})
}
