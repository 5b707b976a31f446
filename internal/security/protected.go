package security

import (
	"path"
	"regexp"
	"strings"
	"unicode"

	"golang.org/x/text/unicode/norm"

	"github.com/agent-interop/runtime/internal/lazy"
)

// CredentialFamily is one content class of credential files: what it is,
// the single file or directory names that belong to it wherever they sit
// (matched whole against a folded path component, see foldName), and the
// multi-component locations (matched against the end of the folded path).
// A protected directory protects everything below it.
type CredentialFamily struct {
	Name      string
	About     string
	Names     []string   // regular expressions over one folded component
	Locations [][]string // exact folded component sequences ending a path
}

// credentialFamilies is the deny-list, by family; docs/credential-files.md
// lists the same table and TestCredentialFamilies covers each family.
var credentialFamilies = []CredentialFamily{
	{
		Name:  "dotenv",
		About: "environment files: .env and every .env.* variant, .envrc, *.env",
		Names: []string{`\.env(?:\..*)?`, `\.envrc`, `.+\.env`, `\.flaskenv`},
	},
	{
		Name:  "named-secrets",
		About: "files named credentials or secrets, with or without an extension",
		Names: []string{
			`\.?credentials`, `\.credential`, `\.?secrets`, `\.secret`, `\.?(?:credentials?|secrets?)\..+`, `.*\.secrets?`,
			`client_secrets?.*\.json`, `service[-_]?account.*\.json`, `.*-sa-key\.json`,
			`\.?htpasswd`, `\.pgpass`, `\.my\.cnf`, `\.mylogin\.cnf`, `master\.key`,
		},
	},
	{
		Name:  "ssh-gpg-age-keys",
		About: "SSH private keys and config, GnuPG and age identities, PEM and PuTTY keys",
		Names: []string{
			`id_(?:rsa|dsa|ecdsa|ed25519|ecdsa_sk|ed25519_sk|xmss)(?:[-_.].*)?`, `ssh_host_.*_key`,
			`.*\.(?:pem|key|ppk|p8|pk8|gpg|pgp|age|agekey)`, `secring\..*`, `pubring\.kbx`, `trustdb\.gpg`,
			`\.ssh`, `\.gnupg`, `authorized_keys2?`, `known_hosts(?:\.old)?`,
		},
		Locations: [][]string{{"sops", "age", "keys.txt"}, {"age", "keys.txt"}},
	},
	{
		Name:  "keystores",
		About: "Java, PKCS#12 and platform keystores, password databases",
		Names: []string{
			`.*\.(?:jks|jceks|bks|bcfks|uber|keystore|truststore|p12|pfx|pkcs12|pvk|snk|pkcs8|kdbx|kdb|keychain|keychain-db|psafe3|ovpn)`,
			`\.password-store`, `.*\.keytab`, `krb5cc_.*`, `adbkey`, `\.lastpass`, `\.?vault[-_]pass(?:word)?(?:\.txt)?`,
		},
		Locations: [][]string{{"bitwarden cli", "data.json"}, {".local", "share", "keyrings"}},
	},
	{
		Name:  "cloud-cli-stores",
		About: "cloud and CLI credential stores: AWS, Google Cloud, Azure, Oracle, IBM, Alibaba, DigitalOcean, GitHub CLI, git, agent CLIs",
		Names: []string{
			`\.aws`, `\.azure`, `\.oci`, `\.bluemix`, `\.aliyun`, `\.boto`, `\.s3cfg`, `\.passwd-s3fs`,
			`application_default_credentials\.json`, `\.git-credentials`, `access_tokens\.db`,
			`legacy_credentials`, `clouds\.ya?ml`,
		},
		Locations: [][]string{
			{".config", "gcloud"}, {".config", "gh", "hosts.yml"}, {".config", "hub"}, {".config", "git", "credentials"},
			{".config", "doctl", "config.yaml"}, {".config", "linode-cli"}, {".fly", "config.yml"},
			{".config", "configstore", "firebase-tools.json"}, {".wrangler", "config", "default.toml"},
			{".config", "manicode"}, {".codex", "auth.json"}, {".claude", ".credentials.json"},
			{".local", "share", "opencode", "auth.json"}, {".cursor", "auth.json"}, {".config", "heroku"},
			{"github-copilot", "hosts.json"}, {"github-copilot", "apps.json"}, {".gitlab-runner", "config.toml"},
			{"gitlab-runner", "config.toml"},
		},
	},
	{
		Name:  "terraform-pulumi-state",
		About: "Terraform state and its backups, variable files, CLI credentials; Pulumi credentials",
		Names: []string{
			`.*\.tfstate`, `.*\.tfstate\..*`, `.*\.tfvars`, `.*\.tfvars\.json`, `\.terraform`,
			`\.terraformrc`, `terraform\.rc`, `credentials\.tfrc\.json`,
		},
		Locations: [][]string{{".pulumi", "credentials.json"}, {".terraform.d"}},
	},
	{
		Name:  "vault-consul-tokens",
		About: "HashiCorp Vault, Consul and Nomad token files",
		Names: []string{`\.vault-token`, `vault-token`, `\.consul-token`, `consul\.token`, `\.nomad-token`, `acl-tokens\.json`},
	},
	{
		Name:  "package-manager-tokens",
		About: "registry tokens of npm, Yarn, pip/PyPI, netrc, Cargo, RubyGems, Bundler, Maven, Gradle, NuGet, Composer, pub, Hex, Docker",
		Names: []string{
			`\.npmrc`, `\.yarnrc`, `\.yarnrc\.yml`, `\.pypirc`, `pip\.conf`, `\.netrc`, `_netrc`,
			`auth\.json`, `pub-credentials\.json`, `\.gem`, `settings-security\.xml`, `\.dockercfg`,
		},
		Locations: [][]string{
			{".cargo", "credentials"}, {".cargo", "credentials.toml"}, {".bundle", "config"},
			{".m2", "settings.xml"}, {".gradle", "gradle.properties"}, {".nuget", "nuget", "nuget.config"},
			{".config", "nuget", "nuget.config"}, {".hex", "hex.config"}, {".pub-cache", "credentials.json"},
			{".config", "pip", "pip.conf"}, {".pip", "pip.conf"}, {"pypoetry", "auth.toml"},
		},
	},
	{
		Name:  "kube-docker-configs",
		About: "Kubernetes and container-registry client configs",
		Names: []string{`\.kube`, `kubeconfig(?:\..*)?`, `.*\.kubeconfig`, `\.docker`},
		Locations: [][]string{
			{".config", "containers", "auth.json"}, {"containers", "auth.json"},
		},
	},
	{
		Name:  "shell-histories",
		About: "shell and REPL histories, which keep typed passwords and tokens",
		Names: []string{`\.(?:bash|zsh|sh|ash|ksh|python|node_repl|psql|mysql|sqlite|rediscli|irb|scala|erl|ghci|lua)_history`, `\.zhistory`, `\.histfile`, `\.lesshst`, `fish_history`, `\.dbshell`, `mongosh_repl_history`},
	},
	{
		Name:  "ml-hub-tokens",
		About: "model and data hub tokens: Hugging Face, Kaggle, Weights & Biases, Replicate, Ollama",
		Names: []string{`kaggle\.json`, `\.kaggle`, `\.huggingface`},
		Locations: [][]string{
			{"huggingface", "token"}, {"huggingface", "stored_tokens"}, {".config", "kaggle"},
			{".config", "wandb"}, {"wandb", "settings"}, {".config", "replicate"}, {".ollama", "id_ed25519"},
		},
	},
	{
		Name:  "x-session-cookies",
		About: "X11 and ICE authority cookies, which let anyone who holds them drive the user's display",
		Names: []string{`\.?xauthority(?:[-.].*)?`, `\.iceauthority`, `\.serverauth\..*`, `xauth_.+`},
	},
	{
		Name:  "database-clients",
		About: "database client configuration with saved passwords: PostgreSQL, MySQL, ODBC, Cassandra, DBeaver, Robo 3T and Studio 3T, pgAdmin, MySQL Workbench",
		Names: []string{
			`pgpass\.conf`, `\.?pg_service\.conf`, `\.?odbc\.ini`, `\.cqlshrc`, `credentials-config\.json`, `\.dbeaver`,
			`dbeaver-data-sources.*\.xml`, `robomongo\.json`, `robo3t\.json`, `\.3t`, `studio3t.*\.json`, `pgadmin4\.db`,
			`workbench_user_data\.dat`, `\.mongorc\.js`, `\.mongoshrc\.js`, `\.myclirc`, `\.pgclirc`,
		},
		Locations: [][]string{{"dbeaverdata", "workspace6"}, {".dbeaver4"}, {"pgadmin"}, {"mysql", "workbench", "connections.xml"}},
	},
	{
		Name:  "mail-clients",
		About: "mail client configuration and password stores: mutt/neomutt, fetchmail, msmtp, mbsync, OfflineIMAP, getmail, esmtp, aerc, Emacs authinfo, Thunderbird and Firefox logins",
		Names: []string{
			`\.?muttrc`, `\.mutt`, `\.?neomuttrc`, `\.fetchmailrc`, `\.?msmtprc`, `\.mbsyncrc`, `\.offlineimaprc`, `\.getmailrc`,
			`\.getmail`, `\.esmtprc`, `\.authinfo(?:\.gpg)?`, `logins\.json`, `key[34]\.db`, `signons\.sqlite`, `\.thunderbird`,
			`\.mozilla`, `accountrc`, `passwordstorerc`,
		},
		Locations: [][]string{{"aerc", "accounts.conf"}, {"neomutt", "neomuttrc"}, {"mutt", "muttrc"}},
	},
	{
		Name:  "remote-file-clients",
		About: "FTP, SFTP and sync client site managers and configs: FileZilla, WinSCP, lftp, editor SFTP plugins, rclone",
		Names: []string{
			`sitemanager\.xml`, `recentservers\.xml`, `filezilla\.xml`, `\.filezilla`, `winscp\.ini`, `sftp-config\.json`,
			`\.ftpconfig`, `\.remote-sync\.json`, `rclone\.conf`, `\.lftp`,
		},
		Locations: [][]string{{".config", "filezilla"}, {"lftp", "bookmarks"}, {".vscode", "sftp.json"}},
	},
	{
		Name:  "network-and-vpn",
		About: "network, VPN and file-share credentials: Wi-Fi PSKs, NetworkManager connections, WireGuard, VNC passwords, SMB credentials, wget/curl defaults, IRC server lists",
		Names: []string{`wpa_supplicant.*\.conf`, `wg\d+\.conf`, `\.?smbcredentials`, `\.cifscreds?`, `\.wgetrc`, `\.curlrc`},
		Locations: [][]string{
			{"networkmanager", "system-connections"}, {"wireguard"}, {".vnc", "passwd"}, {"hexchat", "servlist.conf"},
		},
	},
	{
		Name:  "system-password-files",
		About: "system password and group shadow files, wherever a copy of /etc sits (a hash file of any name is refused by content)",
		Locations: [][]string{
			{"etc", "shadow"}, {"etc", "shadow-"}, {"etc", "gshadow"}, {"etc", "gshadow-"}, {"etc", "master.passwd"},
			{"etc", "spwd.db"}, {"etc", "security", "opasswd"},
		},
	},
	{
		Name:  "service-cli-configs",
		About: "developer service CLIs that store API keys in plain files: Stripe, ngrok, 1Password, Teleport, CircleCI, Travis, Snyk, Netlify, Vercel, Railway, Sentry, Cloudflare",
		Names: []string{`\.sentryclirc`, `\.tsh`, `\.ngrok2`, `\.snyk-token`},
		Locations: [][]string{
			{".config", "stripe"}, {".config", "ngrok"}, {".config", "op"}, {".circleci", "cli.yml"}, {".travis", "config.yml"},
			{".config", "configstore", "snyk.json"}, {".config", "netlify"}, {"com.vercel.cli"}, {".railway"}, {".cloudflared"},
		},
	},
}

// CredentialFamilies returns the deny-list by family (a copy).
func CredentialFamilies() []CredentialFamily {
	out := make([]CredentialFamily, len(credentialFamilies))
	copy(out, credentialFamilies)
	return out
}

// protectedName matches a single folded path component that names a
// credential file or directory of any family; it is compiled on first use.
var protectedName = lazy.Value[*regexp.Regexp]{New: func() *regexp.Regexp {
	var alts []string
	for _, f := range credentialFamilies {
		alts = append(alts, f.Names...)
	}
	return regexp.MustCompile(`^(?:` + strings.Join(alts, "|") + `)$`)
}}

// notCredentialName are the exceptions: public halves of SSH keys, and
// source code or documentation named after secrets (secrets.go,
// credentials.ts) rather than holding them.
var notCredentialName = lazy.Value[*regexp.Regexp]{New: func() *regexp.Regexp {
	return regexp.MustCompile(`^(?:(?:id_[a-z0-9_]+|ssh_host_.*_key)[._]pub|` +
		`\.?(?:secrets?|credentials?)(?:[._-]test)?\.(?:go|rs|ts|tsx|js|jsx|mjs|cjs|java|kt|scala|c|h|cc|cpp|hpp|cs|swift|m|rb|php|ex|exs|erl|hs|ml|lua|dart|md|rst|adoc|html|css|scss|vue|svelte|proto|graphql|sql))$`)
}}

// foldName maps a file name to the form the deny-list is matched against:
// NFKD-normalized with combining marks dropped (full-width and
// compatibility look-alikes collapse to ASCII), format characters (zero-width
// joiners, BOMs) and variation selectors removed, lower-cased, and trailing
// dots and spaces trimmed (Windows ignores them, so ".env." opens ".env"
// there).
func foldName(name string) string {
	n := norm.NFKD.String(name)
	n = strings.Map(func(r rune) rune {
		if unicode.Is(unicode.Cf, r) || unicode.Is(unicode.Mn, r) || unicode.Is(unicode.Variation_Selector, r) {
			return -1
		}
		return unicode.ToLower(r)
	}, n)
	if trimmed := strings.TrimRight(n, ". "); trimmed != "" {
		return trimmed
	}
	return n
}

// IsProtectedName reports whether one path component names a credential
// file or directory.
func IsProtectedName(name string) bool {
	if name == "" {
		return false
	}
	for _, form := range nameForms(name) {
		if isPublicKeyName(form) || notCredentialName.Get().MatchString(form) {
			continue
		}
		if protectedName.Get().MatchString(form) {
			return true
		}
	}
	return false
}

// isPublicKeyName reports whether a folded name is a public key's (*.pub):
// such a file is judged by its content alone (see [KeyMaterial]), so the
// public half of a key stays readable wherever it sits, .ssh included.
func isPublicKeyName(folded string) bool {
	return strings.HasSuffix(folded, ".pub") && len(folded) > len(".pub")
}

// nameForms are the spellings of one component that are each matched: the
// folded name, the folded name before an NTFS stream suffix (":$DATA") and
// the plain NFKC lower-case form.
func nameForms(name string) []string {
	folded := foldName(name)
	forms := []string{folded, strings.ToLower(norm.NFKC.String(name))}
	if i := strings.Index(folded, ":"); i > 0 {
		forms = append(forms, strings.TrimRight(folded[:i], ". "))
	}
	return forms
}

// IsProtectedPath reports whether a slash- or backslash-separated path has a
// protected component, contains a protected multi-component location, or
// names a file of the adopted list ([Signatures]). A *.pub file is judged
// by its content alone.
func IsProtectedPath(p string) bool {
	parts := splitComponents(p)
	if len(parts) > 0 && isPublicKeyName(foldName(parts[len(parts)-1])) {
		return false
	}
	folded := make([]string, 0, len(parts))
	for _, c := range parts {
		if IsProtectedName(c) {
			return true
		}
		folded = append(folded, foldName(c))
	}
	for _, f := range credentialFamilies {
		for _, loc := range f.Locations {
			if containsSequence(folded, loc) {
				return true
			}
		}
	}
	// The adopted list names files: its filename and extension signatures
	// apply to the last component only, its path signatures to the path.
	if last := len(parts) - 1; last >= 0 && !notCredentialName.Get().MatchString(folded[last]) {
		for _, form := range nameForms(parts[last]) {
			if signatureName(form) {
				return true
			}
		}
	}
	return signaturePath(folded)
}

// containsSequence reports whether seq occurs as consecutive elements of
// parts; a location names a file or a directory, so it may sit anywhere.
func containsSequence(parts, seq []string) bool {
	for i := 0; i+len(seq) <= len(parts); i++ {
		match := true
		for j := range seq {
			if parts[i+j] != seq[j] {
				match = false
				break
			}
		}
		if match {
			return true
		}
	}
	return false
}

// splitComponents splits on both separators and drops empty and "."
// components.
func splitComponents(p string) []string {
	fields := strings.FieldsFunc(p, func(r rune) bool { return r == '/' || r == '\\' })
	out := fields[:0]
	for _, f := range fields {
		if f == "." {
			continue
		}
		out = append(out, f)
	}
	return out
}

// cleanSlash is path.Clean for display.
func cleanSlash(p string) string { return path.Clean(strings.ReplaceAll(p, "\\", "/")) }
