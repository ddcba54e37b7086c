package main

// The values of a swept field, as `ratelim sweep` (and `sim --sweep`)
// read them. One grammar, every value text: a range is expanded here
// into the texts it stands for, each written in the unit typed, and each
// text is then read by the field's own reader, as if it had been typed
// one by one. So a range cannot give a value the field would refuse
// typed by hand, and a field's bounds are its own.
//
//	VALUES = ITEM { "," ITEM }          at most maxSweepValues in all
//	ITEM   = VALUE                      as the field reads it: 8, 100ms, never, {…}
//	       | A ".." B                   whole numbers A, A+1, …, B
//	       | A ".." B "+" S             A, A+S, A+2S, … up to B (B when hit)
//	       | A ".." B "*" K             A, A·K, A·K², … up to B (B when hit), K > 1
//
// A, B and S are a decimal number and a unit: none (8), a duration's (ns,
// us, µs, ms, s, m, h) or a rate's (/s, /m, /h, or /DURATION). B and S may
// be in another unit of the same kind (1ms..10s); the values are in A's:
// a rate keeps A's period (10/s..80/s*2 is 10/s, 20/s, 40/s, 80/s), a
// duration is written as Go writes it (1ms..10s*10 is 1ms, 10ms, 100ms,
// 1s, 10s). The arithmetic is exact (decimal fractions, math/big): 0.1
// steps of 0.1 reach 1 exactly. A comma inside brackets or braces is the
// value's own ({pattern: constant, rate: 5/s}).

import (
	"fmt"
	"math"
	"math/big"
	"regexp"
	"strings"
	"time"

	"github.com/ratelim/ratelim/algorithms"
)

// quantity is a range's operand: a decimal number in a unit, and what one
// of that unit is in its kind's base (a nanosecond, one a second), so
// that 1ms and 10s compare.
type quantity struct {
	num  *big.Rat // as typed, in unit
	unit string   // as typed: "", "ms", "/s"
	kind string   // "number", "duration" or "rate"
	per  *big.Rat // one unit in the kind's base
	base *big.Rat // num·per
}

// operand reads "100ms", "10/s", "8", "1.5": digits, an optional
// fraction, then a unit. A sign, an exponent or a compound duration
// (1m30s) is no operand.
var operand = regexp.MustCompile(`^([0-9]{1,18}(?:\.[0-9]{1,9})?)(.*)$`)

// digits are an operand's whole and fraction digits, however many.
var digits = regexp.MustCompile(`^([0-9]+)(?:\.([0-9]+))?`)

// durationUnits are the units of a duration, in nanoseconds.
var durationUnits = map[string]int64{"ns": 1, "us": 1e3, "µs": 1e3, "μs": 1e3, "ms": 1e6, "s": 1e9, "m": 60e9, "h": 3600e9}

// parseQuantity reads one operand of a range; what names the range in an
// error.
func parseQuantity(text, what string) (quantity, error) {
	if d := digits.FindStringSubmatch(text); d != nil && (len(d[1]) > 18 || len(d[2]) > 9) {
		return quantity{}, fmt.Errorf("%s: %q has too many digits (want at most 18 before the point and 9 after)", what, text)
	}
	m := operand.FindStringSubmatch(text)
	if m == nil {
		return quantity{}, fmt.Errorf("%s: %q is not a number with a unit (want e.g. 8, 100ms or 10/s)", what, text)
	}
	q := quantity{num: new(big.Rat), unit: m[2]}
	q.num.SetString(m[1])
	q.per = big.NewRat(1, 1)
	switch per, isRate := strings.CutPrefix(q.unit, "/"); {
	case q.unit == "":
		q.kind = "number"
	case durationUnits[q.unit] > 0:
		q.kind, q.per = "duration", big.NewRat(durationUnits[q.unit], 1)
	case isRate:
		// A rate compares per second: n per period is n·10⁹/period_ns a
		// second.
		period, ok := algorithms.ParsePeriod(per)
		if !ok {
			return quantity{}, fmt.Errorf("%s: %q has an unknown rate unit %q (want s, m, h or a duration such as 500ms)", what, text, per)
		}
		q.kind, q.per = "rate", big.NewRat(int64(time.Second), int64(period))
	default:
		return quantity{}, fmt.Errorf("%s: %q is not a number with a unit (want e.g. 8, 100ms or 10/s)", what, text)
	}
	q.base = new(big.Rat).Mul(q.num, q.per)
	return q, nil
}

// zeroOf is 0 in q's unit: what a unit-less 0 stands for beside q.
func zeroOf(q quantity) quantity {
	z := q
	z.num, z.base = new(big.Rat), new(big.Rat)
	return z
}

// exampleOf is a value of each kind, for messages.
var exampleOf = map[string]string{"number": "2", "duration": "100ms", "rate": "10/s"}

// text writes v, in q's base unit, as a value in q's unit: a duration as
// Go writes it, anything else as the decimal it is and q's unit.
func (q quantity) text(v *big.Rat) (string, error) {
	if q.kind == "duration" {
		if !v.IsInt() {
			return "", fmt.Errorf("%s ns is not a whole nanosecond (want a step or factor that keeps whole nanoseconds)", decimalText(v))
		}
		if !v.Num().IsInt64() {
			return "", fmt.Errorf("%s ns is too long a duration (want at most %s)", decimalText(v), time.Duration(math.MaxInt64))
		}
		return time.Duration(v.Num().Int64()).String(), nil
	}
	return decimalText(new(big.Rat).Quo(v, q.per)) + q.unit, nil
}

// decimalText writes r, a decimal fraction, in the fewest digits that
// are exactly it: 0.3, not 0.30000000000000004.
func decimalText(r *big.Rat) string {
	for prec := 0; prec < 40; prec++ {
		s := r.FloatString(prec)
		if back, ok := new(big.Rat).SetString(s); ok && back.Cmp(r) == 0 {
			return s
		}
	}
	return r.FloatString(40)
}

// expandValues reads a field's VALUES (the grammar above) into the texts
// of its values, in order: at most limit of them, none empty, none the
// same text twice. field names it in errors: "sweep burst: …".
func expandValues(field, list string, limit int) ([]string, error) {
	if strings.TrimSpace(list) == "" {
		return nil, badInput("%s: no values (want V1,V2,... or A..B, e.g. %s=1..8)", field, strings.TrimPrefix(field, "sweep "))
	}
	items := splitTopLevel(list)
	var values []string
	seen := map[string]bool{}
	for i, item := range items {
		item = strings.TrimSpace(item)
		if item == "" {
			return nil, badInput("%s: value %d of %d is empty (want V1,V2,... with no empty one)", field, i+1, len(items))
		}
		texts := []string{item}
		if a, rest, isRange := strings.Cut(item, ".."); isRange && !strings.ContainsAny(item, "[{") {
			var err error
			if texts, err = expandRange(item, a, rest, limit); err != nil {
				return nil, badInput("%s: %v", field, err)
			}
		}
		values = append(values, texts...)
	}
	if len(values) > limit {
		return nil, badInput("%s: %d values (want at most %d)", field, len(values), limit)
	}
	for _, v := range values {
		if seen[v] {
			return nil, badInput("%s: %s given twice (want each value once)", field, v)
		}
		seen[v] = true
	}
	return values, nil
}

// splitTopLevel splits s at its commas outside brackets and braces.
func splitTopLevel(s string) []string {
	var items []string
	depth, start := 0, 0
	for i, r := range s {
		switch r {
		case '[', '{':
			depth++
		case ']', '}':
			depth = max(depth-1, 0)
		case ',':
			if depth == 0 {
				items = append(items, s[start:i])
				start = i + 1
			}
		}
	}
	return append(items, s[start:])
}

// expandRange is the values of item, "A..B", "A..B+S" or "A..B*K" (a
// and rest are its halves at ".."); more than limit of them are refused
// without making them all.
func expandRange(item, a, rest string, limit int) ([]string, error) {
	what := fmt.Sprintf("%q", item)
	b, step, op := rest, "", byte(0)
	if i := strings.LastIndexAny(rest, "+*"); i >= 0 {
		b, step, op = rest[:i], rest[i+1:], rest[i]
	}
	from, err := parseQuantity(a, what)
	if err != nil {
		return nil, err
	}
	to, err := parseQuantity(b, what)
	if err != nil {
		return nil, err
	}
	// A bare 0 is 0 of any kind: 0..1s+100ms.
	if from.kind == "number" && from.base.Sign() == 0 && to.kind != "number" {
		from = zeroOf(to)
	}
	if from.kind != to.kind {
		return nil, fmt.Errorf("%s: %s and %s are not of one kind (want A and B both a %s)", what, a, b, from.kind)
	}
	if from.base.Cmp(to.base) > 0 {
		return nil, fmt.Errorf("%s: %s is more than %s (want A..B with A at most B)", what, a, b)
	}
	var values []*big.Rat // in the base unit
	next := func(v *big.Rat) error {
		if len(values) == limit {
			return fmt.Errorf("%s: more than %d values (want at most %d)", what, limit, limit)
		}
		values = append(values, v)
		return nil
	}
	switch op {
	case 0:
		if from.kind != "number" || !from.num.IsInt() || !to.num.IsInt() {
			return nil, fmt.Errorf("%s: A..B counts whole numbers (want a step: A..B+S, or A..B*K)", what)
		}
		op, step = '+', "1"
		fallthrough
	case '+':
		s, err := parseQuantity(step, what)
		if err != nil {
			return nil, err
		}
		if s.kind != from.kind {
			return nil, fmt.Errorf("%s: the step %s is not a %s as %s is (want a step in a %s's unit, e.g. %s)", what, step, from.kind, a, from.kind, exampleOf[from.kind])
		}
		if s.base.Sign() <= 0 {
			return nil, fmt.Errorf("%s: a step of %s never gets to %s (want a step more than 0)", what, step, b)
		}
		for v := new(big.Rat).Set(from.base); v.Cmp(to.base) <= 0; v = new(big.Rat).Add(v, s.base) {
			if err := next(v); err != nil {
				return nil, err
			}
		}
	case '*':
		k, ok := new(big.Rat).SetString(step)
		if !ok || !operand.MatchString(step) || operand.FindStringSubmatch(step)[2] != "" {
			return nil, fmt.Errorf("%s: the factor %q is not a number (want A..B*K, e.g. 1ms..10s*10)", what, step)
		}
		if k.Cmp(big.NewRat(1, 1)) <= 0 {
			return nil, fmt.Errorf("%s: a factor of %s never gets to %s (want a factor more than 1)", what, step, b)
		}
		if from.base.Sign() == 0 {
			return nil, fmt.Errorf("%s: 0 times %s is 0 again (want A more than 0)", what, step)
		}
		for v := new(big.Rat).Set(from.base); v.Cmp(to.base) <= 0; v = new(big.Rat).Mul(v, k) {
			if err := next(v); err != nil {
				return nil, err
			}
		}
	}
	texts := make([]string, len(values))
	for i, v := range values {
		if texts[i], err = from.text(v); err != nil {
			return nil, fmt.Errorf("%s: value %d: %v", what, i+1, err)
		}
	}
	return texts, nil
}
