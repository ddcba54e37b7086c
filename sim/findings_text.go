package sim

// How findings say things: lists of names, counts, shares, ratios.

import (
	"fmt"
	"math"
	"regexp"
	"strconv"
	"strings"

	"github.com/ratelim/ratelim/internal/words"
)

var numbered = regexp.MustCompile(`^(.*?)(\d+)$`)

// nameList names clients for a sentence: "office-1…10" for a numbered run
// of one prefix, else "a, b and c", or the first three "and 5 others".
func nameList(names []string) string {
	if len(names) > 2 {
		var prefix string
		first, last := 0, 0
		run := true
		for i, n := range names {
			m := numbered.FindStringSubmatch(n)
			if m == nil {
				run = false
				break
			}
			v, err := strconv.Atoi(m[2])
			if err != nil || (i > 0 && (m[1] != prefix || v != last+1)) {
				run = false
				break
			}
			if i == 0 {
				prefix, first = m[1], v
			}
			last = v
		}
		if run {
			return fmt.Sprintf("%s%d…%d", prefix, first, last)
		}
	}
	switch {
	case len(names) == 1:
		return names[0]
	case len(names) <= 3:
		return strings.Join(names[:len(names)-1], ", ") + " and " + names[len(names)-1]
	default:
		return fmt.Sprintf("%s and %d others", strings.Join(names[:3], ", "), len(names)-3)
	}
}

func their(n int) string {
	if n == 1 {
		return "its"
	}
	return "their"
}

func requests(n int64) string { return words.Count(n, "request", "requests") }

func admittedCount(n int64) string {
	switch n {
	case 0:
		return "none were"
	case 1:
		return "1 was"
	}
	return words.Thousands(n) + " were"
}

// percentOf is a share as percent does it.
func percentOf(share float64) string { return percent(int64(math.Round(share*1e6)), 1e6) }

// percent is part of whole as "99%", or "<1%" and ">99%" near the ends so
// that a rounded figure never claims all or nothing.
func percent(part, whole int64) string {
	if whole == 0 {
		return "0%"
	}
	p := 100 * float64(part) / float64(whole)
	switch {
	case part > 0 && p < 1:
		return "<1%"
	case part < whole && p > 99:
		return ">99%"
	}
	return fmt.Sprintf("%.0f%%", p)
}

func times(ratio float64) string { return fmt.Sprintf("%.2f×", ratio) }

func round2(v float64) float64 { return math.Round(v*100) / 100 }
