package secrets

import (
	"math/rand/v2"
	"strings"
	"testing"
)

// rep builds token-shaped test strings at run time so that no literal
// token-shaped text sits in the source.
func rep(s string, n int) string { return strings.Repeat(s, n) }

type shape struct {
	name, context, secret string
}

// corpus is one realistic context per shape; the secret must disappear.
func corpus() []shape {
	discord := "MTk4NjIyNDgzNDcxOTI1MjQ4" + ".Cl2FMQ." + "ZnCjm1XVW7vRze4b7Cq4se7kKWs"
	telegram := "123456789" + ":AA" + "HdqTcvCH1vGWJxfSeofSAs0K5PALDsaw"
	age := "AGE-SECRET-KEY-1" + "QYZ3R9GX8VFMS4KHNJQ0W5E6D7T2P3L8ZKHTRUA9XYZ6C5M4VNSQ7RG8"
	return []shape{
		{"redis url empty user", "cache: redis://:" + "s3cretPW@cache.internal:6379/0", "s3cretPW"},
		{"rediss url", "REDIS=rediss://default:" + "Pw-9x8y7z@redis.example:6380", "Pw-9x8y7z"},
		{"amqp url", "amqp://guest:" + "rabbitPW1@mq:5672/", "rabbitPW1"},
		{"mongodb srv", "mongodb+srv://app:" + "m0ngoPw@cluster0.x.mongodb.net/db", "m0ngoPw"},
		{"postgres url with @ in password", "postgres://u:" + "p@ss@db:5432/x", "p@ss"},
		{"ftp url", "ftp://anonymous:" + "ftpSecret99@ftp.example.org/pub", "ftpSecret99"},
		{"mysql dsn", "dsn := \"root:" + "myDbPw77@tcp(127.0.0.1:3306)/app\"", "myDbPw77"},
		{"discord bot token bare", "client.login('" + discord + "')", discord},
		{"discord bot token header", "Authorization: Bot " + discord, discord},
		{"discord webhook", "https://discord.com/api/webhooks/" + "123456789012345678/" + rep("AbC-d_", 11), rep("AbC-d_", 11)},
		{"telegram bot token bare", "token " + telegram, telegram},
		{"telegram bot url", "https://api.telegram.org/bot" + telegram + "/sendMessage", telegram},
		{"age secret key", "# created\n" + age + "\n", age},
		{"age secret key lower", strings.ToLower(age), strings.ToLower(age)[16:]},
		{"vault token", "VAULT=" + "hvs." + rep("CAESIJ9x", 4), "hvs." + rep("CAESIJ9x", 4)},
		{"vault token file", "hvs." + rep("AbCdEf12", 4) + "\n", "hvs." + rep("AbCdEf12", 4)},
		{"docker hub pat", "dckr_pat_" + rep("Xy3_", 7), "dckr_pat_" + rep("Xy3_", 7)},
		{"netrc line", "machine api.heroku.com login me@example.com password " + "herokuTok3n", "herokuTok3n"},
		{"db pass env", "DB_PASS=" + "hunter2hunter2", "hunter2hunter2"},
		{"pgpassword", "PGPASSWORD='" + "pg pw 123'", "pg pw 123"},
		{"putty key", "PuTTY-User-Key-File-3: ssh-ed25519\nEncryption: none\nPrivate-Lines: 1\n" + rep("QUFB", 10) + "\nPrivate-MAC: " + rep("ab", 16), rep("QUFB", 10)},
		{"gitleaks: doppler", "DOPPLER_TOKEN = " + "dp.pt." + rep("aB3dE", 8) + "xyz", "dp.pt." + rep("aB3dE", 8) + "xyz"},
		{"gitleaks: adafruit with keyword", "adafruit_key = '" + rep("a1b2c3d4", 4) + "'", rep("a1b2c3d4", 4)},
		{"gitleaks: generic api key", "const clientKey = \"" + "Zx81Kq0mPw3RtY6uV9bN2cLd" + "\"", "Zx81Kq0mPw3RtY6uV9bN2cLd"},
		{"gitleaks: private key min", "-----BEGIN PRIVATE KEY-----\n" + rep("MIIEvQIBADANBgkqhkiG9w0BAQEFAASC", 3) + "\n-----END PRIVATE KEY-----", rep("MIIEvQIBADANBgkqhkiG9w0BAQEFAASC", 3)},
		{"aws key id", "aws_access_key_id=" + "AKIA" + "Q3EGRTV7XPLN2W5Z", "AKIA" + "Q3EGRTV7XPLN2W5Z"},
		{"cookie header", "Set-Cookie: session=" + rep("s3ss10n", 4) + "; Path=/", rep("s3ss10n", 4)},
	}
}

func TestRedactCorpus(t *testing.T) {
	r, err := New()
	if err != nil {
		t.Fatal(err)
	}
	for _, tc := range corpus() {
		t.Run(tc.name, func(t *testing.T) {
			if !strings.Contains(tc.context, tc.secret) {
				t.Fatal("bad case: the context does not hold the secret")
			}
			got := r.String(tc.context)
			if strings.Contains(got, tc.secret) {
				t.Fatalf("secret kept: %q", got)
			}
			if !strings.Contains(got, "[REDACTED") {
				t.Fatalf("no marker: %q", got)
			}
			if again := r.String(got); again != got {
				t.Fatalf("not idempotent: %q -> %q", got, again)
			}
		})
	}
}

func TestRedactKeepsOrdinaryText(t *testing.T) {
	r, err := New()
	if err != nil {
		t.Fatal(err)
	}
	for _, s := range []string{
		"func main() { fmt.Println(\"hello\") }",
		"ok  \tgithub.com/x/y\t0.12s\n--- PASS: TestThing (0.00s)\npassed=12 failed=0",
		"see https://example.com/docs?page=2 and http://127.0.0.1:8080/x",
		"git@github.com:owner/repo.git",
		"email me at someone@example.com",
		"commit 0123456789abcdef0123456789abcdef01234567",
		"sha256:9f86d081884c7d659a2feaa0c55ad015a3bf4f1b2b0b822cd15d6c15b0f00a08",
		"session ses_3b2f9a1c7e and thread 550e8400-e29b-41d4-a716-446655440000",
		"The bypass=true flag and compass: north.",
		"version v1.2.3.4 at 12:34:56",
		"{\"inputTokens\":1234,\"outputTokens\":56}",
	} {
		if got := r.String(s); got != s {
			t.Errorf("String(%q) = %q", s, got)
		}
	}
}

func TestDottedTripleTrigger(t *testing.T) {
	for s, want := range map[string]bool{rep("a", 23) + ".bcdefg.h": true, rep("a", 22) + ".bcdefg.h": false, rep("a", 24) + ".bcdef.h": false, rep("a", 24) + ".bcdefgh.i": false, "x": false, "r.Header.Get": false} {
		if got := hasDottedTriple(s); got != want {
			t.Errorf("hasDottedTriple(%q) = %v", s, got)
		}
	}
}

// TestDottedTripleAsScanned holds hasDottedTriple to a scan of every
// position (the rule's shape as its comment states it) on random texts
// of token characters, dots and other bytes.
func TestDottedTripleAsScanned(t *testing.T) {
	scan := func(s string) bool {
		for i := 23; i+7 < len(s); i++ {
			if s[i] != '.' || s[i+7] != '.' {
				continue
			}
			ok := true
			for j := i - 23; j < i+7; j++ {
				if j != i && !isTokenChar(s[j]) {
					ok = false
				}
			}
			if ok {
				return true
			}
		}
		return false
	}
	rng := rand.New(rand.NewPCG(9, 9))
	alphabet := []string{"a", "Z", "0", "_", "-", ".", ".", " ", "\"", "é", rep("x", 20), "abcdef"}
	found := 0
	for range 50000 {
		var b strings.Builder
		for range rng.IntN(30) {
			b.WriteString(alphabet[rng.IntN(len(alphabet))])
		}
		s := b.String()
		want := scan(s)
		if got := hasDottedTriple(s); got != want {
			t.Fatalf("hasDottedTriple(%q) = %v, want %v", s, got, want)
		}
		if want {
			found++
		}
	}
	if found < 100 {
		t.Fatalf("only %d texts had the shape", found)
	}
}
