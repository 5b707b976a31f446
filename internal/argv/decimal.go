package argv

import "strconv"

// decimal is a JSON number as sign × digits × 10^exp, with digits free of
// leading and trailing zeros (empty digits means zero).
type decimal struct {
	neg    bool
	digits string
	exp    int64
}

// maxExp caps exponents; anything beyond is far outside every bound.
const maxExp = 1 << 40

// parseDecimal reads a JSON number literal exactly, without big arithmetic.
func parseDecimal(s string) (decimal, bool) {
	var d decimal
	i := 0
	if i < len(s) && s[i] == '-' {
		d.neg = true
		i++
	}
	start := i
	for i < len(s) && s[i] >= '0' && s[i] <= '9' {
		i++
	}
	intPart := s[start:i]
	if intPart == "" {
		return d, false
	}
	frac := ""
	if i < len(s) && s[i] == '.' {
		i++
		fs := i
		for i < len(s) && s[i] >= '0' && s[i] <= '9' {
			i++
		}
		frac = s[fs:i]
		if frac == "" {
			return d, false
		}
	}
	var exp int64
	if i < len(s) && (s[i] == 'e' || s[i] == 'E') {
		i++
		eneg := false
		if i < len(s) && (s[i] == '+' || s[i] == '-') {
			eneg = s[i] == '-'
			i++
		}
		es := i
		for i < len(s) && s[i] >= '0' && s[i] <= '9' {
			if exp < maxExp {
				exp = exp*10 + int64(s[i]-'0')
			}
			i++
		}
		if i == es {
			return d, false
		}
		if eneg {
			exp = -exp
		}
	}
	if i != len(s) {
		return d, false
	}
	digits := intPart + frac
	exp -= int64(len(frac))
	j := 0
	for j < len(digits) && digits[j] == '0' {
		j++
	}
	digits = digits[j:]
	k := len(digits)
	for k > 0 && digits[k-1] == '0' {
		k--
		exp++
	}
	d.digits = digits[:k]
	if d.digits == "" {
		d.exp, d.neg = 0, false
	} else {
		d.exp = exp
	}
	return d, true
}

func (d decimal) integer() bool { return d.digits == "" || d.exp >= 0 }

// int64 returns the value of an integral decimal and whether it fits in
// ±2^53 (the range every bound of the spec lies within).
func (d decimal) int64() (int64, bool) {
	if d.digits == "" {
		return 0, true
	}
	if int64(len(d.digits))+d.exp > 16 {
		return 0, false
	}
	v, err := strconv.ParseInt(d.digits, 10, 64)
	if err != nil {
		return 0, false
	}
	for e := d.exp; e > 0; e-- {
		v *= 10
	}
	if v > 1<<53 {
		return 0, false
	}
	if d.neg {
		v = -v
	}
	return v, true
}
