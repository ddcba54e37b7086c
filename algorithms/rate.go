package algorithms

import (
	"errors"
	"fmt"
	"math"
	"strconv"
	"strings"
	"time"
)

// Rate is N events per Per: 10/s, 100/m, 5000/h. It is kept as a fraction,
// not a float, so that 1/3 of a second is exact and a bucket never drifts.
type Rate struct {
	N   int64
	Per time.Duration
}

// PerSecond returns the rate in events per second, for display and JSON.
func (r Rate) PerSecond() float64 {
	if r.Per <= 0 {
		return 0
	}
	return float64(r.N) / r.Per.Seconds()
}

// String formats r the way ParseRate reads it.
func (r Rate) String() string {
	switch r.Per {
	case time.Second:
		return fmt.Sprintf("%d/s", r.N)
	case time.Minute:
		return fmt.Sprintf("%d/m", r.N)
	case time.Hour:
		return fmt.Sprintf("%d/h", r.N)
	}
	return fmt.Sprintf("%d/%s", r.N, r.Per)
}

// ParsePeriod reads what follows a rate's slash: s, m or h (sec, min,
// hour and their long names too) or a positive Go duration ("500ms"); ok
// is false for anything else, which each caller words in its own message.
func ParsePeriod(unit string) (per time.Duration, ok bool) {
	switch unit {
	case "s", "sec", "second":
		return time.Second, true
	case "m", "min", "minute":
		return time.Minute, true
	case "h", "hour":
		return time.Hour, true
	}
	d, err := time.ParseDuration(unit)
	if err != nil || d <= 0 {
		return 0, false
	}
	return d, true
}

// ParseRate reads a rate: "10/s", "100/m", "5000/h", "3/500ms" (a Go
// duration after the slash), or a bare "10" meaning per second.
func ParseRate(s string) (Rate, error) {
	text := strings.TrimSpace(s)
	num, unit, hasUnit := strings.Cut(text, "/")
	n, err := strconv.ParseInt(strings.TrimSpace(num), 10, 64)
	if errors.Is(err, strconv.ErrRange) {
		return Rate{}, fmt.Errorf("%q: the count is too large (want at most %d a period)", s, int64(math.MaxInt64))
	}
	if err != nil {
		return Rate{}, fmt.Errorf("%q is not a rate (want e.g. 100/s, 60/m or 5000/h)", s)
	}
	per := time.Second
	if hasUnit {
		u := strings.TrimSpace(unit)
		var ok bool
		if per, ok = ParsePeriod(u); !ok {
			return Rate{}, fmt.Errorf("%q: unknown rate unit %q (want s, m, h or a duration such as 500ms)", s, u)
		}
	}
	if n <= 0 {
		return Rate{}, fmt.Errorf("%q: a rate must be positive", s)
	}
	return Rate{N: n, Per: per}, nil
}
