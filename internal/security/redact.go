package security

import (
	"encoding/json"
	"regexp"
	"strings"
	"sync"
)

// Redacted is the replacement text for a removed secret value.
const Redacted = "[REDACTED]"

// RedactedPrivateKey replaces a whole private-key block.
const RedactedPrivateKey = "[REDACTED PRIVATE KEY]"

// redactPatterns are the redaction expressions, compiled on first use so
// that loading the package costs nothing at start-up.
type redactPatterns struct {
	privateKeyBlock *regexp.Regexp
	authHeader      *regexp.Regexp
	kvDoubleQuoted  *regexp.Regexp
	kvEscapedQuoted *regexp.Regexp
	kvSingleQuoted  *regexp.Regexp
	kvBare          *regexp.Regexp
	bearerWord      *regexp.Regexp
	urlCredentials  *regexp.Regexp
	tokenShapes     []*regexp.Regexp
	secretJSONKey   *regexp.Regexp
}

var redactRx = sync.OnceValue(func() *redactPatterns {
	var (
		// privateKeyBlock matches PEM/OpenSSH/PGP private keys, also when the END
		// line was cut off.
		privateKeyBlock = regexp.MustCompile(`(?s)-----BEGIN [A-Z0-9 ]*PRIVATE KEY(?: BLOCK)?-----.*?(?:-----END [A-Z0-9 ]*PRIVATE KEY(?: BLOCK)?-----|\z)`)

		// authHeader is upstream's AUTH_HEADER, except that a multi-word value
		// continues over blanks and tabs only, not over line breaks.
		authHeader = regexp.MustCompile("(?i)((?:proxy-)?authorization\\s*[:=]\\s*)(bearer|basic|token|digest)?[ \\t]*([^\\s,;}\"'`]+(?:[ \\t]+[^\\s,;}\"'`]+)*)")

		// secretKeyName is the key part of a key=value or key: value pair; a
		// prefix and suffix of name characters is allowed, so GITHUB_TOKEN=,
		// aws_secret_access_key = and "client_secret": are all covered, as is a
		// bare token=.
		secretKeyName = `[A-Za-z0-9_.-]*(?:auth[_-]?token|access[_-]?token|refresh[_-]?token|session[_-]?token|id[_-]?token|token|api[_-]?key|apikey|access[_-]?key|private[_-]?key|secret|password|passwd|credential|bearer|cookie|launch[_-]?id)[A-Za-z0-9_.-]*`

		kvDoubleQuoted = regexp.MustCompile(`(?i)(` + secretKeyName + `["']?\s*[:=]\s*)"(?:[^"\\\n]|\\.)*"`)
		// kvEscapedQuoted is the same pair inside a JSON string, where the
		// quotes arrive escaped: \"apiKey\": \"value\".
		kvEscapedQuoted = regexp.MustCompile(`(?i)(` + secretKeyName + `(?:\\?["'])?\s*[:=]\s*)\\"(?:[^\\\n]|\\[^"\n])*\\"`)
		kvSingleQuoted  = regexp.MustCompile(`(?i)(` + secretKeyName + `["']?\s*[:=]\s*)'[^'\n]*'`)
		kvBare          = regexp.MustCompile("(?i)(" + secretKeyName + "[\"']?\\s*[:=]\\s*)([^\\s,\"'`}\\\\{]+)")

		// bearerWord catches "Bearer <token>" outside an Authorization header.
		bearerWord = regexp.MustCompile(`\b([Bb]earer\s+)[A-Za-z0-9._~+/-]{12,}=*`)

		// urlCredentials catches user:password@ in URLs.
		urlCredentials = regexp.MustCompile(`\b([A-Za-z][A-Za-z0-9+.-]*://)[^/\s:@'"]+:[^/\s@'"]+@`)

		// tokenShapes are provider token formats recognised anywhere in text.
		tokenShapes = []*regexp.Regexp{
			regexp.MustCompile(`\b(?:AKIA|ASIA|ABIA|ACCA|AGPA|AIDA|AROA|AIPA|ANPA|ANVA|APKA)[0-9A-Z]{16}\b`), // AWS key ids
			regexp.MustCompile(`\bgh[pousr]_[A-Za-z0-9]{30,255}\b`),                                          // GitHub
			regexp.MustCompile(`\bgithub_pat_[A-Za-z0-9_]{20,255}\b`),                                        // GitHub fine-grained
			regexp.MustCompile(`\bsk-[A-Za-z0-9_-]{20,}`),                                                    // OpenAI, Anthropic, OpenRouter
			regexp.MustCompile(`\bxox[abposre]-[A-Za-z0-9-]{10,}`),                                           // Slack
			regexp.MustCompile(`\bxapp-\d-[A-Za-z0-9-]{10,}`),                                                // Slack app
			regexp.MustCompile(`https://hooks\.slack\.com/services/[A-Za-z0-9/_-]+`),                         // Slack webhook
			regexp.MustCompile(`\beyJ[A-Za-z0-9_-]{5,}\.eyJ[A-Za-z0-9_-]{5,}\.[A-Za-z0-9_-]*`),               // JWT
			regexp.MustCompile(`\bAIza[0-9A-Za-z_-]{35}`),                                                    // Google API key
			regexp.MustCompile(`\bya29\.[0-9A-Za-z_-]{20,}`),                                                 // Google OAuth
			regexp.MustCompile(`\bGOCSPX-[0-9A-Za-z_-]{20,}`),                                                // Google client secret
			regexp.MustCompile(`\bnpm_[A-Za-z0-9]{36}\b`),                                                    // npm
			regexp.MustCompile(`\b[rsp]k_(?:live|test)_[0-9A-Za-z]{16,}`),                                    // Stripe
			regexp.MustCompile(`\bwhsec_[0-9A-Za-z]{24,}`),                                                   // Stripe webhook
			regexp.MustCompile(`\bglpat-[0-9A-Za-z_-]{20,}`),                                                 // GitLab
			regexp.MustCompile(`\bhf_[A-Za-z0-9]{30,}`),                                                      // Hugging Face
			regexp.MustCompile(`\bSG\.[A-Za-z0-9_-]{16,}\.[A-Za-z0-9_-]{16,}`),                               // SendGrid
			regexp.MustCompile(`\bdo[opr]_v1_[a-f0-9]{64}`),                                                  // DigitalOcean
			regexp.MustCompile(`\bpypi-AgEIcHlwaS5vcmc[A-Za-z0-9_-]{20,}`),                                   // PyPI
			regexp.MustCompile(`\bshp(?:at|ss|ca|pa)_[a-fA-F0-9]{32}`),                                       // Shopify
			regexp.MustCompile(`\bgsk_[A-Za-z0-9]{40,}`),                                                     // Groq
			regexp.MustCompile(`\bxai-[A-Za-z0-9]{40,}`),                                                     // xAI
			regexp.MustCompile(`\bkey-[0-9a-f]{32}\b`),                                                       // Mailgun
			regexp.MustCompile(`\bSK[0-9a-fA-F]{32}\b`),                                                      // Twilio
			regexp.MustCompile(`\bAccountKey=[A-Za-z0-9+/=]{20,}`),                                           // Azure storage
			regexp.MustCompile(`\b(?:sig|SharedAccessSignature)=[A-Za-z0-9%+/=]{20,}`),                       // Azure SAS
		}

		// secretJSONKey is upstream's key-based JSON rule.
		secretJSONKey = regexp.MustCompile(`(?i)token|secret|password|passwd|cookie|fingerprinthash|authorization|api[-_]?key|private[-_]?key|credential|launch[-_]?id`)
	)
	return &redactPatterns{privateKeyBlock: privateKeyBlock, authHeader: authHeader, kvDoubleQuoted: kvDoubleQuoted, kvEscapedQuoted: kvEscapedQuoted, kvSingleQuoted: kvSingleQuoted, kvBare: kvBare, bearerWord: bearerWord, urlCredentials: urlCredentials, tokenShapes: tokenShapes, secretJSONKey: secretJSONKey}
})

// RedactString removes credential-shaped content from text: private-key
// blocks, Authorization headers, key=value and key: value pairs whose key
// names a secret (including a bare token=), Bearer tokens, credentials in
// URLs, and well-known provider token formats (AWS, GitHub, OpenAI/Anthropic,
// Slack, JWT, Google, npm, Stripe, GitLab and others).
func RedactString(s string) string {
	if s == "" {
		return s
	}
	s = redactRx().privateKeyBlock.ReplaceAllString(s, RedactedPrivateKey)
	s = redactRx().authHeader.ReplaceAllStringFunc(s, func(m string) string {
		sub := redactRx().authHeader.FindStringSubmatch(m)
		if sub[2] != "" {
			return sub[1] + sub[2] + " " + Redacted
		}
		return sub[1] + Redacted
	})
	s = redactRx().kvEscapedQuoted.ReplaceAllString(s, `${1}\"`+Redacted+`\"`)
	s = redactRx().kvDoubleQuoted.ReplaceAllString(s, `${1}"`+Redacted+`"`)
	s = redactRx().kvSingleQuoted.ReplaceAllString(s, `${1}'`+Redacted+`'`)
	s = redactRx().kvBare.ReplaceAllStringFunc(s, func(m string) string {
		sub := redactRx().kvBare.FindStringSubmatch(m)
		if sub[2] == Redacted || strings.HasPrefix(sub[2], Redacted) {
			return m
		}
		return sub[1] + Redacted
	})
	s = redactRx().bearerWord.ReplaceAllString(s, "${1}"+Redacted)
	s = redactRx().urlCredentials.ReplaceAllString(s, "${1}"+Redacted+"@")
	for _, re := range redactRx().tokenShapes {
		s = re.ReplaceAllString(s, Redacted)
	}
	return s
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
			if redactRx().secretJSONKey.MatchString(k) {
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
var freebuffDroppedKeys = map[string]struct{}{
	"reasoning": {}, "chainofthought": {}, "chain_of_thought": {}, "metrics": {}, "thinking": {},
}

// freebuffDroppedKinds are object kinds removed whole.
var freebuffDroppedKinds = map[string]struct{}{
	"reasoning": {}, "tool": {}, "ad": {},
}

// freebuffDroppedTypes are object types removed whole.
var freebuffDroppedTypes = map[string]struct{}{
	"reasoning": {}, "reasoning_delta": {}, "thinking": {}, "ad": {},
}

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
			if _, drop := freebuffDroppedKeys[strings.ToLower(k)]; drop {
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
		if _, drop := freebuffDroppedKinds[strings.ToLower(k)]; drop {
			return true
		}
	}
	if k, ok := m["type"].(string); ok {
		if _, drop := freebuffDroppedTypes[strings.ToLower(k)]; drop {
			return true
		}
	}
	return false
}
