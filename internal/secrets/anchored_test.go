package secrets

import (
	"math/rand/v2"
	"reflect"
	"strings"
	"testing"
)

// anchoredRules are the rules find searches from their keywords.
func anchoredRules(t *testing.T) []*rule {
	t.Helper()
	r, err := New()
	if err != nil {
		t.Fatal(err)
	}
	var out []*rule
	for _, ru := range r.rules {
		if ru.keyStart > 0 {
			if _, err := ru.regexp(); err != nil {
				t.Fatal(err)
			}
			out = append(out, ru)
		}
	}
	ids := map[string]bool{}
	for _, ru := range out {
		ids[ru.id] = true
	}
	if !ids["kv-pair"] || !ids["generic-api-key"] {
		t.Fatalf("rules searched from their keywords: %v, want kv-pair and generic-api-key", ids)
	}
	return out
}

// fragments are pieces random texts are built of: the rules' keywords
// in several cases, every operator, quote and blank the patterns know,
// name and value characters, line breaks and non-ASCII letters.
var fragments = []string{
	"token", "TOKEN", "Token", "api", "API", "Api", "aPi", "key", "KEY", "secret", "password", "passwd", "passphrase",
	"credential", "creds", "bearer", "cookie", "launch", "launch_id", "_auth", "auth", "access", "pass", "pwd", "_pass", ".pwd",
	"id_token", "api-key", "apikey", "client_key_data",
	"=", ":", "::=", ":=", "=>", "?=", "||", ",", ">", " ", "  ", "\t", "\n", "\r\n", "\"", "'", "`", "\\\"", "\\", "\\n", ";", "{", "}",
	"a", "Z", "9", "_", "-", ".", "x7Qp2Lm9Zt4Rw8", "abcdefghij0123456789", "ABCDEF+/ab==", "$VAR", "<placeholder>", "é", "—",
	"GITHUB", "my.service-", "0123456789abcdef0123456789abcdef",
}

// TestAnchoredSearchMatchesTheWholeScan holds candidateMatches to the
// unanchored FindAll it replaces, on the corpora and on many random texts
// made of the patterns' own pieces: the same matches, submatches included.
func TestAnchoredSearchMatchesTheWholeScan(t *testing.T) {
	rules := anchoredRules(t)
	var texts []string
	for _, sh := range append(corpus(), secretCorpus()...) {
		texts = append(texts, sh.context)
	}
	for _, s := range benignFiles(t) {
		texts = append(texts, s)
	}
	texts = append(texts, codeText, string(eventsPage()))
	g := rand.New(rand.NewPCG(21, 42))
	for range 5000 {
		var b strings.Builder
		for range 1 + g.IntN(40) {
			b.WriteString(fragments[g.IntN(len(fragments))])
		}
		texts = append(texts, b.String())
	}
	// Assignments whose blanks around the operator hold line breaks, up to
	// and past the most a generic-api-key match can hold, then more lines.
	blanks := []string{"", " ", "\n", "\n\n", " \n\t", "\n\n\n", "\r\n\r\n\n"}
	for _, key := range []string{"api_key", "db.password", "TOKEN", "x-auth", "my_secret_value"} {
		for _, before := range blanks {
			for _, op := range []string{"=", ":", ":=", "=>", ","} {
				for _, after := range blanks {
					for _, quote := range []string{"", "\"", "'", "`"} {
						v := tok(uint64(len(texts)), alnum, 24)
						texts = append(texts, "line one\n"+key+quote+before+op+after+quote+v+quote+"\nkey = "+v[:12]+"\n\n\n")
					}
				}
			}
		}
	}
	for _, ru := range rules {
		for _, s := range texts {
			want := ru.re.FindAllStringSubmatchIndex(s, -1)
			got := ru.candidateMatches(s)
			if len(want) == 0 && len(got) == 0 {
				continue
			}
			if !reflect.DeepEqual(got, want) {
				t.Fatalf("%s on %q:\n got %v\nwant %v", ru.id, s, got, want)
			}
		}
	}
}

// TestASCIIFoldScansWhole: a case-folded non-ASCII keyword (Kelvin sign
// in "toKen") is found, because such a text is scanned whole.
func TestASCIIFoldScansWhole(t *testing.T) {
	r, err := New()
	if err != nil {
		t.Fatal(err)
	}
	value := tok(77, alnum, 24)
	s := "token is set below\nTO\u212aEN=" + value + "\n"
	if got := r.String(s); strings.Contains(got, value) {
		t.Fatalf("the value after a Kelvin-sign keyword stayed: %q", got)
	}
}
