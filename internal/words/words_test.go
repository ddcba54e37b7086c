package words

import (
	"fmt"
	"math"
	"testing"
	"time"
)

// A row is one input to a function and what it must write for it.
type row[In any] struct {
	in   In
	want string
}

// table checks f against every row, naming the function and the input in
// a failure.
func table[In any](t *testing.T, name string, f func(In) string, rows []row[In]) {
	t.Helper()
	for _, r := range rows {
		if got := f(r.in); got != r.want {
			t.Errorf("%s(%v) = %q, want %q", name, r.in, got, r.want)
		}
	}
}

func TestThousands(t *testing.T) {
	table(t, "Thousands", Thousands, []row[int64]{
		{0, "0"}, {999, "999"}, {1000, "1,000"}, {158008, "158,008"}, {-1234567, "-1,234,567"},
		{math.MaxInt64, "9,223,372,036,854,775,807"}, {math.MinInt64, "-9,223,372,036,854,775,808"},
	})
}

func TestBytes(t *testing.T) {
	table(t, "Bytes", Bytes, []row[int64]{
		{-1, "0 B"}, {0, "0 B"}, {512, "512 B"}, {1024, "1.0 KiB"}, {3355443, "3.2 MiB"}, {14 << 30, "14 GiB"}, {4 << 30, "4.0 GiB"},
	})
}

func TestDuration(t *testing.T) {
	table(t, "Duration", Duration, []row[time.Duration]{
		{0, "0s"}, {250 * time.Millisecond, "250ms"}, {1500 * time.Millisecond, "1.5s"}, {20 * time.Second, "20s"},
		{10 * time.Minute, "10m"}, {90 * time.Second, "1m30s"}, {6 * time.Hour, "6h"}, {24 * time.Hour, "24h"},
		{time.Hour + time.Minute, "1h1m"}, {time.Hour + time.Second, "1h0m1s"},
	})
}

func TestRate(t *testing.T) {
	table(t, "Rate", Rate, []row[float64]{
		{10, "10/s"}, {0.5, "30/m"}, {100.0 / 60, "100/m"}, {5000.0 / 3600, "5000/h"}, {1.0 / 86400, "1/d"}, {0.3, "18/m"},
		{1.0 / 7, "0.1429/s"}, {0, "0/s"},
	})
}

func TestConcurrency(t *testing.T) {
	type limit struct {
		maxInFlight int64
		leaseS      float64
	}
	table(t, "Concurrency", func(l limit) string { return Concurrency(l.maxInFlight, l.leaseS) }, []row[limit]{
		{limit{10, 20}, "at most 10 in flight, leases of 20s"},
		{limit{1500, 600}, "at most 1,500 in flight, leases of 10m"},
		{limit{1, 0.25}, "at most 1 in flight, leases of 250ms"},
	})
}

// noun is Plural's and Count's input: n things called one or many.
type noun struct {
	n         int64
	one, many string
}

func TestPlural(t *testing.T) {
	table(t, "Plural", func(w noun) string { return Plural(w.n, w.one, w.many) }, []row[noun]{
		{noun{0, "request", "requests"}, "requests"},
		{noun{1, "request", "requests"}, "request"},
		{noun{2, "retry", "retries"}, "retries"},
		{noun{1, "breach", "breaches"}, "breach"},
		{noun{3, "breach", "breaches"}, "breaches"},
		{noun{-1, "server", "servers"}, "servers"},
	})
}

func TestCount(t *testing.T) {
	rows := []row[noun]{
		{noun{0, "request", "requests"}, "0 requests"},
		{noun{1, "request", "requests"}, "1 request"},
		{noun{2, "retry", "retries"}, "2 retries"},
		{noun{1234, "lease", "leases"}, "1,234 leases"},
		{noun{-1, "server", "servers"}, "-1 servers"},
	}
	table(t, "Count", func(w noun) string { return Count(w.n, w.one, w.many) }, rows)
	// An int says what an int64 of the same value does.
	table(t, "Count(int)", func(w noun) string { return Count(int(w.n), w.one, w.many) }, rows)
}

func ExampleCount() {
	fmt.Println(Count(1, "retry", "retries"))
	fmt.Println(Count(int64(158008), "request", "requests"))
	fmt.Printf("%d %s\n", 2, Plural(2, "server", "servers"))
	// Output:
	// 1 retry
	// 158,008 requests
	// 2 servers
}

func TestOneOf(t *testing.T) {
	table(t, "OneOf", OneOf[string], []row[[]string]{
		{nil, ""}, {[]string{"local"}, "local"}, {[]string{"memory", "miniredis"}, "memory or miniredis"},
		{[]string{"local", "shared", "racy", "split-brain"}, "local, shared, racy or split-brain"},
	})
}

func TestShellWord(t *testing.T) {
	table(t, "ShellWord", ShellWord, []row[string]{
		{"sim", "sim"},
		{"--set", "--set"},
		{"limit.burst=20", "limit.burst=20"},
		{"10/s,600/m", "10/s,600/m"},
		{"", "''"},
		{"clients[web-{i}].name=b-{i}", "'clients[web-{i}].name=b-{i}'"},
		{"topology={kind: shared, rtt: 1ms}", "'topology={kind: shared, rtt: 1ms}'"},
		{"it's", `'it'\''s'`},
		{"a*b", "'a*b'"},
		{"$HOME", "'$HOME'"},
	})
}

func TestFigure(t *testing.T) {
	table(t, "Figure", Figure, []row[float64]{
		{0, "0"}, {250, "250"}, {1000, "1,000"}, {2268, "2,268"}, {-3, "-3"},
		{0.5, "0.5"}, {10.3333333, "10.33"}, {1e20, "1e+20"},
		{math.NaN(), "—"}, {math.Inf(1), "—"}, {math.Inf(-1), "—"},
	})
}
