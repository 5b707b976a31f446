package security

import (
	"encoding/json"
	"os"
	"path/filepath"
	"strings"
	"testing"
)

// rep builds token-shaped test strings at run time so that no literal
// token-shaped text sits in the source.
func rep(s string, n int) string { return strings.Repeat(s, n) }

// secretCase is one credential shape placed in a realistic context.
type secretCase struct {
	name    string
	context string // text containing secret
	secret  string
}

func secretCorpus() []secretCase {
	pk := "-----BEGIN " + "OPENSSH PRIVATE KEY-----\nb3BlbnNzaC1rZXktdjEAAAAABG5vbmUAAAAEbm9uZQ" + rep("Q", 40) + "\n-----END OPENSSH PRIVATE KEY-----"
	rsa := "-----BEGIN " + "RSA PRIVATE KEY-----\nMIIEowIBAAKCAQEA" + rep("x", 60) + "\n-----END RSA PRIVATE KEY-----"
	ec := "-----BEGIN " + "EC PRIVATE KEY-----\nMHcCAQEEIB" + rep("Z", 50) // cut off: no END line
	pgp := "-----BEGIN " + "PGP PRIVATE KEY BLOCK-----\n\nlQOYBF" + rep("k", 50) + "\n-----END PGP PRIVATE KEY BLOCK-----"
	jwt := "eyJ" + "hbGciOiJIUzI1NiJ9.eyJ" + "zdWIiOiIxMjM0NTY3ODkwIn0.dozjgNryP4J3jVmNHl0w5N_XgL0n3I9PlFUP0THsR8U"
	cases := []secretCase{
		{"aws access key id", "aws_access_key_id = " + "AKIA" + "IOSFODNN7EXAMPLQ", "AKIA" + "IOSFODNN7EXAMPLQ"},
		{"aws sts key id", "key " + "ASIA" + "Y34FZKBOKMUTVV7A" + " used", "ASIA" + "Y34FZKBOKMUTVV7A"},
		{"aws secret access key", "aws_secret_access_key=wJalrXUtnFEMI/K7MDENG/bPxRfiCYzEXAMPLEKEYq", "wJalrXUtnFEMI/K7MDENG/bPxRfiCYzEXAMPLEKEYq"},
		{"github classic pat", "remote uses " + "ghp_" + rep("A1b2", 9) + " now", "ghp_" + rep("A1b2", 9)},
		{"github oauth", "token " + "gho_" + rep("Z9y8", 9), "gho_" + rep("Z9y8", 9)},
		{"github server token", "x" + " ghs_" + rep("Q7", 18), "ghs_" + rep("Q7", 18)},
		{"github fine-grained", "github_pat_" + "11ABCDEFG0" + rep("abc_DEF", 8), "github_pat_" + "11ABCDEFG0" + rep("abc_DEF", 8)},
		{"openai project key", "OPENAI_API_KEY=" + "sk-proj-" + rep("Ab3_", 12), "sk-proj-" + rep("Ab3_", 12)},
		{"openai legacy key", "use " + "sk-" + rep("T3BlbkFJ", 5) + " please", "sk-" + rep("T3BlbkFJ", 5)},
		{"anthropic key", `{"k":"` + "sk-ant-api03-" + rep("xY-9", 20) + `"}`, "sk-ant-api03-" + rep("xY-9", 20)},
		{"openrouter key", "sk-or-v1-" + rep("0f", 32), "sk-or-v1-" + rep("0f", 32)},
		{"slack bot token", "slack: " + "xoxb-" + "123456789012-1234567890123-" + rep("aB", 12), "xoxb-" + "123456789012-1234567890123-" + rep("aB", 12)},
		{"slack user token", "xoxp-" + rep("9", 12) + "-" + rep("8", 12), "xoxp-" + rep("9", 12) + "-" + rep("8", 12)},
		{"slack webhook", "post to https://hooks.slack.com/services/" + "T000/B000/" + rep("X", 24), "hooks.slack.com/services/" + "T000/B000/" + rep("X", 24)},
		{"jwt", "cookie jar " + jwt + " end", jwt},
		{"google api key", "key=AIza" + rep("Sy", 17) + "Q", "AIza" + rep("Sy", 17) + "Q"},
		{"google oauth token", "ya29." + rep("a0AfH6", 6), "ya29." + rep("a0AfH6", 6)},
		{"npm token", "//registry.npmjs.org/:_authToken=" + "npm_" + rep("aB3", 12), "npm_" + rep("aB3", 12)},
		{"npm token bare", "publish with " + "npm_" + rep("Zz9", 12) + " ok", "npm_" + rep("Zz9", 12)},
		{"stripe live key", "sk_" + "live_" + rep("4eC39HqLyjWD", 2), "sk_" + "live_" + rep("4eC39HqLyjWD", 2)},
		{"gitlab pat", "glpat-" + rep("xY7_", 6), "glpat-" + rep("xY7_", 6)},
		{"hugging face", "hf_" + rep("AbCdEf", 6), "hf_" + rep("AbCdEf", 6)},
		{"sendgrid", "SG." + rep("abcd", 6) + "." + rep("EFGH", 10), "SG." + rep("abcd", 6) + "." + rep("EFGH", 10)},
		{"digitalocean", "dop_v1_" + rep("ab12", 16), "dop_v1_" + rep("ab12", 16)},
		{"authorization bearer", "Authorization: Bearer opaque-" + rep("t0k3n", 4), "opaque-" + rep("t0k3n", 4)},
		{"authorization basic", "proxy-authorization: Basic dXNlcjpwYXNzd29yZA==", "dXNlcjpwYXNzd29yZA=="},
		{"bare bearer", "sent Bearer " + rep("q1w2e3", 4) + " upstream", rep("q1w2e3", 4)},
		{"bare token=", "release token=synthetic-mcp-secret", "synthetic-mcp-secret"},
		{"password json", `{"user":"a","password":"hunter2-hunter2"}`, "hunter2-hunter2"},
		{"password yaml quoted", "db:\n  password: 'correct horse battery'", "correct horse battery"},
		{"api key inside an escaped JSON string", `{"message":"upstream said: apiKey: \"abc123def-secret\""}`, "abc123def-secret"},
		{"escaped JSON key and value", `"{\"apiKey\":\"escaped-json-secret\"}"`, "escaped-json-secret"},
		{"client secret", `client_secret = "s3cr3t-value-with spaces"`, "s3cr3t-value-with spaces"},
		{"api key env", "export MY_SERVICE_API_KEY=abcDEF123456ghi", "abcDEF123456ghi"},
		{"freebuff authToken", `{"default":{"name":"n","authToken":"fb-auth-7788-9900"}}`, "fb-auth-7788-9900"},
		{"launch id", "x-freebuff-launch-id: 3f1c2a9e-launch", "3f1c2a9e-launch"},
		{"url credentials", "git remote https://alice:Pa55w0rdXyz@github.com/x/y.git", "Pa55w0rdXyz"},
		{"openssh private key", "key:\n" + pk + "\ntrailer", "b3BlbnNzaC1rZXktdjEAAAAABG5vbmUAAAAEbm9uZQ"},
		{"rsa private key", rsa, "MIIEowIBAAKCAQEA"},
		{"truncated ec key", "start\n" + ec, "MHcCAQEEIB"},
		{"pgp private key", pgp, "lQOYBF" + rep("k", 50)},
		{"azure storage", "DefaultEndpointsProtocol=https;AccountName=a;AccountKey=" + rep("Zm9v", 10) + "==;", rep("Zm9v", 10)},
		{"groq", "gsk_" + rep("a1B2", 11), "gsk_" + rep("a1B2", 11)},
		{"twilio", "SK" + rep("0123456789abcdef", 2), "SK" + rep("0123456789abcdef", 2)},
		{"cookie header", "Cookie: session=" + rep("s355", 6), rep("s355", 6)},
	}
	return cases
}

func TestRedactStringCorpus(t *testing.T) {
	cases := secretCorpus()
	if len(cases) < 30 {
		t.Fatalf("secret corpus has %d shapes, want >= 30", len(cases))
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			if !strings.Contains(tc.context, tc.secret) {
				t.Fatalf("bad case: context does not contain secret")
			}
			got := RedactString(tc.context)
			if strings.Contains(got, tc.secret) {
				t.Fatalf("secret leaked: %q", got)
			}
			if !strings.Contains(got, "REDACTED") {
				t.Fatalf("no redaction marker: %q", got)
			}
			// Idempotent.
			if again := RedactString(got); again != got {
				t.Fatalf("not idempotent: %q -> %q", got, again)
			}
			// Inside JSON as a value and as a nested string.
			doc := map[string]any{"note": tc.context, "list": []any{tc.context}, "nested": map[string]any{"apiKey": tc.secret}}
			out, err := json.Marshal(RedactValue(doc))
			if err != nil {
				t.Fatal(err)
			}
			if strings.Contains(string(out), tc.secret) || strings.Contains(string(out), jsonEscaped(tc.secret)) {
				t.Fatalf("secret leaked through JSON: %s", out)
			}
			raw, _ := json.Marshal(doc)
			if red := RedactJSON(raw); strings.Contains(string(red), jsonEscaped(tc.secret)) {
				t.Fatalf("secret leaked through RedactJSON: %s", red)
			}
		})
	}
}

func jsonEscaped(s string) string {
	b, _ := json.Marshal(s)
	return strings.Trim(string(b), `"`)
}

// TestSecretFilesNeverLeak writes every corpus shape into ordinary project
// files and reads them back through ReadFile and Roots.ReadFile.
func TestSecretFilesNeverLeak(t *testing.T) {
	root := t.TempDir()
	cases := secretCorpus()
	for i, tc := range cases {
		name := filepath.Join(root, "notes", strings.ReplaceAll(tc.name, " ", "_")+".txt")
		if err := os.MkdirAll(filepath.Dir(name), 0o755); err != nil {
			t.Fatal(err)
		}
		body := "line before\n" + tc.context + "\nline after " + string(rune('a'+i%26)) + "\n"
		if err := os.WriteFile(name, []byte(body), 0o644); err != nil {
			t.Fatal(err)
		}
	}
	roots := NewRoots(func(k string) (string, bool) {
		if k == EnvProjectRoots {
			return root, true
		}
		return "", false
	})
	for _, tc := range cases {
		rel := "notes/" + strings.ReplaceAll(tc.name, " ", "_") + ".txt"
		got, err := ReadFile(root, rel)
		if err != nil {
			t.Fatalf("%s: %v", tc.name, err)
		}
		if strings.Contains(got, tc.secret) {
			t.Errorf("%s: secret leaked: %q", tc.name, got)
		}
		// An unterminated private key is cut to the end of the text (fail closed).
		if !strings.Contains(got, "line before") || (!strings.Contains(got, "line after") && tc.name != "truncated ec key") {
			t.Errorf("%s: surrounding text lost: %q", tc.name, got)
		}
		abs, err := roots.ReadFile(filepath.Join(root, filepath.FromSlash(rel)))
		if err != nil || abs != got {
			t.Errorf("%s: Roots.ReadFile = %q, %v", tc.name, abs, err)
		}
	}
}

func TestRedactKeepsOrdinaryText(t *testing.T) {
	for _, s := range []string{
		"func main() { fmt.Println(\"hello\") }",
		"The author field is required.",
		"see https://example.com/docs?page=2",
		"id_rsa.pub is a public key",
		"commit 0123456789abcdef0123456789abcdef01234567",
	} {
		if got := RedactString(s); got != s {
			t.Errorf("RedactString(%q) = %q", s, got)
		}
	}
}

func TestRedactAuthHeaderKeepsScheme(t *testing.T) {
	got := RedactString("Authorization: Bearer abc.def")
	if got != "Authorization: Bearer [REDACTED]" {
		t.Fatalf("got %q", got)
	}
	got = RedactString("authorization=opaque")
	if got != "authorization=[REDACTED]" {
		t.Fatalf("got %q", got)
	}
	got = RedactString("release token=synthetic-mcp-secret")
	if !strings.Contains(got, "token=[REDACTED]") {
		t.Fatalf("got %q", got)
	}
}

func TestSanitizeFreebuff(t *testing.T) {
	in := map[string]any{
		"id":        "m1",
		"reasoning": "private chain",
		"metrics":   map[string]any{"costUsd": 1.5},
		"parts": []any{
			map[string]any{"type": "text", "text": "visible"},
			map[string]any{"type": "reasoning", "text": "hidden thought"},
			map[string]any{"kind": "ad", "text": "buy now"},
			map[string]any{"kind": "tool", "text": "tool blob"},
		},
		"authToken": "tok-123",
	}
	out, _ := json.Marshal(SanitizeFreebuff(in))
	s := string(out)
	for _, bad := range []string{"private chain", "costUsd", "hidden thought", "buy now", "tool blob", "tok-123"} {
		if strings.Contains(s, bad) {
			t.Errorf("sanitized output contains %q: %s", bad, s)
		}
	}
	if !strings.Contains(s, "visible") {
		t.Errorf("visible text dropped: %s", s)
	}
}

func TestScrubEnv(t *testing.T) {
	env := []string{
		"PATH=/usr/bin", "HOME=/home/u", "LANG=C.UTF-8", "GOFLAGS=-mod=mod", "TERM=xterm",
		"GITHUB_TOKEN=x", "GH_TOKEN=x", "OPENAI_API_KEY=x", "ANTHROPIC_API_KEY=x", "AWS_SECRET_ACCESS_KEY=x",
		"AWS_ACCESS_KEY_ID=x", "AWS_SESSION_TOKEN=x", "NPM_TOKEN=x", "DB_PASSWORD=x", "MYSQL_PWD_PASS=x",
		"SSH_AUTH_SOCK=/tmp/s", "FREEBUFF_LAUNCH_ID=abc", "CODEBUFF_API_KEY=x", "SENTRY_DSN=x", "STRIPE_KEY=x",
		"client_secret=x", "GOOGLE_APPLICATION_CREDENTIALS=/k.json", "DATABASE_URL=postgres://u:p@h/db",
		"INNOCENT=" + "ghp_" + rep("A1b2", 9), "HTTP_PROXY=http://user:pw1234@proxy:8080",
	}
	got := ScrubEnv(env)
	want := []string{"PATH=/usr/bin", "HOME=/home/u", "LANG=C.UTF-8", "GOFLAGS=-mod=mod", "TERM=xterm"}
	if strings.Join(got, "\n") != strings.Join(want, "\n") {
		t.Fatalf("ScrubEnv = %q, want %q", got, want)
	}
}

func TestValidateID(t *testing.T) {
	for _, ok := range []string{"thread_123:abc", "2026-09-24T14-27-03.512Z", "91c7e0aa-1b2c", "a"} {
		if err := ValidateID(ok); err != nil {
			t.Errorf("ValidateID(%q) = %v", ok, err)
		}
	}
	for _, bad := range []string{"", ".", "..", "...", "../x", "a/b", "a\\b", "a b", "a\x00", strings.Repeat("a", 201), "é", "%2e%2e"} {
		if err := ValidateID(bad); err == nil || err.Error() != "Invalid identifier" {
			t.Errorf("ValidateID(%q) = %v, want Invalid identifier", bad, err)
		}
	}
}
