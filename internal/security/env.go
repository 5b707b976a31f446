package security

import (
	"strings"

	"github.com/agent-interop/runtime/internal/lazy"
)

// credentialEnvName matches environment variable names that carry
// credentials: any name containing TOKEN, SECRET, PASSWORD, PASSWD, API_KEY,
// APIKEY, ACCESS_KEY, PRIVATE_KEY, CREDENTIAL, COOKIE or LAUNCH_ID, or having a
// whole underscore-separated word AUTH, PASS, PAT, PWD-less KEY or SESSION.
var credentialEnvName = lazy.Regexp{Expr: `(?i)(?:TOKEN|SECRET|PASSWORD|PASSWD|API_?KEY|ACCESS_?KEY|PRIVATE_?KEY|CREDENTIAL|COOKIE|LAUNCH_ID|(?:^|_)(?:AUTH|PASS|PAT|KEY|SESSION|SAS|DSN)(?:_|$))`}

// credentialEnvExact are names that do not follow the pattern.
var credentialEnvExact = lazy.Value[map[string]struct{}]{New: func() map[string]struct{} {
	return map[string]struct{}{
		"SSH_AUTH_SOCK": {}, "GPG_AGENT_INFO": {}, "DATABASE_URL": {}, "REDIS_URL": {},
		"NPM_CONFIG__AUTH": {}, "PGPASSFILE": {}, "KUBECONFIG": {}, "GOOGLE_APPLICATION_CREDENTIALS": {},
		"AWS_PROFILE": {}, "AWS_SHARED_CREDENTIALS_FILE": {}, "DOCKER_CONFIG": {},
	}
}}

// IsCredentialEnvName reports whether an environment variable name looks like
// it carries a credential.
func IsCredentialEnvName(name string) bool {
	if _, ok := credentialEnvExact.Get()[strings.ToUpper(name)]; ok {
		return true
	}
	return credentialEnvName.Get().MatchString(name)
}

// ScrubEnv returns env ("NAME=value" entries) without the entries whose name
// is credential-shaped or whose value contains a recognised secret (a token
// format, a private key or credentials in a URL). Order is preserved.
func ScrubEnv(env []string) []string {
	out := make([]string, 0, len(env))
	for _, kv := range env {
		name, value, _ := strings.Cut(kv, "=")
		if name == "" || IsCredentialEnvName(name) {
			continue
		}
		if value != "" && RedactString(value) != value {
			continue
		}
		out = append(out, kv)
	}
	return out
}
