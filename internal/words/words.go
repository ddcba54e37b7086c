// Package words writes numbers, sizes, durations, rates and counts the way
// ratelim says them to a person: 158,008 requests, 3.2 MiB, 6h, 100/m,
// 1 retry. Every view (the findings, the table, the HTML page, the plots,
// the TUI, the CLI's messages) writes a figure through it, so that a
// figure reads the same wherever it appears.
//
// It takes plain values (an int64, a time.Duration, a rate per second),
// never a ratelim type, and imports no ratelim package: any package may
// import it. What describes one of the simulator's types (a limit, a
// store) is a method of that type in sim, written with these words.
package words

import (
	"fmt"
	"math"
	"strconv"
	"strings"
	"time"

	"github.com/dustin/go-humanize"
)

// Thousands writes n with a comma every three digits: 158,008.
func Thousands(n int64) string { return humanize.Comma(n) }

// Bytes writes n bytes for a person, in powers of 1024: 512 B, 3.2 MiB,
// 14 GiB. A negative n is 0 B.
func Bytes(n int64) string { return humanize.IBytes(uint64(max(n, 0))) }

// Duration is d as a person writes it: 6h, not 6h0m0s; 10m, not 10m0s.
// What time.Duration.String writes otherwise (1.5s, 250ms) is kept.
func Duration(d time.Duration) string {
	t := d.String()
	if strings.HasSuffix(t, "m0s") {
		t = strings.TrimSuffix(t, "0s")
	}
	if strings.HasSuffix(t, "h0m") {
		t = strings.TrimSuffix(t, "0m")
	}
	return t
}

// Rate writes a rate kept per second in the unit it was most likely given
// in: 100/m, not 1.6666666666666667/s. A rate that is whole in none of
// /s, /m, /h, /d is written to four figures a second: 0.1429/s.
func Rate(perS float64) string {
	for _, u := range []struct {
		seconds float64
		unit    string
	}{{1, "/s"}, {60, "/m"}, {3600, "/h"}, {86400, "/d"}} {
		n := perS * u.seconds
		if r := math.Round(n); r >= 1 && math.Abs(n-r) < 1e-9*r {
			return strconv.FormatFloat(r, 'f', -1, 64) + u.unit
		}
	}
	return strconv.FormatFloat(perS, 'g', 4, 64) + "/s"
}

// Concurrency says a concurrency limit from its two figures, the most
// requests in flight at once and a lease's lifetime in seconds: "at most
// 10 in flight, leases of 20s".
func Concurrency(maxInFlight int64, leaseS float64) string {
	return fmt.Sprintf("at most %s in flight, leases of %s", Thousands(maxInFlight), Duration(time.Duration(leaseS*float64(time.Second))))
}

// Plural is the noun for n things: one when n is 1, many otherwise (0
// servers, 2 breaches). The caller writes the number, as it wants it:
//
//	fmt.Sprintf("%d %s", n, words.Plural(n, "server", "servers"))
func Plural[N ~int | ~int64](n N, one, many string) string {
	if n == 1 {
		return one
	}
	return many
}

// Count is n things, the number written by Thousands: "1 request",
// "0 requests", "1,234 retries".
func Count[N ~int | ~int64](n N, one, many string) string {
	return Thousands(int64(n)) + " " + Plural(n, one, many)
}

// OneOf is a list of choices as an error's "want" says them: "a, b or c";
// the one choice alone; "" for none.
func OneOf[S ~string](choices []S) string {
	names := make([]string, len(choices))
	for i, c := range choices {
		names[i] = string(c)
	}
	if len(names) < 2 {
		return strings.Join(names, "")
	}
	return strings.Join(names[:len(names)-1], ", ") + " or " + names[len(names)-1]
}

// ShellWord is s as a POSIX shell reads it back: as is when every
// character is one no shell treats specially (letters, digits and
// -_./:=,+@%), else single-quoted (a quote inside is closed, escaped
// and reopened), the empty word as two quotes. zsh's globs ([, ], *, ?),
// bash's braces and a space all quote, so that
//
//	--set 'clients[web-{i}].name=b-{i}'
//
// pastes into any shell.
func ShellWord(s string) string {
	if s != "" && strings.Trim(s, "abcdefghijklmnopqrstuvwxyzABCDEFGHIJKLMNOPQRSTUVWXYZ0123456789-_./:=,+@%") == "" {
		return s
	}
	return "'" + strings.ReplaceAll(s, "'", `'\''`) + "'"
}

// Figure is a figure as the CLI's tables write one: a whole number with
// thousands separators (1,000), anything else to four significant
// figures (0.5, 10.33); "—" for a figure that is no number (NaN, or an
// infinity: a rate over no time), as a table writes a missing one.
func Figure(v float64) string {
	switch {
	case math.IsNaN(v) || math.IsInf(v, 0):
		return "—"
	case v == math.Trunc(v) && math.Abs(v) < 1e15:
		return Thousands(int64(v))
	}
	return strconv.FormatFloat(v, 'g', 4, 64)
}
