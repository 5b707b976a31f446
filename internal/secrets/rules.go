package secrets

import (
	"math"
	"strings"

	"github.com/agent-interop/runtime/internal/lazy"
)

// Replacement texts.
const (
	// Redacted replaces a secret value.
	Redacted = "[REDACTED]"
	// RedactedPrivateKey replaces a whole private-key block.
	RedactedPrivateKey = "[REDACTED PRIVATE KEY]"
)

// secretKeyName is the key part of a key=value or key: value pair whose key
// names a secret; a prefix and suffix of name characters is allowed, so
// GITHUB_TOKEN=, aws_secret_access_key = and "client_secret": are covered,
// as are DB_PASS= and PGPWD= (pass and pwd only as a whole word part).
const secretKeyName = `(?:[A-Za-z0-9_.-]*(?:auth[_-]?token|access[_-]?token|refresh[_-]?token|session[_-]?token|id[_-]?token|token|api[_-]?key|apikey|access[_-]?key|private[_-]?key|client[_-]?key[_-]?data|secret|password|passwd|passphrase|credential|bearer|cookie|launch[_-]?id)[A-Za-z0-9_.-]*|[A-Za-z0-9_.-]*[_.-](?:pass|pwd)|[A-Za-z0-9_.-]*_auth)`

// kvKeywords are the prefilter keywords of the key=value rules.
var kvKeywords = []string{"token", "key", "secret", "password", "passwd", "passphrase", "credential", "bearer", "cookie", "launch", "_auth", "pass", "pwd"}

// interopRules are the project's own rules, kept beside the gitleaks set:
// strict (no allowlists, no entropy floor) and covering shapes that gitleaks
// only finds next to a keyword or not at all.
func interopRules() []*rule {
	kv := func(id, pattern string) *rule {
		return &rule{id: id, source: sourceInterop, pattern: pattern, keywords: kvKeywords, gate: assignedAfter, reject: countValue}
	}
	shape := func(id, pattern string, keywords ...string) *rule {
		return &rule{id: id, source: sourceInterop, pattern: pattern, keywords: keywords}
	}
	return []*rule{
		{
			// PEM, OpenSSH and PGP private keys, also when the END line was cut off.
			id: "private-key-block", source: sourceInterop, replacement: RedactedPrivateKey,
			pattern:  `(?s)-----BEGIN [A-Z0-9 ]*PRIVATE KEY(?: BLOCK)?-----.*?(?:-----END [A-Z0-9 ]*PRIVATE KEY(?: BLOCK)?-----|\z)`,
			keywords: []string{"private key"},
		},
		{
			id: "putty-private-key", source: sourceInterop, replacement: RedactedPrivateKey,
			pattern:  `(?s)PuTTY-User-Key-File-\d+:.*?(?:Private-MAC:[^\n]*|\z)`,
			keywords: []string{"putty-user-key-file"},
		},
		{
			// An Authorization header's credentials; a multi-word value continues
			// over blanks and tabs, not over line breaks. The scheme stays.
			id: "authorization-header", source: sourceInterop, secretGroup: 3, reject: variableValue,
			pattern:  "(?i)((?:proxy-)?authorization\\s*[:=]\\s*)(bearer|basic|token|digest|bot)?[ \\t]*([^\\s,;}\"'`]+(?:[ \\t]+[^\\s,;}\"'`]+)*)",
			keywords: []string{"authorization"},
		},
		// One pass for every quoting of the value: "double", \"escaped\"
		// (the pair inside a JSON string), 'single', or bare.
		// Every alternative of secretKeyName holds one of kvKeywords inside
		// the name's run of [A-Za-z0-9_.-], and nothing looks before the
		// match: it is searched from its keywords (keyStart); no part of it
		// matches a line break.
		anchoredAtKeys(kv("kv-pair", "(?i)"+secretKeyName+"(?:\\\\?[\"'])?[ \\t]*[:=][ \\t]*"+
			"(?:\"((?:[^\"\\\\\\n]|\\\\.)*)\"|\\\\\"((?:[^\\\\\\n]|\\\\[^\"\\n])*)\\\\\"|'([^'\\n]*)'|([^\\s,\"'`}\\\\{]+))"), math.MaxInt, 0),
		// A bare PASS= or PWD= (only with "=": "PASS: TestName" is test output).
		kv("kv-pass", "(?i)\\b(?:pass|pwd)[ \\t]*=[ \\t]*([^\\s,\"'`}\\\\{]+)"),
		{
			// A secret passed as a command-line flag's separate argument:
			// --password PW, --api-key KEY, --token 'TOKEN' (with "=" it is a
			// key=value pair). Variables and <placeholders> are not secrets.
			id: "cli-flag-secret", source: sourceInterop, secretGroup: 1, reject: variableValue,
			pattern: "(?i)(?:^|[ \\t\\x60'\"])--?(?:password|passwd|token|api[-_]?key|api[-_]?token|auth[-_]?token|access[-_]?token|" +
				"refresh[-_]?token|secret|client[-_]?secret|secret[-_]?key|access[-_]?key|private[-_]?key)[ \\t]+[\x60'\"]?([^\\s'\"\x60]{6,})",
			keywords: []string{"-password", "-passwd", "-token", "-api-key", "-api_key", "-apikey", "-api-token", "-auth-token",
				"-access-token", "-refresh-token", "-secret", "-client-secret", "-secret-key", "-access-key", "-private-key"},
		},
		{
			// user:password as a client's -u/--user argument (curl, wget, http).
			id: "cli-user-password", source: sourceInterop, secretGroup: 1, reject: variableOrNumber,
			pattern:  `(?:^|[ \t])(?:-u|--user|--proxy-user|--http-user)[ \t]+['"]?[^\s:'"]+:([^\s'"]{4,})`,
			keywords: []string{"-u ", "--user", "-user "},
		},
		{
			// Passwords given to the tools that take them on the command line:
			// sshpass -p PW, mysql -pPW, docker/podman/helm login -p PW.
			id: "cli-password-option", source: sourceInterop, secretGroup: 1, reject: variableValue,
			pattern: `(?:\bsshpass[ \t]+-p[ \t]*['"]?|\bmysql(?:dump|admin|sh|import|check)?\b[^\n]*?[ \t]-p` +
				`|\b(?:docker|podman|buildah|skopeo|nerdctl|oras|helm(?:[ \t]+registry)?)[ \t]+login\b[^\n]*?[ \t]-p[ \t]+['"]?)([^\s'"]{4,})`,
			keywords: []string{"sshpass", "mysql", "login"},
		},
		{
			// The private members of a JWK (RSA/EC/OKP "d", the RSA primes and
			// CRT values, a symmetric key's "k"); the public ones stay.
			id: "jwk-private-member", source: sourceInterop, secretGroup: 1,
			pattern:  `"(?:d|p|q|dp|dq|qi|k)"\s*:\s*"([A-Za-z0-9_-]{16,})"`,
			keywords: []string{"kty"},
		},
		{
			// A Twilio auth token beside its account SID, as a bare argument
			// (twilio login AC... TOKEN) or basic-auth pair (-u AC...:TOKEN).
			id: "twilio-auth-token", source: sourceInterop, secretGroup: 1,
			pattern: `\bAC[0-9a-f]{32}(?:[ \t]+|:)([0-9a-f]{32})\b`,
			trigger: hasTwilioSID,
		},
		{
			// netrc-style "login USER password PW" lines.
			id: "netrc-password", source: sourceInterop, secretGroup: 1,
			pattern:  `(?i)\b(?:login|user(?:name)?)[ \t]+\S+[ \t]+password[ \t]+(\S+)`,
			keywords: []string{"password"},
		},
		{
			id: "bearer-token", source: sourceInterop, secretGroup: 1,
			pattern:  `\b[Bb]earer\s+([A-Za-z0-9._~+/-]{12,}=*)`,
			keywords: []string{"bearer"},
		},
		{
			// user:password@ (the user may be empty: redis://:pw@host) in a URL
			// of any scheme; the password runs to the last @ of the authority.
			id: "url-password", source: sourceInterop, secretGroup: 1,
			pattern:  `\b[A-Za-z][A-Za-z0-9+.-]*://[^/\s:@'"<>]*:([^/\s'"<>]+)@`,
			keywords: []string{"://"},
		},
		{
			// Go MySQL DSNs without a scheme: user:password@tcp(host)/db.
			id: "mysql-dsn-password", source: sourceInterop, secretGroup: 1,
			pattern:  `[\w.-]+:([^\s@/:'"]+)@(?:tcp|unix)\(`,
			keywords: []string{"@tcp(", "@unix("},
		},
		{
			// Discord bot tokens: base64 user id, timestamp, HMAC.
			id: "discord-bot-token", source: sourceInterop,
			pattern: `\b[MNO][A-Za-z0-9_-]{23,27}\.[A-Za-z0-9_-]{6}\.[A-Za-z0-9_-]{27,40}\b`,
			trigger: hasDottedTriple,
		},
		shape("discord-webhook", `https://(?:ptb\.|canary\.)?discord(?:app)?\.com/api/webhooks/\d+/[A-Za-z0-9_-]+`, "/api/webhooks/"),
		// Telegram bot tokens: bot id, colon, 35 characters starting with AA.
		shape("telegram-bot-token", `\b\d{6,12}:AA[A-Za-z0-9_-]{31,34}\b|bot\d{6,12}:AA[A-Za-z0-9_-]{31,34}\b`, ":aa"),
		shape("age-secret-key", `(?i)AGE-SECRET-KEY-1[0-9A-Z]{20,}`, "age-secret-key-1"),
		shape("age-plugin-identity", `AGE-PLUGIN-[A-Z0-9]+-1[0-9A-Z]{20,}`, "age-plugin-"),
		shape("aws-key-id", `\b(?:AKIA|ASIA|ABIA|ACCA|AGPA|AIDA|AROA|AIPA|ANPA|ANVA|APKA)[0-9A-Z]{16}\b`, "akia", "asia", "abia", "acca", "agpa", "aida", "aroa", "aipa", "anpa", "anva", "apka"),
		shape("github-token", `\bgh[pousr]_[A-Za-z0-9]{30,255}\b`, "ghp_", "gho_", "ghu_", "ghs_", "ghr_"),
		shape("github-fine-grained", `\bgithub_pat_[A-Za-z0-9_]{20,255}\b`, "github_pat_"),
		shape("sk-api-key", `\bsk-[A-Za-z0-9_-]{20,}`, "sk-"), // OpenAI, Anthropic, OpenRouter, DeepSeek
		shape("slack-token", `\bxox[abposre]-[A-Za-z0-9-]{10,}`, "xox"),
		shape("slack-app-token", `\bxapp-\d-[A-Za-z0-9-]{10,}`, "xapp-"),
		shape("slack-webhook", `https://hooks\.slack\.com/services/[A-Za-z0-9/_-]+`, "hooks.slack.com"),
		shape("jwt", `\beyJ[A-Za-z0-9_-]{5,}\.eyJ[A-Za-z0-9_-]{5,}\.[A-Za-z0-9_-]*`, "eyj"),
		shape("google-api-key", `\bAIza[0-9A-Za-z_-]{35}`, "aiza"),
		shape("google-oauth-token", `\bya29\.[0-9A-Za-z_-]{20,}`, "ya29."),
		shape("google-client-secret", `\bGOCSPX-[0-9A-Za-z_-]{20,}`, "gocspx-"),
		shape("npm-token", `\bnpm_[A-Za-z0-9]{36}\b`, "npm_"),
		shape("stripe-key", `\b[rsp]k_(?:live|test)_[0-9A-Za-z]{16,}`, "k_live_", "k_test_"),
		shape("stripe-webhook-secret", `\bwhsec_[0-9A-Za-z]{24,}`, "whsec_"),
		shape("gitlab-token", `\bgl(?:pat|dt|ptt|rt|cbt|imt|agent|oas|soat|ffct|ft)-[0-9A-Za-z_-]{20,}`, "gl"),
		shape("hugging-face-token", `\bhf_[A-Za-z0-9]{30,}`, "hf_"),
		shape("sendgrid-key", `\bSG\.[A-Za-z0-9_-]{16,}\.[A-Za-z0-9_-]{16,}`, "sg."),
		shape("digitalocean-token", `\bdo[opr]_v1_[a-f0-9]{64}`, "_v1_"),
		shape("pypi-token", `\bpypi-AgEIcHlwaS5vcmc[A-Za-z0-9_-]{20,}`, "pypi-"),
		shape("shopify-token", `\bshp(?:at|ss|ca|pa)_[a-fA-F0-9]{32}`, "shp"),
		shape("groq-key", `\bgsk_[A-Za-z0-9]{40,}`, "gsk_"),
		shape("xai-key", `\bxai-[A-Za-z0-9]{40,}`, "xai-"),
		shape("mailgun-key", `\bkey-[0-9a-f]{32}\b`, "key-"),
		shape("twilio-key", `\bSK[0-9a-fA-F]{32}\b`, "sk"),
		shape("azure-storage-key", `\bAccountKey=[A-Za-z0-9+/=]{20,}`, "accountkey="),
		shape("azure-sas", `\b(?:sig|SharedAccessSignature)=[A-Za-z0-9%+/=]{20,}`, "sig=", "sharedaccesssignature="),
		shape("vault-token", `\bhv[sbr]\.[A-Za-z0-9_-]{24,}`, "hvs.", "hvb.", "hvr."),
		shape("docker-hub-token", `\bdckr_pat_[A-Za-z0-9_-]{20,}`, "dckr_pat_"),
		shape("linear-key", `\blin_api_[A-Za-z0-9]{30,}`, "lin_api_"),
		shape("notion-token", `\b(?:secret_[A-Za-z0-9]{43}|ntn_[A-Za-z0-9]{40,})\b`, "secret_", "ntn_"),
		shape("replicate-token", `\br8_[A-Za-z0-9]{37}\b`, "r8_"),
		shape("perplexity-key", `\bpplx-[A-Za-z0-9]{40,}`, "pplx-"),
		shape("atlassian-token", `\bATATT[A-Za-z0-9_=-]{50,}`, "atatt"),
		shape("postman-key", `\bPMAK-[a-f0-9]{24}-[a-f0-9]{34}\b`, "pmak-"),
		shape("grafana-token", `\bgl(?:sa|c)_[A-Za-z0-9_=+/-]{32,}`, "glsa_", "glc_"),
		shape("sentry-token", `\bsntry[su]_[A-Za-z0-9_=+/-]{30,}`, "sntry"),
		shape("new-relic-key", `\bNR(?:AK|II|JS|RA|RI)-[A-Z0-9]{27}\b`, "nrak-", "nrii-", "nrjs-", "nrra-", "nrri-"),
		shape("databricks-token", `\bdapi[a-f0-9]{32}(?:-\d)?\b`, "dapi"),
		shape("supabase-token", `\bsbp_[a-f0-9]{40}\b`, "sbp_"),
		shape("fly-token", `\bFlyV1 fm[12]_[A-Za-z0-9+/=_,-]{40,}`, "flyv1"),
	}
}

// countValue rejects key=value matches whose value is not a secret but
// code or a count: a small number under a key that counts rather than hides
// ("inputTokens": 1234, max_tokens=4096; a numeric password or PIN is still
// a secret), a value with no letter or digit, a function call, a literal
// such as nil or true, or a dotted identifier chain without digits
// (opts.Token, s.tokens).
func countValue(match, secret string) bool {
	v := strings.TrimRight(secret, ",;")
	if v == "" || strings.ContainsAny(v, "()") || v[0] == '%' || v[0] == '$' {
		return true // code, printf verbs and ${VAR} placeholders
	}
	if codeValue(match, v) {
		return true
	}
	if key, _, ok := strings.Cut(strings.ToLower(match), strings.TrimSpace(secret)); ok &&
		strings.HasSuffix(strings.TrimRight(key, " \t\"':="), "tokens") && len(v) < 16 {
		return true // token counts
	}
	switch strings.ToLower(v) {
	case "nil", "null", "none", "true", "false", "undefined":
		return true
	}
	letters, digits, dots, other := 0, 0, 0, 0
	for i := 0; i < len(v); i++ {
		switch c := v[i]; {
		case c >= 'a' && c <= 'z' || c >= 'A' && c <= 'Z' || c == '_':
			letters++
		case c >= '0' && c <= '9':
			digits++
		case c == '.':
			dots++
		default:
			other++
		}
	}
	switch {
	case letters == 0 && digits == 0:
		return true
	case dots > 0 && digits == 0 && other == 0 && v[0] != '.' && v[len(v)-1] != '.':
		return true
	case letters == 0 && dots == 0 && other == 0 && len(v) <= 12:
		key := strings.ToLower(match)
		return !strings.Contains(key, "pass") && !strings.Contains(key, "pwd") && !strings.Contains(key, "pin") && !strings.Contains(key, "secret")
	}
	return false
}

// hasDottedTriple reports whether s has at least 23 token characters, a
// '.', exactly six token characters and another '.': the first two parts
// of a Discord bot token. It visits the dots of s only (IndexByte), each
// rejected by the byte seven past it first, so the Discord rule costs
// little on texts without that shape (a whole answer page is scanned).
func hasDottedTriple(s string) bool {
	for from := 0; ; {
		k := strings.IndexByte(s[from:], '.')
		if k < 0 {
			return false
		}
		i := from + k
		from = i + 1
		if i < 23 || i+7 >= len(s) || s[i+7] != '.' {
			continue
		}
		j := i + 1
		for j < i+7 && isTokenChar(s[j]) {
			j++
		}
		if j < i+7 {
			continue
		}
		run := 0 // token characters just before i
		for run < 23 && isTokenChar(s[i-1-run]) {
			run++
		}
		if run == 23 {
			return true
		}
	}
}

func isTokenChar(c byte) bool {
	return c >= 'a' && c <= 'z' || c >= 'A' && c <= 'Z' || c >= '0' && c <= '9' || c == '_' || c == '-'
}

// typeNames are the type names a key: value match meets in declarations
// (password: str, token: &str, apiKey: String?, secret: SecretStr): the
// value of a type annotation, never a secret.
var typeNames = lazy.Value[map[string]bool]{New: func() map[string]bool {
	return map[string]bool{
		"str": true, "string": true, "String": true, "&str": true, "&'static str": true, "bytes": true, "[]byte": true,
		"*string": true, "char": true, "int": true, "bool": true, "boolean": true, "Boolean": true, "number": true,
		"any": true, "unknown": true, "object": true, "Object": true, "SecretStr": true, "SecretString": true,
		"SecretBytes": true, "Secret": true, "CharSequence": true, "ID": true, "Text": true, "text": true,
		"varchar": true, "Buffer": true, "Uint8Array": true, "ByteArray": true, "Any": true, "Str": true,
	}
}}

// typeWrapper matches generic types around a type name: Optional[str],
// Option<String>, Secret<String>, list[str], Maybe String, str | None.
var typeWrapper = lazy.Regexp{Expr: `^(?:Optional|Option|Secret|List|list|Union|Annotated|Maybe|Nullable|Array|ReadonlyArray|Sequence|Mapping|dict|Dict|Box|Arc|Rc|Vec|Promise|Ref|Signal|Observable)[\[<]`}

// codeKeywords are language keywords that follow an "=" in code
// (token = await api.post(...), key = new Key(...)), never a secret.
var codeKeywords = lazy.Value[map[string]bool]{New: func() map[string]bool {
	return map[string]bool{
		"await": true, "new": true, "yield": true, "async": true, "function": true, "fn": true, "lambda": true,
		"typeof": true, "sizeof": true, "this": true, "self": true, "super": true, "static": true, "const": true,
		"let": true, "var": true, "final": true, "readonly": true, "private": true, "public": true,
		"protected": true, "require": true, "import": true, "not": true, "try": true, "match": true, "if": true,
		"ref": true, "mut": true, "&mut": true, "move": true, "default": true, "required": true, "optional": true,
	}
}}

// placeholderValue matches the values of example configurations:
// your-api-key-here, changeme, sk_test_..., xxxx, ****, <none>.
var placeholderValue = lazy.Regexp{Expr: `(?i)^(?:your[-_.]?[a-z_-]*|[a-z_-]*[-_]here|change[-_]?me|replace[-_]?me|placeholder|example|dummy|xxx+|\*+|\.\.\.|.*\.\.\.|todo|tbd|secret|password|token)$`}

// indexExpr matches the start of an index expression cut at its quote:
// os.environ[, ENV[, process.env[, config[.
var indexExpr = lazy.Regexp{Expr: `^[A-Za-z_][A-Za-z0-9_.]*\[$`}

// nonSecretKeySuffix names keys whose value refers to a secret or
// describes it rather than holding it: password_file, TOKEN_PATH,
// secret_ref, token_ttl, POSTGRES_PASSWORD_FILE, api_key_env.
var nonSecretKeySuffix = lazy.Regexp{Expr: `(?i)(?:file|path|dir|ref|ttl|env|var|name|type|url|uri|endpoint|length|len|size|count|policy|header|field|param|prompt|hint|label|placeholder|expiry|expires|timeout|mode|enabled|required|reset|rotation|version)$`}

// codeValue reports whether a key=value match is code or a reference, not
// a secret: a type annotation, a keyword, an index expression cut at its
// quote, a <placeholder>, or a value under a key that names where a secret
// lives rather than the secret.
func codeValue(match, v string) bool {
	bare := strings.TrimRight(v, "?!|")
	if typeNames.Get()[bare] || typeWrapper.Get().MatchString(bare) || codeKeywords.Get()[bare] || indexExpr.Get().MatchString(v) {
		return true
	}
	if v[0] == '<' || strings.HasPrefix(v, "?") || placeholderValue.Get().MatchString(v) {
		return true // <your-token> and your-api-key-here placeholders, ${VAR:?message}
	}
	key := match
	if i := strings.IndexAny(key, ":="); i >= 0 {
		key = key[:i]
	}
	key = strings.TrimRight(key, " \t\"'\\")
	if nonSecretKeySuffix.Get().MatchString(key) {
		return true
	}
	// The variable of the same name (this.password = password,
	// {"token": token}) and proto or enum field numbers (password = 2;).
	if lk, lv := strings.ToLower(key), strings.ToLower(bare); len(lv) >= 3 && strings.HasSuffix(strings.TrimLeft(lk, "\"'"), lv) && isIdentifier(bare) {
		return true
	}
	return len(bare) <= 3 && strings.Trim(bare, "0123456789") == ""
}

func isIdentifier(s string) bool {
	for i := 0; i < len(s); i++ {
		if c := s[i]; !(c >= 'a' && c <= 'z' || c >= 'A' && c <= 'Z' || c == '_' || i > 0 && c >= '0' && c <= '9') {
			return false
		}
	}
	return s != ""
}

// variableOrNumber is variableValue, and also rejects a number: the gid
// of docker run -u 1000:1000.
func variableOrNumber(match, secret string) bool {
	return variableValue(match, secret) || strings.Trim(secret, "0123456789") == ""
}

// variableValue rejects a header value that is a shell or template
// variable ($API_TOKEN, ${TOKEN}, {{ token }}, <token>), not a credential.
func variableValue(_, secret string) bool {
	return secret != "" && (secret[0] == '$' || secret[0] == '<' || strings.HasPrefix(secret, "{{"))
}

// hasTwilioSID reports whether s holds "AC" followed by 32 lower-case hex
// digits: a Twilio account SID.
func hasTwilioSID(s string) bool {
	for i := 0; i+34 <= len(s); i++ {
		j := strings.Index(s[i:], "AC")
		if j < 0 || i+j+34 > len(s) {
			return false
		}
		i += j
		k := i + 2
		for k < i+34 && (s[k] >= '0' && s[k] <= '9' || s[k] >= 'a' && s[k] <= 'f') {
			k++
		}
		if k == i+34 {
			return true
		}
	}
	return false
}

// anchoredAtKeys sets r's keyStart and maxBreaks (see rule) and returns r.
func anchoredAtKeys(r *rule, keyStart, maxBreaks int) *rule {
	r.keyStart, r.maxBreaks = keyStart, maxBreaks
	return r
}
