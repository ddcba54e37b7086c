package trace

import (
	"bytes"
	"encoding/binary"
	"errors"
	"fmt"
	"math"
	"strconv"
	"time"
)

// Timestamps are parsed by hand: time.Parse costs about a microsecond a
// line, the whole budget of a line. What is parsed here is an instant in
// nanoseconds since the Unix epoch (UTC), which bounds it to the years
// 1678–2261.

const (
	minUnixSec = math.MinInt64/int64(time.Second) + 1
	maxUnixSec = math.MaxInt64/int64(time.Second) - 1
)

var errTimeRange = errors.New("out of range (want a year between 1678 and 2261)")

// daysFromCivil returns the number of days from 1970-01-01 to y-m-d of the
// proleptic Gregorian calendar (Howard Hinnant's days_from_civil).
func daysFromCivil(y, m, d int64) int64 {
	if m <= 2 {
		y--
	}
	era := y / 400
	if y < 0 && y%400 != 0 {
		era = (y - 399) / 400
	}
	yoe := y - era*400
	mp := (m + 9) % 12
	doy := (153*mp+2)/5 + d - 1
	doe := yoe*365 + yoe/4 - yoe/100 + doy
	return era*146097 + doe - 719468
}

func daysIn(m, y int64) int64 {
	switch m {
	case 2:
		if y%4 == 0 && (y%100 != 0 || y%400 == 0) {
			return 29
		}
		return 28
	case 4, 6, 9, 11:
		return 30
	}
	return 31
}

// digits reads b as an unsigned decimal number; ok is false if b is empty
// or holds anything but ASCII digits.
func digits(b []byte) (n int64, ok bool) {
	if len(b) == 0 || len(b) > 18 {
		return 0, false
	}
	for _, c := range b {
		if c < '0' || c > '9' {
			return 0, false
		}
		n = n*10 + int64(c-'0')
	}
	return n, true
}

// civilSeconds returns the Unix seconds of a UTC date and time of day,
// checking each field's range.
func civilSeconds(y, mo, d, h, mi, s int64) (int64, error) {
	switch {
	case mo < 1 || mo > 12:
		return 0, fmt.Errorf("month %d out of range", mo)
	case d < 1 || d > daysIn(mo, y):
		return 0, fmt.Errorf("day %d out of range", d)
	case h > 23:
		return 0, fmt.Errorf("hour %d out of range", h)
	case mi > 59:
		return 0, fmt.Errorf("minute %d out of range", mi)
	case s > 59:
		return 0, fmt.Errorf("second %d out of range", s)
	}
	return daysFromCivil(y, mo, d)*86400 + h*3600 + mi*60 + s, nil
}

// fraction reads the digits of a decimal fraction (after the '.') as
// nanoseconds; digits past the ninth are dropped.
func fraction(b []byte) (int64, bool) {
	if len(b) == 0 {
		return 0, false
	}
	var ns int64
	for i, c := range b {
		if c < '0' || c > '9' {
			return 0, false
		}
		if i < 9 {
			ns = ns*10 + int64(c-'0')
		}
	}
	if len(b) < 9 {
		ns *= pow10[9-len(b)]
	}
	return ns, true
}

// pow10 are the powers of ten a fraction of fewer than 9 digits is
// scaled by, to nanoseconds.
var pow10 = [...]int64{1, 10, 100, 1e3, 1e4, 1e5, 1e6, 1e7, 1e8, 1e9}

// zone reads a numeric UTC offset, "+hhmm", "+hh:mm" or "+hh", as seconds
// east of UTC.
func zone(b []byte) (int64, bool) {
	if len(b) < 3 || (b[0] != '+' && b[0] != '-') {
		return 0, false
	}
	var hh, mm int64
	var ok bool
	switch len(b) {
	case 3:
		hh, ok = digits(b[1:3])
	case 5:
		if hh, ok = digits(b[1:3]); ok {
			mm, ok = digits(b[3:5])
		}
	case 6:
		if b[3] != ':' {
			return 0, false
		}
		if hh, ok = digits(b[1:3]); ok {
			mm, ok = digits(b[4:6])
		}
	}
	if !ok || hh > 23 || mm > 59 {
		return 0, false
	}
	off := hh*3600 + mm*60
	if b[0] == '-' {
		off = -off
	}
	return off, true
}

// toNanos joins Unix seconds and nanoseconds, refusing what int64
// nanoseconds cannot hold.
func toNanos(sec, ns int64) (int64, error) {
	if sec < minUnixSec || sec > maxUnixSec {
		return 0, errTimeRange
	}
	return sec*int64(time.Second) + ns, nil
}

// timeCache remembers the last second parsed, keyed by the bytes that
// name it: consecutive log lines mostly share their second, so most lines
// skip the calendar arithmetic.
type timeCache struct {
	key [32]byte
	n   int   // length of key in use; 0 when empty
	sec int64 // Unix seconds the key names
}

// get returns the seconds b names, if b is the key put last. A key of 16
// bytes or more (all but a cut-off one; keys are at most 32) is compared
// as words, the last overlapping those before, with no loop and no call:
// a call to memequal cost as much as the parsing it saves.
func (c *timeCache) get(b []byte) (int64, bool) {
	n := len(b)
	if c.n == 0 || n != c.n {
		return 0, false
	}
	if n < 16 {
		return c.sec, string(b) == string(c.key[:n])
	}
	k := &c.key
	eq := binary.LittleEndian.Uint64(b) == binary.LittleEndian.Uint64(k[:]) &&
		binary.LittleEndian.Uint64(b[8:]) == binary.LittleEndian.Uint64(k[8:]) &&
		binary.LittleEndian.Uint64(b[n-8:]) == binary.LittleEndian.Uint64(k[n-8:]) &&
		(n <= 24 || binary.LittleEndian.Uint64(b[16:]) == binary.LittleEndian.Uint64(k[16:]))
	return c.sec, eq
}

func (c *timeCache) put(b []byte, sec int64) {
	if len(b) > len(c.key) {
		return
	}
	c.n = copy(c.key[:], b)
	c.sec = sec
}

var months = [...]string{"Jan", "Feb", "Mar", "Apr", "May", "Jun", "Jul", "Aug", "Sep", "Oct", "Nov", "Dec"}

// parseCLF reads the time of the common log format, as nginx's $time_local
// and Apache's %t write it: "10/Oct/2000:13:55:36 -0700", optionally with
// a fraction of a second ("10/Oct/2000:13:55:36.250 -0700").
func (c *timeCache) parseCLF(b []byte) (int64, error) {
	const want = `(want e.g. 10/Oct/2000:13:55:36 -0700)`
	if len(b) < 26 || b[2] != '/' || b[6] != '/' || b[11] != ':' || b[14] != ':' || b[17] != ':' {
		return 0, fmt.Errorf("time %q is not a log time %s", b, want)
	}
	// The cache key is the second and the zone, without any fraction.
	sp := len(b) - 6
	if b[sp] != ' ' {
		return 0, fmt.Errorf("time %q has no zone %s", b, want)
	}
	var ns int64
	if sp > 20 {
		var ok bool
		if b[20] != '.' {
			return 0, fmt.Errorf("time %q is not a log time %s", b, want)
		}
		if ns, ok = fraction(b[21:sp]); !ok {
			return 0, fmt.Errorf("time %q has a bad fraction of a second %s", b, want)
		}
	} else if sp != 20 {
		return 0, fmt.Errorf("time %q is not a log time %s", b, want)
	}
	var key [26]byte
	copy(key[:20], b[:20])
	copy(key[20:], b[sp:])
	if sec, ok := c.get(key[:]); ok {
		return sec*int64(time.Second) + ns, nil
	}
	d, ok1 := digits(b[0:2])
	y, ok2 := digits(b[7:11])
	h, ok3 := digits(b[12:14])
	mi, ok4 := digits(b[15:17])
	s, ok5 := digits(b[18:20])
	off, ok6 := zone(b[sp+1:])
	mo := int64(0)
	for i, m := range months {
		if string(b[3:6]) == m {
			mo = int64(i + 1)
		}
	}
	if !(ok1 && ok2 && ok3 && ok4 && ok5 && ok6) || mo == 0 {
		return 0, fmt.Errorf("time %q is not a log time %s", b, want)
	}
	sec, err := civilSeconds(y, mo, d, h, mi, s)
	if err != nil {
		return 0, fmt.Errorf("time %q: %v", b, err)
	}
	sec -= off
	t, err := toNanos(sec, ns)
	if err != nil {
		return 0, fmt.Errorf("time %q: %v", b, err)
	}
	c.put(key[:], sec)
	return t, nil
}

// parseRFC3339 reads an RFC 3339 time: "2026-03-01T12:00:00Z",
// "2026-03-01T12:00:00.123456+01:00"; a space or a lower-case t may stand
// for the T and a lower-case z for the Z, as RFC 3339 allows.
func (c *timeCache) parseRFC3339(b []byte) (int64, error) {
	const want = `(want RFC 3339, e.g. 2026-03-01T12:00:00.5Z)`
	if len(b) < 20 || b[4] != '-' || b[7] != '-' || b[13] != ':' || b[16] != ':' ||
		(b[10] != 'T' && b[10] != 't' && b[10] != ' ') {
		return 0, fmt.Errorf("time %q is not RFC 3339 %s", b, want)
	}
	rest := b[19:]
	var ns int64
	if rest[0] == '.' {
		// fraction's work, in the one pass that finds the digits' end.
		i := 1
		for ; i < len(rest) && rest[i] >= '0' && rest[i] <= '9'; i++ {
			if i <= 9 {
				ns = ns*10 + int64(rest[i]-'0')
			}
		}
		if i == 1 {
			return 0, fmt.Errorf("time %q has a bad fraction of a second %s", b, want)
		}
		if i < 10 {
			ns *= pow10[10-i]
		}
		rest = rest[i:]
	}
	var off int64
	switch {
	case len(rest) == 1 && (rest[0] == 'Z' || rest[0] == 'z'):
	case len(rest) == 6 && rest[3] == ':':
		var ok bool
		if off, ok = zone(rest); !ok {
			return 0, fmt.Errorf("time %q has a bad zone %s", b, want)
		}
	default:
		return 0, fmt.Errorf("time %q has no zone %s", b, want)
	}
	sec, ok := c.get(b[:19])
	if !ok {
		y, ok1 := digits(b[0:4])
		mo, ok2 := digits(b[5:7])
		d, ok3 := digits(b[8:10])
		h, ok4 := digits(b[11:13])
		mi, ok5 := digits(b[14:16])
		s, ok6 := digits(b[17:19])
		if !(ok1 && ok2 && ok3 && ok4 && ok5 && ok6) {
			return 0, fmt.Errorf("time %q is not RFC 3339 %s", b, want)
		}
		var err error
		if sec, err = civilSeconds(y, mo, d, h, mi, s); err != nil {
			return 0, fmt.Errorf("time %q: %v", b, err)
		}
		c.put(b[:19], sec)
	}
	t, err := toNanos(sec-off, ns)
	if err != nil {
		return 0, fmt.Errorf("time %q: %v", b, err)
	}
	return t, nil
}

// parseNumber reads a number of units since the Unix epoch: "1700000000",
// "1700000000.25", "-5", "1.7e9". A plain decimal is read exactly; one with
// an exponent through float64 (exact to the microsecond for today's
// seconds).
func parseNumber(b []byte, unit time.Duration) (int64, error) {
	const want = `(want a number of seconds since 1970, e.g. 1700000000.25)`
	s := b
	neg := false
	if len(s) > 0 && (s[0] == '-' || s[0] == '+') {
		neg = s[0] == '-'
		s = s[1:]
	}
	if bytes.ContainsAny(s, "eE") {
		f, err := strconv.ParseFloat(string(b), 64)
		if err != nil || math.IsNaN(f) || math.IsInf(f, 0) {
			return 0, fmt.Errorf("time %q is not a number %s", b, want)
		}
		ns := f * float64(unit)
		if ns < math.MinInt64 || ns >= math.MaxInt64 {
			return 0, fmt.Errorf("time %q: %v", b, errTimeRange)
		}
		return int64(ns), nil
	}
	ip, fp := s, []byte(nil)
	if i := bytes.IndexByte(s, '.'); i >= 0 {
		ip, fp = s[:i], s[i+1:]
	}
	if len(ip) == 0 || len(bytes.Trim(ip, "0123456789")) > 0 {
		return 0, fmt.Errorf("time %q is not a number %s", b, want)
	}
	n, err := strconv.ParseInt(string(ip), 10, 64)
	if err != nil {
		return 0, fmt.Errorf("time %q: %v", b, errTimeRange)
	}
	var frac int64
	if fp != nil {
		// frac × unit / 10^k is exact and fits: frac < 10^9 and unit ≤ 1s.
		f, ok := fraction(fp)
		if !ok {
			return 0, fmt.Errorf("time %q is not a number %s", b, want)
		}
		frac = f * int64(unit) / int64(time.Second)
	}
	if n > (math.MaxInt64-frac)/int64(unit) {
		return 0, fmt.Errorf("time %q: %v", b, errTimeRange)
	}
	ns := n*int64(unit) + frac
	if neg {
		ns = -ns
	}
	return ns, nil
}

// parseAnyTime reads a timestamp of a JSON or CSV log, which may be
// written in any of the ways a logger writes one: RFC 3339, the common log
// format's, or a number of units since 1970.
func (c *timeCache) parseAnyTime(b []byte, unit time.Duration) (int64, error) {
	if len(b) >= 10 && b[4] == '-' {
		return c.parseRFC3339(b)
	}
	if len(b) >= 26 && b[2] == '/' {
		return c.parseCLF(b)
	}
	if len(b) > 0 && (b[0] == '-' || b[0] == '+' || b[0] == '.' || (b[0] >= '0' && b[0] <= '9')) {
		return parseNumber(b, unit)
	}
	return 0, fmt.Errorf("time %q is not a timestamp (want RFC 3339, e.g. 2026-03-01T12:00:00Z, or seconds since 1970)", b)
}
