package bpe

// The merge loops follow tiktoken's byte-pair encoding, as
// github.com/tiktoken-go/tokenizer (MIT) writes it: the pair of adjacent
// parts whose joined bytes have the lowest rank merges first, the leftmost
// among equal ranks, until no adjacent pair is a token. Short pieces scan
// for that pair; long ones keep the candidates in a heap.

// noRank marks a boundary that cannot merge with its successor.
const noRank = ^uint32(0)

// heapFrom is the piece length, in bytes, from which Encode keeps the
// merge candidates in a heap (tiktoken-go's threshold).
const heapFrom = 96

// Scratch is the working memory of Encode, reused between calls (not safe
// for concurrent use).
type Scratch struct {
	parts []part
	nodes []node
	heap  []candidate
}

type part struct {
	offset int32
	rank   uint32
}

// Count is the number of tokens piece encodes to.
func (t *Table) Count(piece string, s *Scratch) int {
	if len(piece) == 0 {
		return 0
	}
	if _, ok := t.Rank(piece); ok {
		return 1
	}
	return len(t.bounds(piece, s)) - 1
}

// Encode appends the ranks piece encodes to to dst.
func (t *Table) Encode(dst []uint32, piece string, s *Scratch) []uint32 {
	if len(piece) == 0 {
		return dst
	}
	if r, ok := t.Rank(piece); ok {
		return append(dst, r)
	}
	b := t.bounds(piece, s)
	for i := 0; i+1 < len(b); i++ {
		r, ok := t.Rank(piece[b[i].offset:b[i+1].offset])
		if !ok {
			// Every byte is a token of a byte-level vocabulary; a table
			// without them cannot encode every text.
			r = noRank
		}
		dst = append(dst, r)
	}
	return dst
}

// bounds returns the offsets where piece's tokens start, and len(piece).
func (t *Table) bounds(piece string, s *Scratch) []part {
	if len(piece) < heapFrom {
		return t.mergeScan(piece, s)
	}
	return t.mergeHeap(piece, s)
}

// rankOf is the rank of piece[i:j], or noRank.
func (t *Table) rankOf(piece string, i, j int32) uint32 {
	if r, ok := t.Rank(piece[i:j]); ok {
		return r
	}
	return noRank
}

// mergeScan finds the pair to merge with a linear scan: O(n²) for a piece
// of n bytes, fast for short ones.
func (t *Table) mergeScan(piece string, s *Scratch) []part {
	parts := s.parts[:0]
	for i := range int32(len(piece) + 1) {
		parts = append(parts, part{i, noRank})
	}
	s.parts = parts
	for i := 0; i+2 < len(parts); i++ {
		parts[i].rank = t.rankOf(piece, parts[i].offset, parts[i+2].offset)
	}
	// rankAfter is the rank of parts[i] joined with its next two parts
	// (parts[i+1] is about to be removed by a merge).
	rankAfter := func(i int) uint32 {
		if i+3 < len(parts) {
			return t.rankOf(piece, parts[i].offset, parts[i+3].offset)
		}
		return noRank
	}
	for len(parts) > 1 {
		best, at := noRank, 0
		for i, p := range parts[:len(parts)-1] {
			if p.rank < best {
				best, at = p.rank, i
			}
		}
		if best == noRank {
			break
		}
		parts[at].rank = rankAfter(at)
		if at > 0 {
			parts[at-1].rank = rankAfter(at - 1)
		}
		parts = append(parts[:at+1], parts[at+2:]...)
	}
	return parts
}

// node is a part boundary in mergeHeap's doubly linked list; rank is the
// rank of this part joined with the next one.
type node struct {
	prev, next int32
	rank       uint32
}

type candidate struct {
	rank   uint32
	offset int32
}

// mergeHeap gives mergeScan's parts in O(n log n): the candidates are in a
// min-heap by rank, then offset, and a candidate whose boundary's rank has
// changed since it was pushed is skipped.
func (t *Table) mergeHeap(piece string, s *Scratch) []part {
	n := int32(len(piece))
	nodes := s.nodes[:0]
	for i := range n + 1 {
		nodes = append(nodes, node{prev: i - 1, next: i + 1, rank: noRank})
	}
	nodes[n].next = -1
	s.nodes = nodes
	rankOf := func(i int32) uint32 {
		j := nodes[i].next
		if j < 0 {
			return noRank
		}
		k := nodes[j].next
		if k < 0 {
			return noRank
		}
		return t.rankOf(piece, i, k)
	}
	h := heap(s.heap[:0])
	for i := int32(0); i+2 <= n; i++ {
		if r := rankOf(i); r != noRank {
			nodes[i].rank = r
			h = append(h, candidate{r, i})
		}
	}
	h.init()
	for len(h) > 0 {
		top := h.pop()
		i := top.offset
		if nodes[i].rank != top.rank {
			continue
		}
		j := nodes[i].next
		k := nodes[j].next
		nodes[j].rank = noRank
		nodes[i].next = k
		if k >= 0 {
			nodes[k].prev = i
		}
		for _, b := range [2]int32{i, nodes[i].prev} {
			if b < 0 {
				continue
			}
			nodes[b].rank = rankOf(b)
			if nodes[b].rank != noRank {
				h.push(candidate{nodes[b].rank, b})
			}
		}
	}
	s.heap = h
	parts := s.parts[:0]
	for i := int32(0); i >= 0; i = nodes[i].next {
		parts = append(parts, part{i, nodes[i].rank})
	}
	s.parts = parts
	return parts
}

// heap is a binary min-heap of candidates by rank, then offset (leftmost
// first among equal ranks).
type heap []candidate

func (h heap) less(a, b int) bool {
	if h[a].rank != h[b].rank {
		return h[a].rank < h[b].rank
	}
	return h[a].offset < h[b].offset
}

func (h heap) init() {
	for i := len(h)/2 - 1; i >= 0; i-- {
		h.down(i)
	}
}

func (h *heap) push(c candidate) {
	*h = append(*h, c)
	h.up(len(*h) - 1)
}

func (h *heap) pop() candidate {
	old := *h
	top := old[0]
	last := len(old) - 1
	old[0] = old[last]
	*h = old[:last]
	h.down(0)
	return top
}

func (h heap) up(i int) {
	for i > 0 {
		parent := (i - 1) / 2
		if !h.less(i, parent) {
			return
		}
		h[i], h[parent] = h[parent], h[i]
		i = parent
	}
}

func (h heap) down(i int) {
	for {
		c := 2*i + 1
		if c >= len(h) {
			return
		}
		if r := c + 1; r < len(h) && h.less(r, c) {
			c = r
		}
		if !h.less(c, i) {
			return
		}
		h[i], h[c] = h[c], h[i]
		i = c
	}
}
