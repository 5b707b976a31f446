package secrets

import (
	"encoding/json"
	"fmt"
	"runtime"
	"strings"
	"testing"
)

// codeText is ordinary source code that mentions tokens and keys: the
// keyword prefilter selects rules, and they find nothing.
var codeText = strings.Repeat("func handler(w http.ResponseWriter, r *http.Request) { token := r.Header.Get(\"X-Token\"); _ = token }\n", 40)

func BenchmarkStringCode4KB(b *testing.B) {
	r, err := New()
	if err != nil {
		b.Fatal(err)
	}
	r.String(codeText)
	b.SetBytes(int64(len(codeText)))
	for b.Loop() {
		r.String(codeText)
	}
}

func BenchmarkPerRule(b *testing.B) {
	r, _ := New()
	for _, i := range r.selected(codeText) {
		ru := r.rules[i]
		b.Run(ru.id, func(b *testing.B) {
			for b.Loop() {
				ru.find(codeText, r.global, nil)
			}
		})
	}
}

// eventsPage is a 100-event read_session_events answer of agent chatter
// that mentions tokens and keys but holds no secret.
func eventsPage() []byte {
	events := make([]any, 100)
	for i := range events {
		events[i] = map[string]any{
			"sequence": i + 1, "type": "message.part", "provider": "codex", "nativeId": "thr_01J8Z3",
			"data": map[string]any{"text": fmt.Sprintf("Step %d: I updated the token refresh logic in auth.go and ran go test ./... (ok)", i), "inputTokens": 1234},
		}
	}
	b, _ := json.Marshal(map[string]any{"events": events, "nextSequence": 101, "epoch": 1})
	return b
}

func BenchmarkJSONEventsPage(b *testing.B) {
	r, _ := New()
	page := eventsPage()
	r.JSON(page)
	b.SetBytes(int64(len(page)))
	b.Run("redact", func(b *testing.B) {
		for b.Loop() {
			r.JSON(page)
		}
	})
	// The baseline: encoding the same page, which every answer pays.
	var v any
	_ = json.Unmarshal(page, &v)
	b.Run("marshal-baseline", func(b *testing.B) {
		for b.Loop() {
			_, _ = json.Marshal(v)
		}
	})
	clean := []byte(strings.ReplaceAll(strings.ReplaceAll(string(page), "token", "thing"), "Tokens", "Things"))
	b.Run("redact-no-keyword", func(b *testing.B) {
		for b.Loop() {
			r.JSON(clean)
		}
	})
}

// BenchmarkFirstUse is the cost of the first redaction of a process:
// parsing the embedded rules, building the keyword automaton and compiling
// the rules the text selects; heap-KiB is what stays allocated.
func BenchmarkFirstUse(b *testing.B) {
	var heap uint64
	for b.Loop() {
		var before, after runtime.MemStats
		runtime.GC()
		runtime.ReadMemStats(&before)
		r, err := New()
		if err != nil {
			b.Fatal(err)
		}
		r.String(codeText)
		runtime.GC()
		runtime.ReadMemStats(&after)
		heap = after.HeapAlloc - before.HeapAlloc
		runtime.KeepAlive(r)
	}
	b.ReportMetric(float64(heap)/1024, "heap-KiB")
}

// BenchmarkAnchored compares, on the 4 KB code text, the search of the
// rules run from their keywords (candidateMatches) with the whole-text
// scan it replaced, in one run.
func BenchmarkAnchored(b *testing.B) {
	r, _ := New()
	for _, ru := range r.rules {
		if ru.keyStart == 0 {
			continue
		}
		re, _ := ru.regexp()
		b.Run(ru.id+"/whole-scan", func(b *testing.B) {
			for b.Loop() {
				re.FindAllStringSubmatchIndex(codeText, -1)
			}
		})
		b.Run(ru.id+"/anchored", func(b *testing.B) {
			for b.Loop() {
				ru.candidateMatches(codeText)
			}
		})
	}
}

// worksPage is a list_work_items page of 100 previews as the runtime
// answers it: objectives that end in "tests." (the vault rule's "s."
// keyword) and a base64 cursor that starts like a JWT ("eyJ").
func worksPage() []byte {
	works := make([]any, 100)
	for i := range works {
		works[i] = map[string]any{
			"id": fmt.Sprintf("work_seed_%07d", 99999-i), "sourceSession": fmt.Sprintf("codex:seed-%02d", i%50), "status": "open",
			"changedFiles": []string{"src/importer.go"}, "evidenceIds": []string{}, "dependsOn": []string{fmt.Sprintf("work_seed_%07d", 99998-i)},
			"createdAt": "2026-12-02T13:45:20.879Z", "updatedAt": "2026-12-02T13:45:20.879Z",
			"objectivePreview": strings.Repeat("Make the importer idempotent and cover it with tests. ", 3), "acceptanceCriteriaCount": 2,
		}
	}
	b, _ := json.Marshal(map[string]any{"works": works, "nextCursor": "eyJ2IjoxLCJ0IjoibGlzdF93b3JrX2l0ZW1zIiwiZiI6IjgwZmM4MzRlY2Y5OCIsImsiOlsiMjAyNi0xMi0wMlQxMzo0NDoyNC44NzlaIiwid29ya19zZWVkXzAwOTk5NDMiXX0"})
	return b
}

// BenchmarkJSONWorksPage redacts a page whose every objective and whose
// cursor hit a keyword, and none holds a secret.
func BenchmarkJSONWorksPage(b *testing.B) {
	r, _ := New()
	page := worksPage()
	if got := r.JSON(page); string(got) != string(page) {
		b.Fatalf("the page changed: %s", got)
	}
	b.SetBytes(int64(len(page)))
	b.ReportAllocs()
	for b.Loop() {
		r.JSON(page)
	}
}

// BenchmarkJSONKeepFromWorksPage is the answer guard's redaction of a
// works page cut shorter: JSONKeep of the whole page (records first, as
// the runtime's answer struct orders them), then JSONFrom of its first 57
// records with another cursor.
func BenchmarkJSONKeepFromWorksPage(b *testing.B) {
	r, _ := New()
	type answer struct {
		Works      []any  `json:"works"`
		NextCursor string `json:"nextCursor"`
	}
	var a answer
	_ = json.Unmarshal(worksPage(), &a)
	page, _ := json.Marshal(a)
	a.Works = a.Works[:57]
	a.NextCursor = "eyJ2IjoxLCJ0IjoibGlzdF93b3JrX2l0ZW1zIiwiZiI6IjgwZmM4MzRlY2Y5OCIsImsiOlsiMjAyNi0xMi0wMlQxMzo0NToxNi44NzlaIiwid29ya19zZWVkXzAwOTk5NTAiXX0"
	cut, _ := json.Marshal(a)
	if p := commonPrefix(page, cut); p < len(cut)*9/10 {
		b.Fatalf("the cut page shares %d of its %d bytes", p, len(cut))
	}
	b.SetBytes(int64(len(page)))
	b.ReportAllocs()
	for b.Loop() {
		_, m := r.JSONKeep(page)
		r.JSONFrom(m, cut)
	}
}
