package words

import (
	"fmt"
	"math"
	"testing"
	"time"
)

func TestThousands(t *testing.T) {
	for _, tt := range []struct {
		n    int64
		want string
	}{
		{0, "0"}, {999, "999"}, {1000, "1,000"}, {158008, "158,008"}, {-1234567, "-1,234,567"},
		{math.MaxInt64, "9,223,372,036,854,775,807"}, {math.MinInt64, "-9,223,372,036,854,775,808"},
	} {
		if got := Thousands(tt.n); got != tt.want {
			t.Errorf("Thousands(%d) = %q, want %q", tt.n, got, tt.want)
		}
	}
}

func TestBytes(t *testing.T) {
	for _, tt := range []struct {
		n    int64
		want string
	}{
		{-1, "0 B"}, {0, "0 B"}, {512, "512 B"}, {1024, "1.0 KiB"}, {3355443, "3.2 MiB"}, {14 << 30, "14 GiB"}, {4 << 30, "4.0 GiB"},
	} {
		if got := Bytes(tt.n); got != tt.want {
			t.Errorf("Bytes(%d) = %q, want %q", tt.n, got, tt.want)
		}
	}
}

func TestDuration(t *testing.T) {
	for _, tt := range []struct {
		d    time.Duration
		want string
	}{
		{0, "0s"}, {250 * time.Millisecond, "250ms"}, {1500 * time.Millisecond, "1.5s"}, {20 * time.Second, "20s"},
		{10 * time.Minute, "10m"}, {90 * time.Second, "1m30s"}, {6 * time.Hour, "6h"}, {24 * time.Hour, "24h"},
		{time.Hour + time.Minute, "1h1m"}, {time.Hour + time.Second, "1h0m1s"},
	} {
		if got := Duration(tt.d); got != tt.want {
			t.Errorf("Duration(%v) = %q, want %q", tt.d, got, tt.want)
		}
	}
}

func TestRate(t *testing.T) {
	for _, tt := range []struct {
		perS float64
		want string
	}{
		{10, "10/s"}, {0.5, "30/m"}, {100.0 / 60, "100/m"}, {5000.0 / 3600, "5000/h"}, {1.0 / 86400, "1/d"}, {0.3, "18/m"}, {1.0 / 7, "0.1429/s"},
		{0, "0/s"},
	} {
		if got := Rate(tt.perS); got != tt.want {
			t.Errorf("Rate(%v) = %q, want %q", tt.perS, got, tt.want)
		}
	}
}

func TestConcurrency(t *testing.T) {
	for _, tt := range []struct {
		maxInFlight int64
		leaseS      float64
		want        string
	}{
		{10, 20, "at most 10 in flight, leases of 20s"},
		{1500, 600, "at most 1,500 in flight, leases of 10m"},
		{1, 0.25, "at most 1 in flight, leases of 250ms"},
	} {
		if got := Concurrency(tt.maxInFlight, tt.leaseS); got != tt.want {
			t.Errorf("Concurrency(%d, %v) = %q, want %q", tt.maxInFlight, tt.leaseS, got, tt.want)
		}
	}
}

func TestPluralAndCount(t *testing.T) {
	for _, tt := range []struct {
		n           int64
		one, many   string
		plural, cnt string
	}{
		{0, "request", "requests", "requests", "0 requests"},
		{1, "request", "requests", "request", "1 request"},
		{2, "retry", "retries", "retries", "2 retries"},
		{1, "breach", "breaches", "breach", "1 breach"},
		{3, "breach", "breaches", "breaches", "3 breaches"},
		{1234, "lease", "leases", "leases", "1,234 leases"},
		{-1, "server", "servers", "servers", "-1 servers"},
	} {
		if got := Plural(tt.n, tt.one, tt.many); got != tt.plural {
			t.Errorf("Plural(%d, %q, %q) = %q, want %q", tt.n, tt.one, tt.many, got, tt.plural)
		}
		if got := Count(tt.n, tt.one, tt.many); got != tt.cnt {
			t.Errorf("Count(%d, %q, %q) = %q, want %q", tt.n, tt.one, tt.many, got, tt.cnt)
		}
		// An int says the same as an int64.
		if got := Count(int(tt.n), tt.one, tt.many); got != tt.cnt {
			t.Errorf("Count(int(%d), %q, %q) = %q, want %q", tt.n, tt.one, tt.many, got, tt.cnt)
		}
	}
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
