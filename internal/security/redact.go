package security

import (
	"encoding/json"
	"strings"

	"github.com/agent-interop/runtime/internal/lazy"
	"github.com/agent-interop/runtime/internal/secrets"
)

// Redacted is the replacement text for a removed secret value.
const Redacted = secrets.Redacted

// RedactedPrivateKey replaces a whole private-key block.
const RedactedPrivateKey = secrets.RedactedPrivateKey

// secretJSONKey is upstream's key-based JSON rule: values under such keys
// are redacted whatever they look like.
var secretJSONKey = lazy.Regexp{Expr: `(?i)token|secret|password|passwd|cookie|fingerprinthash|authorization|api[-_]?key|private[-_]?key|credential|launch[-_]?id`}

// RedactString removes credential-shaped content from text with the one
// redactor of the runtime ([secrets.Default]: the gitleaks rule set plus the
// project's rules, loaded on first use).
func RedactString(s string) string {
	return secrets.Default().String(s)
}

// RedactValue redacts a decoded JSON value (maps, slices, strings, numbers):
// values under keys that name a secret become "[REDACTED]" (scalars, and
// scalars inside arrays), every other string goes through [RedactString].
// The input is not modified.
func RedactValue(v any) any {
	switch t := v.(type) {
	case map[string]any:
		out := make(map[string]any, len(t))
		for k, val := range t {
			if secretJSONKey.Get().MatchString(k) {
				out[k] = redactSecretValue(val)
				continue
			}
			out[k] = RedactValue(val)
		}
		return out
	case []any:
		out := make([]any, len(t))
		for i, val := range t {
			out[i] = RedactValue(val)
		}
		return out
	case string:
		return RedactString(t)
	default:
		return v
	}
}

func redactSecretValue(v any) any {
	switch t := v.(type) {
	case string, float64, json.Number, int, int64:
		return Redacted
	case []any:
		out := make([]any, len(t))
		for i, val := range t {
			out[i] = redactSecretValue(val)
		}
		return out
	case map[string]any:
		return RedactValue(t)
	default:
		_ = t
		return v
	}
}

// RedactJSON decodes raw JSON, redacts it with [RedactValue] and re-encodes
// it compactly. Text that is not JSON is redacted as a string and returned as
// a JSON string.
func RedactJSON(raw []byte) json.RawMessage {
	var v any
	dec := json.NewDecoder(strings.NewReader(string(raw)))
	dec.UseNumber()
	if err := dec.Decode(&v); err != nil {
		b, _ := json.Marshal(RedactString(string(raw)))
		return b
	}
	b, err := json.Marshal(RedactValue(v))
	if err != nil {
		b, _ = json.Marshal(Redacted)
	}
	return b
}

// freebuffDroppedKeys are removed from Freebuff payloads before they reach a
// model: hidden reasoning and billing metrics.
var freebuffDroppedKeys = lazy.Value[map[string]struct{}]{New: func() map[string]struct{} {
	return map[string]struct{}{
		"reasoning": {}, "chainofthought": {}, "chain_of_thought": {}, "metrics": {}, "thinking": {},
	}
}}

// freebuffDroppedKinds are object kinds removed whole.
var freebuffDroppedKinds = lazy.Value[map[string]struct{}]{New: func() map[string]struct{} {
	return map[string]struct{}{
		"reasoning": {}, "tool": {}, "ad": {},
	}
}}

// freebuffDroppedTypes are object types removed whole.
var freebuffDroppedTypes = lazy.Value[map[string]struct{}]{New: func() map[string]struct{} {
	return map[string]struct{}{
		"reasoning": {}, "reasoning_delta": {}, "thinking": {}, "ad": {},
	}
}}

// SanitizeFreebuff drops reasoning, chain-of-thought and metrics keys and
// whole objects whose kind is reasoning, tool or ad (or whose type is a
// reasoning or ad block), then redacts with [RedactValue]. A dropped root
// becomes nil.
func SanitizeFreebuff(v any) any {
	return RedactValue(dropFreebuff(v))
}

func dropFreebuff(v any) any {
	switch t := v.(type) {
	case map[string]any:
		if isDroppedObject(t) {
			return nil
		}
		out := make(map[string]any, len(t))
		for k, val := range t {
			if _, drop := freebuffDroppedKeys.Get()[strings.ToLower(k)]; drop {
				continue
			}
			out[k] = dropFreebuff(val)
		}
		return out
	case []any:
		out := make([]any, 0, len(t))
		for _, val := range t {
			if m, ok := val.(map[string]any); ok && isDroppedObject(m) {
				continue
			}
			out = append(out, dropFreebuff(val))
		}
		return out
	default:
		return v
	}
}

func isDroppedObject(m map[string]any) bool {
	if k, ok := m["kind"].(string); ok {
		if _, drop := freebuffDroppedKinds.Get()[strings.ToLower(k)]; drop {
			return true
		}
	}
	if k, ok := m["type"].(string); ok {
		if _, drop := freebuffDroppedTypes.Get()[strings.ToLower(k)]; drop {
			return true
		}
	}
	return false
}
