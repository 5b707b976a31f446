// Package bpe is a byte-pair encoder over a rank table kept in one
// read-only string: the table is used in place (from a binary's read-only
// data, as internal/tokens embeds it), so opening it allocates nothing and
// builds nothing. Build writes the table from a vocabulary (the generator
// does, gen/o200k.go); Open checks it and Table looks ranks up and encodes.
//
// The table, its integers little-endian uint32:
//
//	header   magic "bpe2", n (tokens, ranks 0..n-1), bits (slots = 1<<bits)
//	slots    1<<bits, open addressing with linear probing: 0 is empty,
//	         else (rank+1) | fingerprint<<rankBits
//	starts   n/group+2: starts[k] is the blob offset of rank k*group,
//	         and the last one the blob's length
//	lens     n bytes: the length of each token (at most 255)
//	blob     the tokens' bytes, concatenated in rank order
//
// The fingerprint is hash bits the slot index does not use: a probe reads
// a token's bytes only when its fingerprint matches. A token's offset is
// its group's start plus the lengths before it in its group: a quarter of
// the bytes of an offset per rank, and lookups touch that much less of the
// table (every lookup lands on a random slot and, when found, on its
// rank's offset and bytes, so a few hundred distinct pieces page most of
// the table in).
package bpe

import (
	"encoding/binary"
	"errors"
	"fmt"
	"math/bits"
)

const (
	magic      = "bpe2"
	headerSize = 12
	// group is the ranks that share one start offset (see the layout).
	group = 16
	// maxTokenLen is the longest token (its length is one byte).
	maxTokenLen = 255
	// rankBits is the low bits of a slot that hold rank+1.
	rankBits = 18
	rankMask = 1<<rankBits - 1
	// MaxTokens is the most tokens a table holds (rank+1 fits rankBits).
	MaxTokens = rankMask - 1
)

// Table is an opened rank table.
type Table struct {
	data     string
	n        int
	slots    int // byte offset of slots[0] in data
	starts   int // byte offset of starts[0]
	lens     int // byte offset of lens[0]
	blob     int // byte offset of the blob
	slotMask uint64
}

// layout is where each part of a table of n tokens and 1<<b slots begins,
// and the bytes before the blob.
func layout(n int, b uint) (slots, starts, lens, blob int) {
	slots = headerSize
	starts = slots + 4<<b
	lens = starts + 4*(n/group+2)
	return slots, starts, lens, lens + n
}

// hash is FNV-1a (64-bit) of b with a final mix, so that the slot index
// (low bits) and the fingerprint (high bits) both depend on every byte.
func hash(b string) uint64 {
	h := uint64(14695981039346656037)
	for i := 0; i < len(b); i++ {
		h ^= uint64(b[i])
		h *= 1099511628211
	}
	h ^= h >> 32
	h *= 0x9E3779B97F4A7C15
	h ^= h >> 29
	return h
}

// fingerprint is the slot's fingerprint of hash h.
func fingerprint(h uint64) uint32 { return uint32(h >> (64 - (32 - rankBits))) }

// u32 reads the little-endian uint32 at byte offset i of s.
func u32(s string, i int) uint32 {
	_ = s[i+3]
	return uint32(s[i]) | uint32(s[i+1])<<8 | uint32(s[i+2])<<16 | uint32(s[i+3])<<24
}

// Build returns the table of tokens (token r has rank r). Empty tokens
// are ranks with no token (never found). There are the fewest slots that
// leave a fifth of them empty (o200k: 2^18 slots, 76% full; probes stay
// short because they rarely leave a cache line).
func Build(tokens []string) ([]byte, error) {
	n := len(tokens)
	if n > MaxTokens {
		return nil, fmt.Errorf("build rank table: %d tokens, at most %d", n, MaxTokens)
	}
	b := uint(bits.Len(uint(n * 5 / 4)))
	slotsAt, startsAt, lensAt, size := layout(n, b)
	blobLen := 0
	for _, t := range tokens {
		blobLen += len(t)
	}
	out := make([]byte, size, size+blobLen)
	copy(out, magic)
	binary.LittleEndian.PutUint32(out[4:], uint32(n))
	binary.LittleEndian.PutUint32(out[8:], uint32(b))
	slots, starts, lens := out[slotsAt:startsAt], out[startsAt:lensAt], out[lensAt:size]
	mask := uint64(1)<<b - 1
	seen := make(map[string]bool, n)
	off := 0
	for r, t := range tokens {
		if len(t) > maxTokenLen {
			return nil, fmt.Errorf("build rank table: token %d is %d bytes, at most %d", r, len(t), maxTokenLen)
		}
		if r%group == 0 {
			binary.LittleEndian.PutUint32(starts[4*(r/group):], uint32(off))
		}
		lens[r] = byte(len(t))
		off += len(t)
		out = append(out, t...)
		if t == "" {
			continue
		}
		if seen[t] {
			return nil, fmt.Errorf("build rank table: token %q twice", t)
		}
		seen[t] = true
		h := hash(t)
		i := h & mask
		for binary.LittleEndian.Uint32(slots[4*i:]) != 0 {
			i = (i + 1) & mask
		}
		binary.LittleEndian.PutUint32(slots[4*i:], uint32(r+1)|fingerprint(h)<<rankBits)
	}
	binary.LittleEndian.PutUint32(starts[4*(n/group+1):], uint32(off))
	return out, nil
}

// ErrCorrupt reports a table whose layout does not add up.
var ErrCorrupt = errors.New("corrupt rank table")

// Open checks data's header and length (it reads the header and the
// blob's length, nothing else) and returns its table.
func Open(data string) (*Table, error) {
	if len(data) < headerSize || data[:4] != magic {
		return nil, fmt.Errorf("%w: no header", ErrCorrupt)
	}
	n, b := int(u32(data, 4)), u32(data, 8)
	if n > MaxTokens || b > 30 {
		return nil, fmt.Errorf("%w: %d tokens, %d slot bits", ErrCorrupt, n, b)
	}
	t := &Table{data: data, n: n, slotMask: uint64(1)<<b - 1}
	t.slots, t.starts, t.lens, t.blob = layout(n, uint(b))
	if len(data) < t.blob || len(data) != t.blob+int(u32(data, t.starts+4*(n/group+1))) {
		return nil, fmt.Errorf("%w: %d bytes for %d tokens", ErrCorrupt, len(data), n)
	}
	return t, nil
}

// Len is the number of ranks.
func (t *Table) Len() int { return t.n }

// Token is the bytes of rank r ("" for a rank with no token).
func (t *Table) Token(r int) string {
	off := t.blob + int(u32(t.data, t.starts+4*(r/group)))
	for i := t.lens + r&^(group-1); i < t.lens+r; i++ {
		off += int(t.data[i])
	}
	return t.data[off : off+int(t.data[t.lens+r])]
}

// Rank returns the rank of token b.
func (t *Table) Rank(b string) (uint32, bool) {
	h := hash(b)
	fp := fingerprint(h)
	for i := h & t.slotMask; ; i = (i + 1) & t.slotMask {
		v := u32(t.data, t.slots+4*int(i))
		if v == 0 {
			return 0, false
		}
		if v>>rankBits == fp {
			r := v&rankMask - 1
			if t.Token(int(r)) == b {
				return r, true
			}
		}
	}
}
