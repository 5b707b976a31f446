package store

import (
	"errors"
	"fmt"
	"strings"
	"time"
)

// The text of a time in the store. SQLite has no time type: the driver
// writes a time.Time as text in one layout (the DSN's _time_format=sqlite,
// in UTC) and reads a DATETIME column's text back by trying layouts in
// turn. Reads that select a time column as text (CAST(... AS TEXT)) and
// writes that pass one as text use these two functions, so the store has
// one reading and one writing of that layout.

// AppendTime appends t in UTC as the store's driver writes a time
// (_time_format=sqlite): "2006-01-02 15:04:05.999999999+00:00", for a
// statement that passes the time as text.
func AppendTime(b []byte, t time.Time) []byte {
	t = t.UTC()
	y, mo, d := t.Date()
	h, mi, s := t.Clock()
	b = appendInt(b, y, 4)
	b = append(b, '-')
	b = appendInt(b, int(mo), 2)
	b = append(b, '-')
	b = appendInt(b, d, 2)
	b = append(b, ' ')
	b = appendInt(b, h, 2)
	b = append(b, ':')
	b = appendInt(b, mi, 2)
	b = append(b, ':')
	b = appendInt(b, s, 2)
	if ns := t.Nanosecond(); ns != 0 {
		b = append(b, '.')
		digits := appendInt(nil, ns, 9)
		for len(digits) > 0 && digits[len(digits)-1] == '0' {
			digits = digits[:len(digits)-1]
		}
		b = append(b, digits...)
	}
	return append(b, "+00:00"...)
}

func appendInt(b []byte, v, width int) []byte {
	var tmp [20]byte
	i := len(tmp)
	for v > 0 || i > len(tmp)-width {
		i--
		tmp[i] = byte('0' + v%10)
		v /= 10
	}
	return append(b, tmp[i:]...)
}

// storeTimeLayouts are the layouts modernc's driver tries on a DATETIME
// column's text (its parseTimeFormats, v1.62), in its order, after the
// time.Time.String form.
var storeTimeLayouts = []string{
	"2006-01-02 15:04:05.999999999-07:00",
	"2006-01-02T15:04:05.999999999-07:00",
	"2006-01-02 15:04:05.999999999",
	"2006-01-02T15:04:05.999999999",
	"2006-01-02 15:04",
	"2006-01-02T15:04",
	"2006-01-02",
}

var errNotStoreTime = errors.New("not a time the store's driver reads")

// ParseTime reads a time column's text (selected with CAST(... AS TEXT),
// which keeps the driver from parsing it) as modernc's driver reads a
// DATETIME column under the store's DSN (_timezone=UTC): the same instant,
// in UTC. The layout the store writes (_time_format=sqlite, see AppendTime)
// is read by hand; any other text goes through the driver's sequence of
// layouts. PostgreSQL's text form of a timestamptz in the store's UTC
// session, which ends in "+00", is read as the same layout.
func ParseTime(s string) (time.Time, error) {
	if strings.HasSuffix(s, "+00") && len(s) >= len("2006-01-02 15:04:05+00") {
		s += ":00"
	}
	if t, ok := parseUTCStoreTime(s); ok {
		return t, nil
	}
	// The driver's sequence (conn.parseTime): time.Time.String's form
	// (before " m=" when present), then the layouts, in UTC unless the
	// text ends in Z.
	str := s
	if x := strings.Index(s, "m="); x > 0 {
		str = s[:x]
	}
	if t, err := time.Parse("2006-01-02 15:04:05.999999999 -0700 MST", strings.TrimSpace(str)); err == nil {
		return t.In(time.UTC), nil
	}
	ts, hadZ := strings.CutSuffix(s, "Z")
	for _, f := range storeTimeLayouts {
		var t time.Time
		var err error
		if hadZ {
			t, err = time.Parse(f, ts)
		} else {
			t, err = time.ParseInLocation(f, ts, time.UTC)
		}
		if err == nil {
			return t.In(time.UTC), nil
		}
	}
	return time.Time{}, fmt.Errorf("%w: %q", errNotStoreTime, s)
}

// parseUTCStoreTime reads "YYYY-MM-DD hh:mm:ss[.f{1,9}]+00:00" with every
// field in range, as time.Parse reads it with the store's layout; ok is
// false for any other text.
func parseUTCStoreTime(s string) (time.Time, bool) {
	const head = len("2006-01-02 15:04:05")
	if len(s) < head+len("+00:00") || !strings.HasSuffix(s, "+00:00") ||
		s[4] != '-' || s[7] != '-' || s[10] != ' ' || s[13] != ':' || s[16] != ':' {
		return time.Time{}, false
	}
	num := func(i, n int) (int, bool) {
		v := 0
		for _, c := range []byte(s[i : i+n]) {
			if c < '0' || c > '9' {
				return 0, false
			}
			v = v*10 + int(c-'0')
		}
		return v, true
	}
	year, ok1 := num(0, 4)
	month, ok2 := num(5, 2)
	day, ok3 := num(8, 2)
	hour, ok4 := num(11, 2)
	minute, ok5 := num(14, 2)
	sec, ok6 := num(17, 2)
	if !ok1 || !ok2 || !ok3 || !ok4 || !ok5 || !ok6 ||
		month < 1 || month > 12 || day < 1 || day > 31 || hour > 23 || minute > 59 || sec > 59 {
		return time.Time{}, false
	}
	nsec := 0
	if frac := s[head : len(s)-len("+00:00")]; frac != "" {
		digits := len(frac) - 1
		if frac[0] != '.' || digits < 1 || digits > 9 {
			return time.Time{}, false
		}
		v, ok := num(head+1, digits)
		if !ok {
			return time.Time{}, false
		}
		for range 9 - digits {
			v *= 10
		}
		nsec = v
	}
	t := time.Date(year, time.Month(month), day, hour, minute, sec, nsec, time.UTC)
	if t.Day() != day { // a day past its month's end, which time.Parse refuses
		return time.Time{}, false
	}
	return t, true
}
