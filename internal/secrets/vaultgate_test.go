package secrets

import (
	"math/rand/v2"
	"strings"
	"testing"
)

// vaultRule is vault-service-token as the default rules build it.
func vaultRule(t *testing.T) *rule {
	t.Helper()
	r, err := New()
	if err != nil {
		t.Fatal(err)
	}
	for _, ru := range r.rules {
		if ru.id == vaultServiceID {
			return ru
		}
	}
	t.Fatalf("no rule %s", vaultServiceID)
	return nil
}

// keywordEnds are the offsets just after each occurrence of one of ru's
// keywords in s, as the prefilter reports them (ASCII case aside).
func keywordEnds(ru *rule, s string) []int {
	low := string(lowerASCII(s))
	var ends []int
	for _, k := range ru.keywords {
		for i := 0; ; {
			j := strings.Index(low[i:], k)
			if j < 0 {
				break
			}
			ends = append(ends, i+j+len(k))
			i += j + 1
		}
	}
	return ends
}

// TestVaultGateIsNecessary holds the vault-service-token gate to its
// pattern: on every text where the pattern matches, the gate lets it run
// (the texts are the corpora and random texts of token characters, the
// keywords, the non-ASCII letters (?i) folds and separators, around the
// 24-character boundary); and it keeps the pattern off plain prose.
func TestVaultGateIsNecessary(t *testing.T) {
	ru := vaultRule(t)
	if ru.gate == nil {
		t.Fatalf("%s has no gate: its pattern changed? want %s, have %s", vaultServiceID, vaultServicePattern, ru.pattern)
	}
	re, err := ru.regexp()
	if err != nil {
		t.Fatal(err)
	}
	var texts []string
	for _, sh := range append(corpus(), secretCorpus()...) {
		texts = append(texts, sh.context)
	}
	parts := []string{"s.", "S.", "hvs.", "hvs", "s", ".", "a", "Z", "9", "_", "-", "\u017f", "\u212a", "é", " ", "\n", "\"", "'", ";", "\\n",
		"abcdefghij", "ABCDEFGHIJ", "0123456789", "x7Qp2Lm9Zt4Rw8kK", "tests. "}
	g := rand.New(rand.NewPCG(21, 7))
	for range 20000 {
		var b strings.Builder
		for range 1 + g.IntN(30) {
			b.WriteString(parts[g.IntN(len(parts))])
		}
		texts = append(texts, b.String())
	}
	// A keyword, then a run around either form's length: "s." with 22 to
	// 26 letters and digits (the folded non-ASCII letters among them), or
	// "hvs." with 88 to 122 of [\w-]; now and then a character outside
	// the class; then a terminator or none.
	short := []rune("abcXYZ0189\u017f\u212a")
	long := []rune("abcXYZ0189_-")
	for range 5000 {
		var b strings.Builder
		b.WriteString([]string{"", "x ", "'", "a"}[g.IntN(4)])
		class, n := short, 22+g.IntN(5)
		if g.IntN(3) == 0 {
			b.WriteString("hv")
			class, n = long, 88+g.IntN(35)
		}
		b.WriteString([]string{"s.", "S."}[g.IntN(2)])
		for range n {
			r := class[g.IntN(len(class))]
			if g.IntN(60) == 0 {
				r = []rune("._é")[g.IntN(3)]
			}
			b.WriteRune(r)
		}
		b.WriteString([]string{"", " ", ";", "\n", "\\n", "\""}[g.IntN(6)])
		texts = append(texts, b.String())
	}
	for n := 20; n <= 30; n++ {
		run := strings.Repeat("aB3", 40)[:n]
		for _, pre := range []string{"s.", " s.", "x hvs.", "\u017f."} {
			texts = append(texts, pre+run, pre+run+" ", pre+strings.Replace(run, "a", "\u017f", 1)+";", pre+strings.Replace(run, "B", "\u212a", 2)+"\n")
		}
	}
	texts = append(texts, "hvs."+strings.Repeat("a-b_c", 20)+" ")
	matched := 0
	for _, s := range texts {
		if re.MatchString(s) {
			matched++
			if !ru.gate(s, keywordEnds(ru, s)) {
				t.Fatalf("the gate refuses a text the pattern matches: %q", s)
			}
		}
	}
	if matched < 50 {
		t.Fatalf("only %d texts match the pattern: the test does not exercise the gate", matched)
	}
	prose := "Make the importer idempotent and cover it with tests. Runs the checks. Done."
	if e := keywordEnds(ru, prose); len(e) == 0 || ru.gate(prose, e) {
		t.Fatalf("the gate lets the pattern run on prose %q (keyword ends %v)", prose, e)
	}
}
