package security

import (
	"errors"
	"os"
	"path/filepath"
	"testing"
)

// familyCases are, per credential family, paths that must be refused and
// hidden, and look-alikes that must stay readable.
var familyCases = map[string]struct{ denied, allowed []string }{
	"dotenv": {
		denied:  []string{".env", ".env.local", ".env.production", ".env.example", "app/.ENV", ".envrc", "prod.env", ".flaskenv"},
		allowed: []string{"env.go", "environment.md", "envoy.yaml"},
	},
	"named-secrets": {
		denied:  []string{"credentials", ".credentials", "credentials.json", "credentials.yml.enc", "secrets.yaml", "secrets.toml", "secret.json", "config/secrets", "app.secrets", "client_secret_123.json", "service-account-prod.json", ".htpasswd", ".pgpass", ".my.cnf", "config/master.key"},
		allowed: []string{"secrets.go", "credentials.ts", "secret_santa.txt", "docs/credential-files.md"},
	},
	"ssh-gpg-age-keys": {
		denied:  []string{"id_rsa", "id_ed25519", "keys/id_ecdsa_sk", "id_rsa.bak", "ssh_host_ed25519_key", "server.pem", "tls.key", "putty.ppk", "AuthKey_ABC.p8", "backup.gpg", "identity.age", ".ssh/config", ".gnupg/pubring.kbx", "secring.gpg", ".config/sops/age/keys.txt"},
		allowed: []string{"id_rsa.pub", "ssh_host_ed25519_key.pub", "keys.txt", "monkey.txt", "keyboard.md"},
	},
	"keystores": {
		denied:  []string{"release.jks", "app.keystore", "client.p12", "client.pfx", "store.jceks", "passwords.kdbx", "login.keychain-db", "vpn.ovpn", ".password-store/email.gpg", "etc/krb5.keytab", "tmp/krb5cc_1000", ".android/adbkey", ".vault_pass", ".config/Bitwarden CLI/data.json"},
		allowed: []string{"keystore.md", "jks-notes.txt"},
	},
	"cloud-cli-stores": {
		denied:  []string{".aws/credentials", ".aws/config", ".aws/sso/cache/x.json", ".azure/msal_token_cache.json", ".config/gcloud/credentials.db", ".config/gcloud/application_default_credentials.json", "application_default_credentials.json", ".config/gh/hosts.yml", ".git-credentials", ".boto", ".s3cfg", ".oci/config", ".codex/auth.json", ".claude/.credentials.json", ".local/share/opencode/auth.json", ".config/manicode/credentials.json", "clouds.yaml", ".config/openstack/clouds.yml", ".config/github-copilot/hosts.json", ".gitlab-runner/config.toml"},
		allowed: []string{"aws/main.tf", "gcloud.md", ".config/app.yml"},
	},
	"terraform-pulumi-state": {
		denied:  []string{"terraform.tfstate", "terraform.tfstate.backup", "env/prod/terraform.tfstate.1699999999.backup", "prod.tfvars", "secrets.auto.tfvars", "vars.tfvars.json", ".terraform/terraform.tfstate", ".terraformrc", ".terraform.d/credentials.tfrc.json", ".pulumi/credentials.json"},
		allowed: []string{"main.tf", "variables.tf", "outputs.tf", "Pulumi.yaml"},
	},
	"vault-consul-tokens": {
		denied:  []string{".vault-token", "home/.vault-token", ".consul-token", ".nomad-token", "data/acl-tokens.json"},
		allowed: []string{"vault.hcl", "consul.hcl"},
	},
	"package-manager-tokens": {
		denied:  []string{".npmrc", ".yarnrc", ".yarnrc.yml", ".pypirc", ".netrc", "_netrc", "pip.conf", ".cargo/credentials", ".cargo/credentials.toml", ".gem/credentials", ".m2/settings.xml", ".m2/settings-security.xml", ".gradle/gradle.properties", ".nuget/NuGet/NuGet.Config", "auth.json", ".bundle/config", ".dockercfg", ".config/pypoetry/auth.toml"},
		allowed: []string{"package.json", "Cargo.toml", "settings.xml", "gradle.properties", "NuGet.Config", "requirements.txt"},
	},
	"kube-docker-configs": {
		denied:  []string{".kube/config", "kubeconfig", "kubeconfig.yaml", "prod.kubeconfig", ".docker/config.json", ".config/containers/auth.json"},
		allowed: []string{"Dockerfile", "docker-compose.yml", "k8s/deployment.yaml"},
	},
	"ml-hub-tokens": {
		denied:  []string{".cache/huggingface/token", ".huggingface/token", ".cache/huggingface/stored_tokens", ".kaggle/kaggle.json", "kaggle.json", ".config/wandb/settings", ".config/replicate/auth"},
		allowed: []string{"huggingface.md", "models/token_classifier.py", "kaggle_notebook.ipynb"},
	},
	"x-session-cookies": {
		denied:  []string{".Xauthority", "run/user/1000/gdm/Xauthority", ".ICEauthority", ".serverauth.1234", ".Xauthority-c"},
		allowed: []string{"xauth.md", "authority.go"},
	},
	"database-clients": {
		denied:  []string{".pgpass", "AppData/postgresql/pgpass.conf", ".pg_service.conf", ".odbc.ini", ".cqlshrc", "DBeaverData/workspace6/General/.dbeaver/credentials-config.json", ".dbeaver/data-sources.json", "robomongo.json", ".3T/robo-3t/1.4.4/robo3t.json", ".3T/studio-3t/studio3t-connections.json", "pgadmin4.db", ".mongoshrc.js", ".my.cnf", ".mylogin.cnf"},
		allowed: []string{"db/schema.rb", "mongo.js", "odbc.md", "config/database.go"},
	},
	"mail-clients": {
		denied:  []string{".muttrc", ".mutt/muttrc", ".config/neomutt/neomuttrc", ".fetchmailrc", ".msmtprc", ".mbsyncrc", ".offlineimaprc", ".getmail/getmailrc", ".authinfo.gpg", ".thunderbird/abc.default/logins.json", "profile/key4.db", "logins.json", ".config/aerc/accounts.conf"},
		allowed: []string{"mail.go", "templates/email.html", "mutt.md"},
	},
	"remote-file-clients": {
		denied:  []string{".config/filezilla/sitemanager.xml", "sitemanager.xml", "recentservers.xml", "filezilla.xml", "WinSCP.ini", "sftp-config.json", ".ftpconfig", ".vscode/sftp.json", "rclone.conf", ".local/share/lftp/bookmarks"},
		allowed: []string{"ftp/client.go", ".vscode/settings.json", "sftp.md"},
	},
	"network-and-vpn": {
		denied:  []string{"etc/wpa_supplicant/wpa_supplicant.conf", "etc/NetworkManager/system-connections/home.nmconnection", "etc/wireguard/wg0.conf", "wg0.conf", ".vnc/passwd", ".smbcredentials", ".wgetrc", ".curlrc", ".config/hexchat/servlist.conf"},
		allowed: []string{"network.go", "vpn.md", "wg.go", "curl.md"},
	},
	"system-password-files": {
		denied:  []string{"etc/shadow", "backup/etc/gshadow", "etc/shadow-", "etc/master.passwd", "etc/security/opasswd"},
		allowed: []string{"shadow/Button.tsx", "etc/hosts", "css/shadow.css"},
	},
	"service-cli-configs": {
		denied:  []string{".config/stripe/config.toml", ".config/ngrok/ngrok.yml", ".ngrok2/ngrok.yml", ".config/op/config", ".circleci/cli.yml", ".sentryclirc", ".tsh/keys/x", ".cloudflared/cert.json"},
		allowed: []string{".circleci/config.yml", "stripe/webhooks.go", ".travis.yml"},
	},
	"shell-histories": {
		denied:  []string{".bash_history", ".zsh_history", ".python_history", ".psql_history", ".mysql_history", ".node_repl_history", ".lesshst"},
		allowed: []string{"history.md", "CHANGELOG.md"},
	},
}

func TestCredentialFamilies(t *testing.T) {
	for _, fam := range CredentialFamilies() {
		tc, ok := familyCases[fam.Name]
		if !ok {
			t.Errorf("family %q has no test case", fam.Name)
			continue
		}
		t.Run(fam.Name, func(t *testing.T) {
			root := t.TempDir()
			write := func(rel string) {
				p := filepath.Join(root, filepath.FromSlash(rel))
				if err := os.MkdirAll(filepath.Dir(p), 0o755); err != nil {
					t.Fatal(err)
				}
				if err := os.WriteFile(p, []byte("value "+secretMarker+"\n"), 0o644); err != nil {
					t.Fatal(err)
				}
			}
			for _, rel := range tc.denied {
				write(rel)
				if !IsProtectedPath(rel) {
					t.Errorf("IsProtectedPath(%q) = false", rel)
				}
				if text, err := ReadText(root, rel); !errors.Is(err, ErrProtected) {
					t.Errorf("ReadText(%q) = %q, %v; want %v", rel, text, err, ErrProtected)
				}
			}
			for _, rel := range tc.allowed {
				write(rel)
				if IsProtectedPath(rel) {
					t.Errorf("IsProtectedPath(%q) = true for an ordinary file", rel)
				}
				if _, err := ReadText(root, rel); err != nil {
					t.Errorf("ReadText(%q) = %v", rel, err)
				}
			}
			// Denied files are hidden from every listing that could show them.
			seen := map[string]bool{}
			var walk func(dir string)
			walk = func(dir string) {
				files, err := ListFiles(root, dir)
				if err != nil {
					return
				}
				for _, f := range files {
					seen[f] = true
				}
				entries, _ := os.ReadDir(filepath.Join(root, filepath.FromSlash(dir)))
				for _, e := range entries {
					if e.IsDir() {
						walk(filepath.ToSlash(filepath.Join(dir, e.Name())))
					}
				}
			}
			walk(".")
			for _, rel := range tc.denied {
				if seen[filepath.ToSlash(filepath.Clean(rel))] {
					t.Errorf("listing shows denied %q", rel)
				}
			}
			for _, rel := range tc.allowed {
				if !seen[filepath.ToSlash(filepath.Clean(rel))] {
					t.Errorf("listing hides ordinary %q", rel)
				}
			}
		})
	}
}

// TestSymlinkOntoCredentialFile: the deny-list applies to what is opened.
func TestSymlinkOntoCredentialFile(t *testing.T) {
	root := t.TempDir()
	if err := os.WriteFile(filepath.Join(root, "terraform.tfstate"), []byte(secretMarker), 0o644); err != nil {
		t.Fatal(err)
	}
	if err := os.Symlink("terraform.tfstate", filepath.Join(root, "notes.txt")); err != nil {
		t.Fatal(err)
	}
	for name, op := range openers() {
		if text, err := readText(op, root, "notes.txt"); !errors.Is(err, ErrProtected) {
			t.Errorf("%s: readText(link to tfstate) = %q, %v", name, text, err)
		}
	}
}
