package secrets

import (
	"encoding/json"
	"fmt"
	"math/rand/v2"
	"strings"
	"testing"
)

func TestJSONRedactsStringsKeepsShape(t *testing.T) {
	r, err := New()
	if err != nil {
		t.Fatal(err)
	}
	for _, tc := range corpus() {
		doc, _ := json.Marshal(map[string]any{"z": 1, "text": "before " + tc.context + " after", "list": []any{tc.context, 2}})
		got := r.JSON(doc)
		if !json.Valid(got) {
			t.Fatalf("%s: invalid JSON %s", tc.name, got)
		}
		var v map[string]any
		_ = json.Unmarshal(got, &v)
		if strings.Contains(v["text"].(string), tc.secret) || strings.Contains(v["list"].([]any)[0].(string), tc.secret) {
			t.Errorf("%s: secret kept: %s", tc.name, got)
		}
		if !strings.HasPrefix(string(got), `{"list":`) || !strings.HasPrefix(v["text"].(string), "before ") || v["z"] != 1.0 {
			t.Errorf("%s: shape changed: %s", tc.name, got)
		}
	}
	// An escaped spelling is decoded before matching.
	esc := `{"a":"` + `redis://:pw1234567\u0040host"}`
	if got := string(r.JSON([]byte(esc))); strings.Contains(got, "pw1234567") {
		t.Errorf("escaped @ hid the password: %s", got)
	}
	clean := []byte(`{"sessions":[{"id":"ses_1","cwd":"/tmp/x","title":"hello <b>"}],"nextCursor":"abc"}`)
	if got := r.JSON(clean); string(got) != string(clean) {
		t.Errorf("clean document changed: %s", got)
	}
}

func TestJSONSecretKeys(t *testing.T) {
	r, err := New()
	if err != nil {
		t.Fatal(err)
	}
	doc := `{"env":{"DB_PASSWORD" : "plainpw","authToken":"tok-short","inputTokens":12,"tokenizer":"o200k_base","clientSecret":"","note":"password"},"apiKey":"k1"}`
	got := string(r.JSON([]byte(doc)))
	want := `{"env":{"DB_PASSWORD" : "[REDACTED]","authToken":"[REDACTED]","inputTokens":12,"tokenizer":"o200k_base","clientSecret":"","note":"password"},"apiKey":"[REDACTED]"}`
	if got != want {
		t.Errorf("JSON =\n%s\nwant\n%s", got, want)
	}
}

// TestJSONSelectsFromTheDocumentScan checks JSON, which selects each
// string's rules from the keyword matches of one scan of the whole
// document, against the reference that passes every string to String:
// documents of corpus secrets, every rule keyword and plain text, cut at
// random points so keywords straddle string edges, keys and escapes.
func TestJSONSelectsFromTheDocumentScan(t *testing.T) {
	r, parts := redactorAndParts(t)
	parts = append(parts, "plain words ", "work_seed_0099999", "2026-12-02T13:45:20.879Z", `"`, `\`, "é", "\n")
	rng := rand.New(rand.NewPCG(21, 21))
	for i := 0; i < 400; i++ {
		var text strings.Builder
		for j := rng.IntN(12); j >= 0; j-- {
			text.WriteString(parts[rng.IntN(len(parts))])
		}
		s := text.String()
		// Cut the text into strings at random points: keys and values.
		doc := map[string]any{}
		var list []any
		for len(s) > 0 {
			n := 1 + rng.IntN(len(s))
			if rng.IntN(3) == 0 {
				doc[s[:n]] = len(list)
			} else {
				list = append(list, s[:n])
			}
			s = s[n:]
		}
		doc["list"] = list
		b, err := json.Marshal(doc)
		if err != nil {
			t.Fatal(err)
		}
		got, want := r.json(append([]byte(nil), b...), true, nil), r.json(append([]byte(nil), b...), false, nil)
		if string(got) != string(want) {
			t.Fatalf("document %d: JSON =\n%s\nreference\n%s", i, got, want)
		}
	}
}

// TestKeyNamesSecretAsFolded holds keyNamesSecret, which compares a key
// from its end, to folding the key first: named keys, and random keys of
// suffix pieces, separators and cases.
func TestKeyNamesSecretAsFolded(t *testing.T) {
	keys := []string{"", "token", "Token", "authToken", "AUTH_TOKEN", "auth-token", "auth.token", "inputTokens", "tokens",
		"client_secret", "DB_PASSWORD", "pass_wd", "api_key", "API-KEY", "x.private.key", "Cookie", "setCookies", "launch_id",
		"pass.phrase", "_token_", "t_o_k_e_n", "tok", "oken", "objectivePreview", "evidenceIds", "id", "status",
		strings.Repeat("a", 95) + "token", strings.Repeat("a", 96) + "token", "___token", "token___"}
	pieces := []string{"a", "Z", "_", "-", ".", "to", "ken", "KEN", "secret", "pass", "word", "WD", "api", "key", "cookie", "s", "id", "launch", "phrase", "credential", "authorization"}
	rng := rand.New(rand.NewPCG(31, 32))
	for range 20000 {
		var b strings.Builder
		for range rng.IntN(8) {
			b.WriteString(pieces[rng.IntN(len(pieces))])
		}
		keys = append(keys, b.String())
	}
	for _, k := range keys {
		if got, want := keyNamesSecret(k), keyNamesSecretFolded(k); got != want {
			t.Fatalf("keyNamesSecret(%q) = %v, folded %v", k, got, want)
		}
	}
}

// keyNamesSecretFolded is keyNamesSecret by folding the key first (the
// reference it is tested against).
func keyNamesSecretFolded(key string) bool {
	if len(key) < 5 || len(key) > 100 {
		return false
	}
	var b [100]byte
	n := 0
	for i := 0; i < len(key); i++ {
		c := key[i]
		if c == '_' || c == '-' || c == '.' {
			continue
		}
		if c >= 'A' && c <= 'Z' {
			c += 'a' - 'A'
		}
		b[n] = c
		n++
	}
	folded := string(b[:n])
	for _, suf := range secretKeySuffixes {
		if strings.HasSuffix(folded, suf) {
			return true
		}
	}
	return false
}

// TestJSONFromResumesAsAWholeScan holds JSONFrom, which reuses the
// redaction of a page for the prefix a second document shares with it, to
// JSON of the second document (and to the reference that passes every
// string to String): random pages of records whose keys and values are
// corpus secrets, rule keywords, secret-naming keys and plain text, cut
// after a random record with another cursor (as the answer guard cuts a
// page), or with one random string changed, or with a ':' after a random
// quote, or with random bytes spliced in at a random point.
func TestJSONFromResumesAsAWholeScan(t *testing.T) {
	r, parts := redactorAndParts(t)
	parts = append(parts, "plain words ", "tests.", "work_seed_0099999", "2026-12-02T13:45:20.879Z", `"`, `\`, "é", "\n", "<&>", " : ")
	keys := []string{"id", "objectivePreview", "authToken", "DB_PASSWORD", "inputTokens", "note", "apiKey", "status", "password"}
	rng := rand.New(rand.NewPCG(41, 42))
	text := func() string {
		var b strings.Builder
		for j := rng.IntN(4); j >= 0; j-- {
			b.WriteString(parts[rng.IntN(len(parts))])
		}
		return b.String()
	}
	record := func() map[string]any {
		rec := map[string]any{}
		for j := rng.IntN(5); j >= 0; j-- {
			k := keys[rng.IntN(len(keys))]
			if rng.IntN(4) == 0 {
				k = text()
			}
			switch rng.IntN(5) {
			case 0:
				rec[k] = rng.IntN(100)
			case 1:
				rec[k] = []any{text(), text()}
			default:
				rec[k] = text()
			}
		}
		return rec
	}
	encode := func(v any) []byte {
		b, err := json.Marshal(v)
		if err != nil {
			t.Fatal(err)
		}
		return b
	}
	check := func(i int, kind string, page, doc []byte) {
		t.Helper()
		full, m := r.JSONKeep(append([]byte(nil), page...))
		if want := r.JSON(append([]byte(nil), page...)); string(full) != string(want) {
			t.Fatalf("document %d: JSONKeep =\n%s\nJSON\n%s", i, full, want)
		}
		got := r.JSONFrom(m, append([]byte(nil), doc...))
		want := r.JSON(append([]byte(nil), doc...))
		ref := want
		if json.Valid(doc) {
			ref = r.json(append([]byte(nil), doc...), false, nil)
		}
		if string(got) != string(want) || string(want) != string(ref) {
			t.Fatalf("document %d (%s): JSONFrom =\n%s\nJSON\n%s\nreference\n%s\npage\n%s", i, kind, got, want, ref, page)
		}
	}
	for i := range 300 {
		n := 1 + rng.IntN(12)
		recs := make([]any, n)
		for j := range recs {
			recs[j] = record()
		}
		page := encode(map[string]any{"works": recs, "nextCursor": text()})
		// Cut after a random record, with another cursor.
		check(i, "cut", page, encode(map[string]any{"works": recs[:rng.IntN(n+1)], "nextCursor": text()}))
		// One string of the page changed.
		doc := append([]byte(nil), page...)
		if q := strings.Count(string(doc), `"`); q > 0 {
			at := 0
			for range 1 + rng.IntN(q) {
				at += 1 + strings.IndexByte(string(doc[at:]), '"')
			}
			ins := encode(text())
			doc = append(append(append([]byte(nil), doc[:at]...), ins[1:len(ins)-1]...), doc[at:]...)
		}
		check(i, "changed", page, doc)
		// A ':' right after a random quote: a value string becomes a key
		// where the two documents part.
		if q := strings.Count(string(page), `"`); q > 0 {
			at := 0
			for range 1 + rng.IntN(q) {
				at += 1 + strings.IndexByte(string(page[at:]), '"')
			}
			colon := append(append(append([]byte(nil), page[:at]...), `:1,"k"`...), page[at:]...)
			check(i, "colon", page, colon)
			check(i, "colon kept", colon, page)
		}
		// Random bytes spliced in anywhere (not JSON any more).
		at := rng.IntN(len(page) + 1)
		check(i, "spliced", page, append(append(append([]byte(nil), page[:at]...), text()...), page[at:]...))
	}
}

// TestTriggersAreContainmentTests holds every rule trigger to what JSON
// assumes of it (see rule): a trigger that fires on a text fires on any
// text holding it verbatim. Texts of corpus secrets and the triggers' own
// pieces, wrapped in random text.
func TestTriggersAreContainmentTests(t *testing.T) {
	r, err := New()
	if err != nil {
		t.Fatal(err)
	}
	parts := []string{"AC", "0123456789abcdef", "deadbeef", "ACdeadbeefdeadbeefdeadbeefdeadbeef", ".", "MTIzNDU2Nzg5MDEyMzQ1Njc4OTAx", "abcdef", "-_",
		" ", `"`, `\n`, "\n", ":", "Zz9", "é", "x"}
	for _, tc := range corpus() {
		parts = append(parts, tc.context)
	}
	rng := rand.New(rand.NewPCG(51, 52))
	text := func(n int) string {
		var b strings.Builder
		for range n {
			b.WriteString(parts[rng.IntN(len(parts))])
		}
		return b.String()
	}
	fired := 0
	for _, i := range r.unkeyed {
		ru := r.rules[i]
		if ru.trigger == nil {
			continue
		}
		for range 20000 {
			s := text(1 + rng.IntN(8))
			if !ru.trigger(s) {
				continue
			}
			fired++
			if w := text(rng.IntN(3)) + s + text(rng.IntN(3)); !ru.trigger(w) {
				t.Fatalf("%s: fires on %q but not on %q, which holds it", ru.id, s, w)
			}
		}
	}
	if fired == 0 {
		t.Fatal("no trigger fired on any text")
	}
}

// redactorAndParts is a redactor and the text parts the random documents
// are made of: every corpus case's text and, for every rule keyword, the
// keyword, its upper case as a key and the keyword inside a value.
func redactorAndParts(t *testing.T) (*Redactor, []string) {
	t.Helper()
	r, err := New()
	if err != nil {
		t.Fatal(err)
	}
	var parts []string
	for _, tc := range corpus() {
		parts = append(parts, tc.context)
	}
	for _, ru := range r.rules {
		for _, k := range ru.keywords {
			parts = append(parts, k, strings.ToUpper(k)+"=", "x"+k+"_value")
		}
	}
	return r, parts
}

// TestJSONRepeatedStrings holds JSON, which reuses the redaction of the
// last string with keyword matches for the same string met again, to the
// reference that passes every string to String: documents of a few
// strings (corpus secrets, rule keywords, plain text) repeated as values,
// as keys and as values of keys that name secrets, in random order.
func TestJSONRepeatedStrings(t *testing.T) {
	r, parts := redactorAndParts(t)
	parts = append(parts, "plain words", "Make the importer idempotent and cover it with tests. ", "open")
	rng := rand.New(rand.NewPCG(51, 52))
	for i := 0; i < 400; i++ {
		few := make([]string, 1+rng.IntN(3))
		for k := range few {
			few[k] = parts[rng.IntN(len(parts))]
		}
		var b strings.Builder
		b.WriteString("{")
		for k := range 2 + rng.IntN(10) {
			if k > 0 {
				b.WriteString(",")
			}
			key, _ := json.Marshal(few[rng.IntN(len(few))])
			switch rng.IntN(4) {
			case 0:
				key = []byte(`"apiToken"`)
			case 1:
				key, _ = json.Marshal(fmt.Sprint("k", k))
			}
			val, _ := json.Marshal([]string{few[rng.IntN(len(few))], few[rng.IntN(len(few))]})
			if rng.IntN(2) == 0 {
				val, _ = json.Marshal(few[rng.IntN(len(few))])
			}
			fmt.Fprintf(&b, "%s:%s", key, val)
		}
		b.WriteString("}")
		doc := b.String()
		got, want := r.json([]byte(doc), true, nil), r.json([]byte(doc), false, nil)
		if string(got) != string(want) {
			t.Fatalf("document %d %s: JSON =\n%s\nreference\n%s", i, doc, got, want)
		}
	}
}

// TestStringEndAsByteLoop holds stringEnd, which finds a string's end
// with IndexByte when no backslash comes before its first quote, to the
// byte loop alone, from every quote of random documents of quotes,
// backslashes and other bytes.
func TestStringEndAsByteLoop(t *testing.T) {
	loop := func(doc []byte, start int) (int, bool) {
		escaped := false
		for j := start + 1; j < len(doc); j++ {
			switch doc[j] {
			case '\\':
				escaped = true
				j++
			case '"':
				return j, escaped
			}
		}
		return -1, escaped
	}
	alphabet := []byte{'"', '\\', 'a', ' ', 'u', 0xc3, 0xa9}
	rng := rand.New(rand.NewPCG(61, 62))
	for range 20000 {
		doc := make([]byte, rng.IntN(40))
		for i := range doc {
			doc[i] = alphabet[rng.IntN(len(alphabet))]
		}
		for start, c := range doc {
			if c != '"' {
				continue
			}
			gotEnd, gotEsc := stringEnd(doc, start)
			wantEnd, wantEsc := loop(doc, start)
			if gotEnd != wantEnd || gotEsc != wantEsc {
				t.Fatalf("stringEnd(%q, %d) = %d, %v; the byte loop %d, %v", doc, start, gotEnd, gotEsc, wantEnd, wantEsc)
			}
		}
	}
}

// TestLowerASCIIInto holds lowerASCIIInto, reusing one buffer, to
// lowerASCII.
func TestLowerASCIIInto(t *testing.T) {
	rng := rand.New(rand.NewPCG(71, 72))
	var buf []byte
	for range 5000 {
		b := make([]byte, rng.IntN(300))
		for i := range b {
			b[i] = "aZ09_-\xc3\x89e\"\\ "[rng.IntN(12)]
		}
		s := string(b)
		if got, want := string(lowerASCIIInto(&buf, s)), string(lowerASCII(s)); got != want {
			t.Fatalf("lowerASCIIInto(%q) = %q, want %q", s, got, want)
		}
	}
}

// TestMemoResumeIsTheScan holds the resume point JSONFrom takes from its
// memo (the value strings JSONKeep's scan met) to resumeAt's scan of the
// second document, for random documents of strings, keys, escapes,
// whitespace and broken JSON, and every second document that parts from
// the first at each of its offsets.
func TestMemoResumeIsTheScan(t *testing.T) {
	r, err := New()
	if err != nil {
		t.Fatal(err)
	}
	// A secret makes JSONKeep scan the strings (a document without a
	// keyword hit is returned after the prefilter, and resumeAt is then
	// the scan itself).
	head := `{"s":"cache: redis://:s3cretPW@cache.internal:6379/0",`
	pieces := []string{`"a"`, `"k":`, `"k" : `, `"v"`, `,`, ` `, "\n", `[`, `]`, `{`, `}`, `"e\"s"`, `"\\"`, `"\u0041"`, `"x\"`, `:`, `"`, `1`, `"s."`}
	rng := rand.New(rand.NewPCG(81, 82))
	for range 300 {
		var b strings.Builder
		b.WriteString(head)
		for range rng.IntN(30) {
			b.WriteString(pieces[rng.IntN(len(pieces))])
		}
		doc := []byte(b.String())
		_, m := r.JSONKeep(doc)
		if !m.scanned {
			t.Fatalf("%s: JSONKeep did not scan the strings", doc)
		}
		for cut := 0; cut <= len(doc); cut++ {
			other := append([]byte(nil), doc[:cut]...)
			for range rng.IntN(4) {
				other = append(other, pieces[rng.IntN(len(pieces))]...)
			}
			shared := commonPrefix(doc, other)
			if got, want := m.resumeAt(other, shared), resumeAt(other, shared); got != want {
				t.Fatalf("%s then %s (shared %d): the memo resumes at %d, the scan at %d", doc, other, shared, got, want)
			}
		}
	}
}
