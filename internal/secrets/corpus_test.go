package secrets

import (
	"bytes"
	"encoding/base64"
	"encoding/json"
	"math/rand/v2"
	"os"
	"path/filepath"
	"strings"
	"testing"
)

// tok returns n characters of alphabet chosen by a generator seeded with
// seed: token-shaped test values are built at run time, deterministic, and
// no literal secret sits in the source.
func tok(seed uint64, alphabet string, n int) string {
	g := rand.New(rand.NewPCG(seed, seed^0x9e3779b97f4a7c15))
	b := make([]byte, n)
	for i := range b {
		b[i] = alphabet[g.IntN(len(alphabet))]
	}
	return string(b)
}

const (
	hexLower = "0123456789abcdef"
	alnum    = "ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789"
	alnumLow = "abcdefghijklmnopqrstuvwxyz0123456789"
	b64      = alnum + "+/"
)

// secretCorpus is the recall corpus: corpus() plus the shapes the held-out
// suite of issue 18 used, secrets passed as bare command-line arguments
// among them. Every secret must disappear.
func secretCorpus() []shape {
	twilioSID := "AC" + tok(1, hexLower, 32)
	twilioToken := tok(2, hexLower, 32)
	algoliaKey := tok(3, alnumLow, 32)
	finicityToken := tok(4, hexLower, 32)
	adobeID := tok(5, hexLower, 32)
	flagPW := "Pa55-" + tok(6, alnum, 12)
	flagKey := tok(7, alnum, 32)
	ghp := "ghp_" + tok(8, alnum, 36)
	glpat := "glpat-" + tok(9, alnum, 20)
	slack := "xoxb-" + tok(10, "0123456789", 12) + "-" + tok(11, "0123456789", 13) + "-" + tok(12, alnum, 24)
	stripeLive := "sk_live_" + tok(13, alnum, 24)
	openai := "sk-proj-" + tok(14, alnum, 48)
	anthropic := "sk-ant-api03-" + tok(15, alnum+"-_", 93) + "AA"
	gkey := "AIza" + tok(16, alnum+"-_", 35)
	jwt := "eyJhbGciOiJIUzI1NiJ9." + "eyJzdWIiOiIxMjM0NTY3ODkwIiwibmFtZSI6IkFsaWNlIn0." + tok(17, alnum+"-_", 43)
	npm := "npm_" + tok(18, alnum, 36)
	hf := "hf_" + tok(19, alnum, 34)
	sendgrid := "SG." + tok(20, alnum+"-_", 22) + "." + tok(21, alnum+"-_", 43)
	doTok := "dop_v1_" + tok(22, hexLower, 64)
	shopify := "shpat_" + tok(23, hexLower, 32)
	databricks := "dapi" + tok(24, hexLower, 32)
	awsSecret := tok(25, b64, 40)
	azureKey := tok(26, b64, 86) + "=="
	pkcs8 := tok(27, b64, 64)
	rsaBody := tok(28, b64, 64)
	ecBody := tok(29, b64, 64)
	opensshBody := tok(30, b64, 64)
	encBody := tok(31, b64, 64)
	pgpBody := tok(32, b64, 64)
	urlPW := "Url-" + tok(33, alnum, 14)
	basic := base64.StdEncoding.EncodeToString([]byte("deploy:" + tok(34, alnum, 16)))
	bearer := tok(35, alnum, 40)
	dockerAuth := base64.StdEncoding.EncodeToString([]byte("user:" + tok(36, alnum, 20)))
	kubeKey := base64.StdEncoding.EncodeToString([]byte("-----BEGIN EC PRIVATE KEY-----\n" + tok(37, b64, 40)))
	npmrc := tok(38, alnum, 36)
	pypi := "pypi-AgEIcHlwaS5vcmc" + tok(39, alnum+"-_", 60)
	netrcPW := tok(40, alnum, 18)
	saKey := tok(41, b64, 64)
	herokuKey := tok(42, hexLower, 8) + "-" + tok(43, hexLower, 4) + "-" + tok(44, hexLower, 4) + "-" + tok(45, hexLower, 4) + "-" + tok(46, hexLower, 12)
	sentry := "sntrys_" + tok(47, alnum, 40)
	linear := "lin_api_" + tok(48, alnum, 40)
	vault := "hvs." + tok(49, alnum, 24)
	wpPW := tok(50, alnum, 20)
	flagToken := tok(51, alnum, 40)
	jwkD := tok(54, alnum+"-_", 43)
	curlPW := tok(56, alnum, 14)
	sshPW := tok(57, alnum, 12)
	mysqlPW := tok(58, alnum, 12)
	dockerPW := tok(59, alnum, 24)
	jwkK := tok(55, alnum+"-_", 43)
	ghpBare := "ghp_" + tok(61, alnum, 36)
	slackBare := "xoxb-" + tok(62, "0123456789", 12) + "-" + tok(63, "0123456789", 13) + "-" + tok(64, alnum, 24)
	stripeBare := "sk_live_" + tok(65, alnum, 32)
	npmBare := "npm_" + tok(66, alnum, 36)

	out := []shape{
		{"positional twilio sid and auth token", "twilio login " + twilioSID + " " + twilioToken + "\n", twilioToken},
		{"twilio curl basic", "curl -u " + twilioSID + ":" + twilioToken + " https://api.twilio.com/2010-04-01/Accounts.json", twilioToken},
		{"positional algolia app id and key", "algolia login ABCDEF1234 " + algoliaKey, algoliaKey},
		{"positional finicity", "finicity-cli auth 1234567890 " + finicityToken, finicityToken},
		{"positional fastly token", "fastly profile create main " + adobeID, adobeID},
		{"cli flag password", "deploy --password " + flagPW + " --host prod", flagPW},
		{"cli flag api key", "tool --api-key " + flagKey, flagKey},
		{"cli flag token quoted", "cli auth --token '" + flagToken + "'", flagToken},
		{"github pat", "git clone https://x:" + ghp + "@github.com/o/r", ghp},
		{"github pat bare", "GH=" + ghp, ghp},
		{"gitlab pat", "glab auth login --token " + glpat, glpat},
		{"slack bot token", "SLACK_BOT_TOKEN=" + slack, slack},
		{"stripe live key", "stripe.api_key = '" + stripeLive + "'", stripeLive},
		{"openai project key", "client = OpenAI(api_key=\"" + openai + "\")", openai},
		{"anthropic key", "anthropic " + anthropic, anthropic},
		{"google api key", "https://maps.googleapis.com/maps/api/js?key=" + gkey, gkey},
		{"jwt", "cookie: " + jwt, jwt},
		{"npm token", "//registry.npmjs.org/:_authToken=" + npm, npm},
		{"hugging face token positional", "huggingface-cli login --token " + hf, hf},
		{"sendgrid key", "sg = SendGridAPIClient(\"" + sendgrid + "\")", sendgrid},
		{"digitalocean token", "doctl auth init -t " + doTok, doTok},
		{"shopify token", "X-Shopify-Access-Token: " + shopify, shopify},
		{"databricks token", "databricks configure --host h " + databricks, databricks},
		{"aws secret access key", "aws_secret_access_key = " + awsSecret, awsSecret},
		{"azure storage connection string", "DefaultEndpointsProtocol=https;AccountName=acct;AccountKey=" + azureKey + ";EndpointSuffix=core.windows.net", azureKey},
		{"pkcs8 private key", "-----BEGIN PRIVATE KEY-----\n" + pkcs8 + "\n-----END PRIVATE KEY-----\n", pkcs8},
		{"rsa private key", "-----BEGIN RSA PRIVATE KEY-----\n" + rsaBody + "\n-----END RSA PRIVATE KEY-----", rsaBody},
		{"ec private key", "-----BEGIN EC PRIVATE KEY-----\n" + ecBody + "\n-----END EC PRIVATE KEY-----", ecBody},
		{"openssh private key", "-----BEGIN OPENSSH PRIVATE KEY-----\n" + opensshBody + "\n-----END OPENSSH PRIVATE KEY-----", opensshBody},
		{"encrypted private key", "-----BEGIN ENCRYPTED PRIVATE KEY-----\n" + encBody + "\n-----END ENCRYPTED PRIVATE KEY-----", encBody},
		{"pgp private key block", "-----BEGIN PGP PRIVATE KEY BLOCK-----\n\n" + pgpBody + "\n-----END PGP PRIVATE KEY BLOCK-----", pgpBody},
		{"url password", "DATABASE_URL=postgres://app:" + urlPW + "@db.internal:5432/app", urlPW},
		{"basic auth header", "Authorization: Basic " + basic, basic},
		{"bearer header", "curl -H 'Authorization: Bearer " + bearer + "' https://api.example.com", bearer},
		{"docker config auth", `{"auths":{"registry.example.com":{"auth":"` + dockerAuth + `"}}}`, dockerAuth},
		{"kubeconfig client key data", "users:\n- name: admin\n  user:\n    client-key-data: " + kubeKey + "\n", kubeKey},
		{"npmrc auth token", "//npm.pkg.github.com/:_authToken=" + npmrc, npmrc},
		{"pypirc password", "[pypi]\nusername = __token__\npassword = " + pypi + "\n", pypi},
		{"netrc one line", "machine api.example.com login bot password " + netrcPW, netrcPW},
		{"service account private key json", `{"type": "service_account", "private_key": "-----BEGIN PRIVATE KEY-----\n` + saKey + `\n-----END PRIVATE KEY-----\n"}`, saKey},
		{"heroku api key", "HEROKU_API_KEY=" + herokuKey, herokuKey},
		{"sentry token", "sentry-cli --auth-token " + sentry + " releases list", sentry},
		{"linear key", "LINEAR=" + linear, linear},
		{"vault token positional", "vault login " + vault, vault},
		{"jwk private key", `{"kty":"EC","crv":"P-256","x":"` + tok(52, alnum, 43) + `","y":"` + tok(53, alnum, 43) + `","d":"` + jwkD + `"}`, jwkD},
		{"jwk symmetric key", `{"kty":"oct","alg":"HS256","k":"` + jwkK + `"}`, jwkK},
		{"curl user password", "curl -u deploy:" + curlPW + " https://example.com/upload", curlPW},
		{"sshpass", "sshpass -p '" + sshPW + "' ssh root@10.0.0.2", sshPW},
		{"mysql -p", "mysql -h db -u root -p" + mysqlPW + " appdb", mysqlPW},
		{"docker login -p", "docker login registry.example.com -u ci -p " + dockerPW, dockerPW},
		{"wordpress define", "define( 'DB_PASSWORD', '" + wpPW + "' );", wpPW},
		// Bare positional arguments of the kinds the helper of issue 18
		// added: a provider's shape with no flag or assignment before it.
		{"github pat as a script argument", "./release.sh v1.2.3 " + ghpBare, ghpBare},
		{"slack bot token positional", "slack-notify '#deploys' " + slackBare + " 'done'", slackBare},
		{"stripe live key positional", "stripe-cli charges list " + stripeBare, stripeBare},
		{"npm token positional", "publish.sh @acme/ui " + npmBare, npmBare},
	}
	out = append(out, corpus()...)
	return out
}

// benignFiles reads testdata/benign: ordinary code the redactor must leave
// byte for byte.
func benignFiles(t *testing.T) map[string]string {
	t.Helper()
	paths, err := filepath.Glob(filepath.Join("testdata", "benign", "*"))
	if err != nil {
		t.Fatal(err)
	}
	out := map[string]string{}
	for _, p := range paths {
		b, err := os.ReadFile(p)
		if err != nil {
			t.Fatal(err)
		}
		out[filepath.Base(p)] = string(b)
	}
	return out
}

// changedBytes is the number of bytes of a that differ from b: the length
// of a outside their common prefix and suffix.
func changedBytes(a, b string) int {
	if a == b {
		return 0
	}
	p := 0
	for p < len(a) && p < len(b) && a[p] == b[p] {
		p++
	}
	s := 0
	for s < len(a)-p && s < len(b)-p && a[len(a)-1-s] == b[len(b)-1-s] {
		s++
	}
	return max(len(a)-p-s, len(b)-p-s)
}

// TestPrecisionAndRecall measures both sides the way issue 18 asks: bytes
// changed on the benign corpus and secrets left in the secret corpus. Both
// must be 0; the figures are printed for the record.
func TestPrecisionAndRecall(t *testing.T) {
	r, err := New()
	if err != nil {
		t.Fatal(err)
	}
	benign := benignFiles(t)
	if len(benign) < 30 {
		t.Fatalf("benign corpus: %d files, want at least 30", len(benign))
	}
	changed, changedFiles := 0, 0
	for name, text := range benign {
		got := r.String(text)
		if n := changedBytes(text, got); n > 0 {
			changed += n
			changedFiles++
			t.Errorf("benign %s changed (%d bytes):\n%s", name, n, got)
			continue
		}
		// As a tool answer carries it: a string inside a JSON document.
		doc, err := json.Marshal(map[string]string{"path": name, "content": text})
		if err != nil {
			t.Fatal(err)
		}
		if out := r.JSON(doc); !bytes.Equal(out, doc) {
			changed += changedBytes(string(doc), string(out))
			changedFiles++
			t.Errorf("benign %s changed inside a JSON answer:\n%s", name, out)
		}
	}
	shapes := secretCorpus()
	if len(shapes) < 50 {
		t.Fatalf("secret corpus: %d shapes, want at least 50", len(shapes))
	}
	leaks := 0
	for _, tc := range shapes {
		if !strings.Contains(tc.context, tc.secret) {
			t.Fatalf("bad case %q: the context does not hold the secret", tc.name)
		}
		got := r.String(tc.context)
		if strings.Contains(got, tc.secret) {
			leaks++
			t.Errorf("leak %q: %q", tc.name, got)
			continue
		}
		if again := r.String(got); again != got {
			t.Errorf("not idempotent %q: %q -> %q", tc.name, got, again)
		}
		doc, err := json.Marshal(map[string]string{"content": tc.context})
		if err != nil {
			t.Fatal(err)
		}
		enc, _ := json.Marshal(tc.secret)
		if out := r.JSON(doc); bytes.Contains(out, enc[1:len(enc)-1]) {
			leaks++
			t.Errorf("leak inside a JSON answer %q: %s", tc.name, out)
		}
	}
	t.Logf("precision: %d benign files, %d bytes changed in %d files; recall: %d secret shapes, %d leaks",
		len(benign), changed, changedFiles, len(shapes), leaks)
}
