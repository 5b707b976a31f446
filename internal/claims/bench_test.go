package claims_test

import (
	"context"
	"strconv"
	"testing"

	"github.com/agent-interop/runtime/internal/claims"
	"github.com/agent-interop/runtime/internal/testutil/teststore"
)

// BenchmarkAcquireRelease measures one acquire plus one release (two write
// transactions) on a store file with no other active claims.
func BenchmarkAcquireRelease(b *testing.B) {
	benchAcquireRelease(b, 0)
}

// BenchmarkAcquireReleaseAmong200 is the same with 200 unrelated active
// claims that every acquisition must check.
func BenchmarkAcquireReleaseAmong200(b *testing.B) {
	benchAcquireRelease(b, 200)
}

func benchAcquireRelease(b *testing.B, active int) {
	ctx := context.Background()
	st := teststore.Open(b)
	seedWork(b, st.Client(), "work_bench")
	s := claims.New(st)
	for i := range active {
		if _, err := s.Acquire(ctx, claims.AcquireInput{WorkID: "work_bench", SessionID: "codex:other",
			Resource: "held/" + strconv.Itoa(i), TTLSeconds: 3600}); err != nil {
			b.Fatal(err)
		}
	}
	b.ReportAllocs()
	b.ResetTimer()
	for i := 0; b.Loop(); i++ {
		c, err := s.Acquire(ctx, claims.AcquireInput{WorkID: "work_bench", SessionID: "codex:bench",
			Resource: "src/" + strconv.Itoa(i) + ".go"})
		if err != nil {
			b.Fatal(err)
		}
		if _, err := s.Release(ctx, claims.ReleaseInput{ClaimID: c.ID, SessionID: "codex:bench"}); err != nil {
			b.Fatal(err)
		}
	}
}
