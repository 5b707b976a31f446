package httpguard

import (
	"net/http"
	"strconv"
	"sync"
	"time"

	"github.com/coder/quartz"
)

// Buckets is a rate limit with one token bucket per key: a key may spend
// Burst requests at once, and its bucket refills continuously at PerMinute
// requests a minute. The caller picks the key (an MCP session, a
// credential, an address), so one key's burst never empties another key's
// bucket. It is safe for concurrent use.
type Buckets struct {
	perMinute int
	burst     float64
	perSecond float64
	clock     quartz.Clock

	mu        sync.Mutex
	buckets   map[string]*bucket
	nextPrune time.Time
}

type bucket struct {
	tokens float64
	at     time.Time // when tokens was last brought up to date
}

// NewBuckets builds a limiter of perMinute requests a minute per key with a
// burst of burst requests (perMinute when burst ≤ 0). A perMinute ≤ 0
// yields nil: no limit (every method of a nil *Buckets allows).
func NewBuckets(perMinute, burst int, clock quartz.Clock) *Buckets {
	if perMinute <= 0 {
		return nil
	}
	if burst <= 0 {
		burst = perMinute
	}
	if clock == nil {
		clock = quartz.NewReal()
	}
	return &Buckets{
		perMinute: perMinute, burst: float64(burst), perSecond: float64(perMinute) / 60,
		clock: clock, buckets: map[string]*bucket{},
	}
}

// Allow takes one request from key's bucket. When the bucket is empty it
// returns false and how long until one request is available again.
func (b *Buckets) Allow(key string) (bool, time.Duration) {
	if b == nil {
		return true, 0
	}
	now := b.clock.Now()
	b.mu.Lock()
	defer b.mu.Unlock()
	b.pruneLocked(now)
	k := b.buckets[key]
	if k == nil {
		k = &bucket{tokens: b.burst, at: now}
		b.buckets[key] = k
	}
	b.refill(k, now)
	if k.tokens < 1 {
		wait := time.Duration((1 - k.tokens) / b.perSecond * float64(time.Second))
		return false, wait
	}
	k.tokens--
	return true, 0
}

// Forget drops key's bucket (its session ended).
func (b *Buckets) Forget(key string) {
	if b == nil {
		return
	}
	b.mu.Lock()
	defer b.mu.Unlock()
	delete(b.buckets, key)
}

// Len is the number of buckets held (full buckets are pruned).
func (b *Buckets) Len() int {
	if b == nil {
		return 0
	}
	b.mu.Lock()
	defer b.mu.Unlock()
	return len(b.buckets)
}

// refill brings k up to date at now.
func (b *Buckets) refill(k *bucket, now time.Time) {
	if elapsed := now.Sub(k.at); elapsed > 0 {
		k.tokens = min(b.burst, k.tokens+elapsed.Seconds()*b.perSecond)
		k.at = now
	}
}

// pruneLocked drops, at most once a minute, the buckets that have refilled
// completely: a new bucket starts full, so forgetting them changes nothing
// and the map stays as small as the set of recently busy keys.
func (b *Buckets) pruneLocked(now time.Time) {
	if now.Before(b.nextPrune) {
		return
	}
	for key, k := range b.buckets {
		b.refill(k, now)
		if k.tokens >= b.burst {
			delete(b.buckets, key)
		}
	}
	b.nextPrune = now.Add(time.Minute)
}

// Refuse answers a request Allow refused: 429 rate_limited with
// Retry-After in whole seconds (at least 1).
func Refuse(w http.ResponseWriter, retry time.Duration) {
	w.Header().Set("Retry-After", strconv.Itoa(retryAfterSeconds(retry)))
	WriteError(w, http.StatusTooManyRequests, CodeRateLimited)
}
