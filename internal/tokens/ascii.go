package tokens

import "encoding/binary"

// sumASCII is the count of an ASCII text under o.mu, with t's marks
// when t is not nil (Tally) and each piece's end appended to ends when it
// is not nil (the tests). It cuts the pieces splitBytes cuts and, with t,
// works out the reaches readToASCII does, with the matcher (matchASCII),
// the reach and the front cache's lookup (pieceCount) written out in one
// loop: a page of answer JSON is some 7,000 pieces of 1 to 11 bytes, and
// three calls per piece (each spilling the loop's registers) were most of
// its cost. TestSumASCIIIsSplitBytes and FuzzSumASCIIIsSplitBytes hold it
// to splitBytes, piece by piece, and to Count.
func (o *O200k) sumASCII(text string, t *Tally, ends *[]int) int {
	b := asBytes(text)
	n := len(b)
	front := o.front
	total, safe, last := 0, 0, 0
	for i := 0; i < n; {
		c := asciiClass[b[i]]
		e := i + 1
		switch {
		case c&(aUpper|aLower) != 0 || c&aPrefix != 0 && e < n && asciiClass[b[e]]&(aUpper|aLower) != 0:
			// A letter run, after the prefix byte at i when b[i] is not a
			// letter: its capitals, then its small letters (matchASCII).
			if c&(aUpper|aLower) != 0 {
				e = i
			}
			for e < n && asciiClass[b[e]]&aUpper != 0 {
				e++
			}
			for e < n && asciiClass[b[e]]&aLower != 0 {
				e++
			}
			if e < n && b[e] == '\'' {
				e = contractionASCII(b, e)
			}
		case c&aDigit != 0: // \p{N}{1,3}
			for e < n && e-i < 3 && asciiClass[b[e]]&aDigit != 0 {
				e++
			}
		case c&aPunct != 0 || b[i] == ' ' && e < n && asciiClass[b[e]]&aPunct != 0:
			// ` ?[^\s\p{L}\p{N}]+[\r\n/]*`: b[i] is the first punctuation
			// byte or the space before it (then b[e] is the first).
			for e < n && asciiClass[b[e]]&aPunct != 0 {
				e++
			}
			for e < n && (b[e] == '\r' || b[e] == '\n' || b[e] == '/') {
				e++
			}
		default: // whitespace, DEL
			if e = matchAt(b, i); e == i {
				i++ // no piece starts here (see splitUnits)
				continue
			}
		}
		if e-i == 1 {
			total++ // see pieceCount
		} else {
			p := text[i:e]
			var w1, w2 uint64
			if i+8 <= n { // pieceWords, from loads of the text
				w1 = binary.LittleEndian.Uint64(b[i:])
				if l := e - i; l < 8 {
					w1 &= ^uint64(0) >> (64 - 8*l)
				} else if l > 8 {
					w2 = binary.LittleEndian.Uint64(b[e-8:])
				}
			} else {
				w1, w2 = pieceWords(p)
			}
			if f := &front[slotOf(len(p), w1, w2)]; f.holds(p, w1, w2) {
				total += f.n
			} else {
				total += o.pieceLocked(p, f, w1, w2)
			}
		}
		if t != nil {
			safe = max(safe, readToASCII(b, i, e))
			if e-last >= markEvery {
				t.marks = append(t.marks, mark{end: e, safe: safe, tokens: total})
				last = e
			}
		}
		if ends != nil {
			*ends = append(*ends, e)
		}
		i = e
	}
	return total
}
