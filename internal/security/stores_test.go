package security

import (
	"crypto/ecdsa"
	"crypto/ed25519"
	"crypto/elliptic"
	"crypto/rand"
	"crypto/x509"
	"encoding/base64"
	"encoding/pem"
	"errors"
	"os"
	"path"
	"path/filepath"
	"strings"
	"testing"
)

// writeFile writes rel under root, creating its directories.
func writeFile(t *testing.T, root, rel string, data []byte) {
	t.Helper()
	p := filepath.Join(root, filepath.FromSlash(rel))
	if err := os.MkdirAll(filepath.Dir(p), 0o755); err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(p, data, 0o644); err != nil {
		t.Fatal(err)
	}
}

// testKeys returns a fresh EC key as PKCS#8 PEM, SEC1 PEM, the public key
// as PEM, an Ed25519 key as JWK (private and public) and an OpenSSH-style
// public key line. Keys are made at run time: no key sits in the source.
func testKeys(t *testing.T) (pkcs8, sec1, pubPEM, jwkPriv, jwkPub, sshPub string) {
	t.Helper()
	k, err := ecdsa.GenerateKey(elliptic.P256(), rand.Reader)
	if err != nil {
		t.Fatal(err)
	}
	der, err := x509.MarshalPKCS8PrivateKey(k)
	if err != nil {
		t.Fatal(err)
	}
	pkcs8 = string(pem.EncodeToMemory(&pem.Block{Type: "PRIVATE KEY", Bytes: der}))
	ecDER, err := x509.MarshalECPrivateKey(k)
	if err != nil {
		t.Fatal(err)
	}
	sec1 = string(pem.EncodeToMemory(&pem.Block{Type: "EC PRIVATE KEY", Bytes: ecDER}))
	pubDER, err := x509.MarshalPKIXPublicKey(&k.PublicKey)
	if err != nil {
		t.Fatal(err)
	}
	pubPEM = string(pem.EncodeToMemory(&pem.Block{Type: "PUBLIC KEY", Bytes: pubDER}))
	pub, priv, err := ed25519.GenerateKey(rand.Reader)
	if err != nil {
		t.Fatal(err)
	}
	enc := base64.RawURLEncoding.EncodeToString
	jwkPub = `{"kty":"OKP","crv":"Ed25519","x":"` + enc(pub) + `"}`
	jwkPriv = `{"kty":"OKP","crv":"Ed25519","x":"` + enc(pub) + `","d":"` + enc(priv.Seed()) + `"}`
	sshPub = "ssh-ed25519 AAAAC3NzaC1lZDI1NTE5AAAAI" + enc(pub) + " dev@example\n"
	return
}

// TestRealWorldStores: credential stores of the kinds the held-out suite of
// issue 18 found served, each with plausible content, are refused by a
// read and hidden from their directory's listing.
func TestRealWorldStores(t *testing.T) {
	pkcs8, sec1, _, jwkPriv, _, _ := testKeys(t)
	cfg := []byte("user = admin\npassword = " + secretMarker + "\n")
	stores := map[string][]byte{
		".cache/huggingface/token":                  []byte("hf_" + secretMarker + "\n"),
		".huggingface/token":                        []byte("hf_" + secretMarker + "\n"),
		".kaggle/kaggle.json":                       []byte(`{"username":"me","key":"` + secretMarker + `"}`),
		".Xauthority":                               append([]byte{0x01, 0x00, 0x00, 0x04, 'h', 'o', 's', 't', 0x00, 0x01, '0', 0x00, 0x12}, []byte("MIT-MAGIC-COOKIE-1\x00\x10"+secretMarker)...),
		".pgpass":                                   []byte("db:5432:app:app:" + secretMarker + "\n"),
		".my.cnf":                                   cfg,
		".mylogin.cnf":                              cfg,
		".odbc.ini":                                 cfg,
		".dbeaver/credentials-config.json":          []byte(secretMarker),
		".3T/robo-3t/1.4.4/robo3t.json":             cfg,
		".config/robomongo/1.2/robomongo.json":      cfg,
		".muttrc":                                   []byte("set imap_pass=" + secretMarker + "\n"),
		".fetchmailrc":                              []byte("poll mail user me password " + secretMarker + "\n"),
		".msmtprc":                                  []byte("account default\npassword " + secretMarker + "\n"),
		".thunderbird/x.default/logins.json":        []byte(`{"logins":[{"encryptedPassword":"` + secretMarker + `"}]}`),
		".thunderbird/x.default/key4.db":            []byte(secretMarker),
		".config/filezilla/sitemanager.xml":         []byte("<Pass encoding=\"base64\">" + secretMarker + "</Pass>"),
		".config/filezilla/recentservers.xml":       []byte("<Pass>" + secretMarker + "</Pass>"),
		"keys/signing.jwk":                          []byte(jwkPriv),
		"keys/AuthKey_ABC123DEFG.p8":                []byte(pkcs8),
		"etc/shadow":                                []byte("root:$6$salt$" + secretMarker + ":19000:0:99999:7:::\n"),
		"etc/gshadow":                               []byte("root:*::\n" + secretMarker),
		"release.jks":                               append([]byte{0xFE, 0xED, 0xFE, 0xED, 0, 0, 0, 2}, secretMarker...),
		"app.keystore":                              []byte(secretMarker),
		"client.p12":                                []byte(secretMarker),
		"client.pfx":                                []byte(secretMarker),
		".netrc":                                    []byte("machine h login u password " + secretMarker + "\n"),
		".git-credentials":                          []byte("https://u:" + secretMarker + "@github.com\n"),
		".docker/config.json":                       []byte(`{"auths":{"r":{"auth":"` + secretMarker + `"}}}`),
		".kube/config":                              []byte("token: " + secretMarker),
		".aws/credentials":                          cfg,
		".config/gcloud/credentials.db":             []byte(secretMarker),
		".azure/accessTokens.json":                  []byte(secretMarker),
		".npmrc":                                    []byte("//registry.npmjs.org/:_authToken=" + secretMarker + "\n"),
		".pypirc":                                   cfg,
		".terraform.d/credentials.tfrc.json":        []byte(secretMarker),
		"wp-config-backup/.env":                     cfg,
		".ssh/id_ed25519":                           []byte(sec1),
		".config/stripe/config.toml":                []byte("test_mode_api_key = '" + secretMarker + "'\n"),
		"WinSCP.ini":                                cfg,
		".vscode/sftp.json":                         cfg,
		".idea/WebServers.xml":                      cfg,
		".mozilla/firefox/x.default/logins.json":    []byte(secretMarker),
		"rclone.conf":                               cfg,
		".cqlshrc":                                  cfg,
		"DBeaverData/workspace6/.metadata/x.json":   cfg,
		"jenkins/credentials.xml":                   cfg,
		".purple/accounts.xml":                      cfg,
		".irssi/config":                             cfg,
		"config/master.key":                         []byte(secretMarker),
		"secrets/signing-key.txt":                   []byte(sec1),
		"backup/notes.txt":                          []byte(pkcs8),
		"deploy/key.json":                           []byte(jwkPriv),
		"misc/cookie":                               append([]byte{0xFF, 0xFF, 0x00, 0x00, 0x00, 0x00, 0x00, 0x12}, []byte("MIT-MAGIC-COOKIE-1"+secretMarker)...),
		"backup/passwords":                          []byte("alice:$y$j9T$" + secretMarker + ":19000:0:99999:7:::\n"),
		"store.bin":                                 append([]byte{0x30, 0x82, 0x0a, 0x1f, 0x02, 0x01, 0x03, 0x30, 0x82, 0x09, 0xe5, 0x06, 0x09, 0x2a, 0x86, 0x48, 0x86, 0xf7, 0x0d, 0x01, 0x07, 0x01}, secretMarker...),
		"data/keys.dat":                             append([]byte{0xCE, 0xCE, 0xCE, 0xCE, 0, 0, 0, 2}, secretMarker...),
		"openssh-key.bin":                           append([]byte("openssh-key-v1\x00"), secretMarker...),
		"AppData/Roaming/FileZilla/sitemanager.xml": cfg,
		"Library/Application Support/Robo 3T/robo3t.json": cfg,
	}
	root := t.TempDir()
	for rel, data := range stores {
		writeFile(t, root, rel, data)
	}
	served := 0
	for rel := range stores {
		text, err := ReadText(root, rel)
		if !errors.Is(err, ErrProtected) {
			served++
			t.Errorf("ReadText(%q) = %q, %v; want %v", rel, text, err, ErrProtected)
		}
	}
	// Listings hide every store a read refuses, whether its name or only
	// its content gives it away.
	listed := 0
	for rel := range stores {
		dir := path.Dir(rel)
		files, err := ListFiles(root, dir)
		if err != nil {
			continue // the directory itself is protected
		}
		for _, f := range files {
			if f == rel {
				listed++
				t.Errorf("ListFiles(%q) shows %q", dir, rel)
			}
		}
	}
	t.Logf("listed: %d", listed)
	t.Logf("credential stores: %d, served: %d", len(stores), served)
}

// TestPublicKeysReadable: public halves stay readable, whatever the
// directory (.ssh included) and name.
func TestPublicKeysReadable(t *testing.T) {
	pkcs8, _, pubPEM, _, jwkPub, sshPub := testKeys(t)
	root := t.TempDir()
	readable := map[string]string{
		".ssh/id_ed25519.pub":           sshPub,
		"id_rsa.backup.pub":             sshPub,
		"keys/deploy_key.pub":           sshPub,
		"/etc/ssh/ssh_host_key.pub"[1:]: sshPub,
		"keys/public.txt":               pubPEM,
		"keys/signing.pub":              pubPEM,
		"jwks.json":                     `{"keys":[` + jwkPub + `]}`,
		"docs/tls.md":                   "Generate a key:\n\n    openssl genpkey -algorithm ed25519\n",
		"crypto/keys_test.go":           "package crypto\n\nconst testKey = `" + pkcs8 + "`\n",
	}
	for rel, text := range readable {
		writeFile(t, root, rel, []byte(text))
		got, err := ReadFile(root, rel)
		if err != nil {
			t.Errorf("ReadFile(%q) = %v; a public key or ordinary file must be readable", rel, err)
			continue
		}
		if rel == "crypto/keys_test.go" {
			if strings.Contains(got, strings.Split(pkcs8, "\n")[1]) || !strings.Contains(got, RedactedPrivateKey) {
				t.Errorf("an embedded key is served redacted, got %q", got)
			}
			continue
		}
		if got != text {
			t.Errorf("ReadFile(%q) changed the public key:\n%q\nwant\n%q", rel, got, text)
		}
	}
	// A private key named like a public one is refused by its content.
	writeFile(t, root, ".ssh/stolen.pub", []byte(pkcs8))
	if _, err := ReadText(root, ".ssh/stolen.pub"); !errors.Is(err, ErrProtected) {
		t.Errorf("private key in a .pub file: %v, want %v", err, ErrProtected)
	}
	// Listings agree with reads: the public keys are listed, the private
	// key named like one is not.
	// (.ssh is not listed at all.)
	writeFile(t, root, "keys/stolen.pub", []byte(pkcs8))
	for rel := range readable {
		files, err := ListFiles(root, path.Dir(rel))
		if errors.Is(err, ErrProtected) && path.Dir(rel) == ".ssh" {
			continue
		}
		if err != nil || !containsString(files, rel) {
			t.Errorf("ListFiles(%q) = %q, %v; want %q listed", path.Dir(rel), files, err, rel)
		}
	}
	if files, err := ListFiles(root, "keys"); err != nil || containsString(files, "keys/stolen.pub") {
		t.Errorf("ListFiles(keys) = %q, %v; the private key in a .pub file must be hidden", files, err)
	}
}

func containsString(ss []string, s string) bool {
	for _, x := range ss {
		if x == s {
			return true
		}
	}
	return false
}

// TestSignaturesAdopted: the pinned list loads; every adopted literal
// signature, and every adopted pattern through its example, refuses a
// file; every excluded one leaves an ordinary file readable.
func TestSignaturesAdopted(t *testing.T) {
	sigs, err := Signatures()
	if err != nil {
		t.Fatal(err)
	}
	// Examples of files each pattern signature names (shhgit gives none).
	examples := map[string]string{
		`^.*_rsa$`: "deploy_rsa", `^.*_dsa$`: "old_dsa", `^.*_ed25519$`: "ci_ed25519", `^.*_ecdsa$`: "host_ecdsa",
		`\.?ssh/config$`: ".ssh/config", `^key(pair)?$`: "server.keypair", `^\.?(bash_|zsh_|sh_|z)?history$`: ".zhistory",
		`^\.?mysql_history$`: ".mysql_history", `^\.?psql_history$`: ".psql_history", `^\.?pgpass$`: "pgpass",
		`^\.?irb_history$`: ".irb_history", `\.?purple/accounts\.xml$`: ".purple/accounts.xml",
		`\.?xchat2?/servlist_?\.conf$`: ".xchat2/servlist_.conf", `\.?irssi/config$`: ".irssi/config",
		`\.?recon-ng/keys\.db$`: ".recon-ng/keys.db", `^\.?dbeaver-data-sources.xml$`: "dbeaver-data-sources.xml",
		`^\.?muttrc$`: "muttrc", `^\.?s3cfg$`: "s3cfg", `\.?aws/credentials$`: "aws/credentials",
		`^sftp-config(\.json)?$`: "sftp-config", `^\.?trc$`: ".trc", `^\.?(bash|zsh|csh)rc$`: ".zshrc",
		`^\.?(bash_|zsh_)?profile$`: ".bash_profile", `^\.?(bash_|zsh_)?aliases$`: ".bash_aliases",
		`^key(store|ring)$`: "login.keyring", `^kdbx?$`: "vault.kdb", `^\.?htpasswd$`: "htpasswd",
		`^(\.|_)?netrc$`: "netrc", `\.?gem/credentials$`: "gem/credentials", `^\.?tugboat$`: ".tugboat",
		`doctl/config.yaml$`: "doctl/config.yaml", `^\.?git-credentials$`: "git-credentials", `config/hub$`: "config/hub",
		`^\.?gitconfig$`: ".gitconfig", `\.?chef/(.*)\.pem$`: ".chef/admin.pem", `etc/shadow$`: "etc/shadow",
		`etc/passwd$`: "etc/passwd", `^\.?dockercfg$`: "dockercfg", `^\.?npmrc$`: "npmrc", `^\.?env$`: "env",
		`.remote-sync.json$`: ".remote-sync.json", `.esmtprc$`: ".esmtprc", `^deployment-config.json?$`: "deployment-config.json",
		`.ftpconfig$`: ".ftpconfig", `\.?idea[\\\/]WebServers.xml$`: ".idea/WebServers.xml",
		`\.?vscode[\\\/]sftp.json$`: ".vscode/sftp.json", `web[\\\/]ruby[\\\/]secrets.yml`: "web/ruby/secrets.yml",
		`\.?docker[\\\/]config.json$`: "docker/config.json", `ruby[\\\/]config[\\\/]master.key$`: "ruby/config/master.key",
		`\.?mozilla[\\\/]firefox[\\\/]logins.json$`: "mozilla/firefox/logins.json",
		// Excluded ones: ordinary files that stay readable.
		`config(\.inc)?\.php$`: "app/config.php", `^sql(dump)?$`: "db/001_init.sql",
	}
	root := t.TempDir()
	adopted, excluded := 0, 0
	for _, s := range sigs {
		var rel string
		switch {
		case s.Regex != "":
			rel = examples[s.Regex]
			if rel == "" {
				t.Errorf("signature %q (%s) has no example", s.Regex, s.Name)
				continue
			}
		case s.Part == "extension":
			rel = "files/example" + s.Match
		default:
			rel = "files/" + s.Match
		}
		writeFile(t, root, rel, []byte("x\n"))
		_, err := ReadText(root, rel)
		if s.Excluded != "" {
			excluded++
			if errors.Is(err, ErrProtected) {
				t.Errorf("excluded signature %q: %q refused", s.Match+s.Regex, rel)
			}
			continue
		}
		adopted++
		if !errors.Is(err, ErrProtected) {
			t.Errorf("adopted signature %q (%s): %q not refused (%v)", s.Match+s.Regex, s.Name, rel, err)
		}
	}
	t.Logf("%s@%s: %d file signatures, %d adopted, %d excluded", SignaturesSource, SignaturesCommit[:12], len(sigs), adopted, excluded)
}
