package workflow

import (
	"crypto/rand"
	"encoding/binary"
	"strconv"
	"strings"
	"sync"
	"time"

	"github.com/google/uuid"
)

// suffixSpace is 36^6, the number of 6-character base-36 suffixes.
const suffixSpace = 2176782336

// idSource makes the time-ordered IDs upstream uses for work and evidence,
// "<prefix>_<unixms>_<6 base36>". Within one process they are strictly
// increasing even under a frozen clock: a repeated millisecond reuses the
// last one and increments the suffix. The first suffix of a millisecond is
// random (in the lower half of the space, leaving room to count up), so two
// processes colliding would need the same millisecond and the same random
// draw; the primary key turns that into an error, never an overwrite.
type idSource struct {
	mu     sync.Mutex
	lastMS int64
	suffix uint64
}

func newIDSource() *idSource { return &idSource{} }

func (g *idSource) next(prefix string, now time.Time) string {
	g.mu.Lock()
	ms := now.UnixMilli()
	if ms <= g.lastMS && g.suffix+1 < suffixSpace {
		ms = g.lastMS
		g.suffix++
	} else {
		if ms < g.lastMS {
			ms = g.lastMS + 1 // suffix space exhausted: move to the next millisecond
		}
		g.lastMS = ms
		g.suffix = randomUint64() % (suffixSpace / 2)
	}
	suffix := g.suffix
	g.mu.Unlock()
	s := strconv.FormatUint(suffix, 36)
	return prefix + "_" + strconv.FormatInt(ms, 10) + "_" + strings.Repeat("0", 6-len(s)) + s
}

func randomUint64() uint64 {
	var b [8]byte
	_, _ = rand.Read(b[:]) // crypto/rand.Read never fails on supported platforms
	return binary.BigEndian.Uint64(b[:])
}

// randomID is "<prefix>_<uuid v4>" (handoffs, reviews, verification runs).
func randomID(prefix string) string { return prefix + "_" + uuid.NewString() }
