package httpguard

import (
	"net/http"
	"net/http/httptest"
	"testing"
	"time"

	"github.com/agent-interop/runtime/internal/testutil/testclock"
)

func TestBucketsBurstRefillAndKeys(t *testing.T) {
	clock := testclock.At(t, time.Unix(1_700_000_000, 0))
	b := NewBuckets(60, 5, clock) // one a second, a burst of 5
	for i := range 5 {
		if ok, _ := b.Allow("a"); !ok {
			t.Fatalf("request %d of the burst refused", i+1)
		}
	}
	ok, retry := b.Allow("a")
	if ok || retry != time.Second {
		t.Fatalf("6th request: %v, retry %v; want refused, retry 1s", ok, retry)
	}
	if ok, _ := b.Allow("b"); !ok {
		t.Fatal("key b refused because key a is empty")
	}
	clock.Advance(500 * time.Millisecond)
	if ok, retry := b.Allow("a"); ok || retry != 500*time.Millisecond {
		t.Fatalf("half a second later: %v, retry %v; want refused, retry 500ms", ok, retry)
	}
	clock.Advance(500 * time.Millisecond)
	if ok, _ := b.Allow("a"); !ok {
		t.Fatal("a second later: refused, want the refilled request")
	}
	clock.Advance(time.Hour) // refills to the burst, never beyond
	for i := range 5 {
		if ok, _ := b.Allow("a"); !ok {
			t.Fatalf("after an hour, request %d refused", i+1)
		}
	}
	if ok, _ := b.Allow("a"); ok {
		t.Fatal("the bucket held more than its burst")
	}
	b.Forget("a")
	if ok, _ := b.Allow("a"); !ok {
		t.Fatal("a forgotten key starts with a full bucket")
	}
}

func TestBucketsDefaultsAndNil(t *testing.T) {
	if b := NewBuckets(0, 10, nil); b != nil {
		t.Fatal("a limit of 0 built a limiter")
	}
	var none *Buckets
	for range 1000 {
		if ok, _ := none.Allow("x"); !ok {
			t.Fatal("a nil limiter refused")
		}
	}
	clock := testclock.At(t, time.Unix(1_700_000_000, 0))
	b := NewBuckets(3, 0, clock) // burst defaults to the limit
	for range 3 {
		if ok, _ := b.Allow("k"); !ok {
			t.Fatal("burst smaller than the limit")
		}
	}
	ok, retry := b.Allow("k")
	if ok || retry != 20*time.Second {
		t.Fatalf("4th: %v %v, want refused with 20s", ok, retry)
	}
	rec := httptest.NewRecorder()
	Refuse(rec, retry)
	if rec.Code != http.StatusTooManyRequests || rec.Header().Get("Retry-After") != "20" || errorCode(t, rec) != CodeRateLimited {
		t.Fatalf("Refuse: %d %v %s", rec.Code, rec.Header(), rec.Body)
	}
}
