package trace_test

import (
	"fmt"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/ratelim/ratelim/trace"

	"pgregory.net/rapid"
)

// The resolution of a log is what its times hold, whatever the format
// could write: the gcd of their parts below the second.
func TestResolutionPerFormat(t *testing.T) {
	combined := func(stamps ...string) string {
		var b strings.Builder
		for _, s := range stamps {
			fmt.Fprintf(&b, "192.0.2.1 - - [01/Dec/2026:10:00:%s +0000] \"GET / HTTP/1.1\" 200 1 \"-\" \"ua\"\n", s)
		}
		return b.String()
	}
	alb := func(stamps ...string) string {
		var b strings.Builder
		for _, s := range stamps {
			// The arrival is request_creation_time, the 22nd field.
			fmt.Fprintf(&b, "https 2026-12-01T10:00:01.000000Z app/lb/1 192.0.2.1:5 10.0.0.1:80 0.000 0.001 0.000 200 200 1 1 \"GET https://x:443/ HTTP/1.1\" \"ua\" - - - \"-\" \"-\" \"-\" 0 2026-12-01T10:00:%sZ \"forward\" \"-\" \"-\" \"-\" \"200\" \"-\" \"-\" -\n", s)
		}
		return b.String()
	}
	jsonl := func(stamps ...string) string {
		var b strings.Builder
		for _, s := range stamps {
			fmt.Fprintf(&b, "{\"time\": %s, \"key\": \"k\"}\n", s)
		}
		return b.String()
	}
	tests := []struct {
		name   string
		format trace.Format
		log    string
		want   time.Duration
		text   string
		opts   func(*trace.Options)
	}{
		{"combined whole seconds", trace.Combined, combined("00", "00", "01", "05"), time.Second, "whole-second times", nil},
		{"combined .250", trace.Combined, combined("00.250", "00.500", "01.750", "02"), 250 * time.Millisecond, "millisecond times", nil},
		{"jsonl milliseconds", trace.JSONL, jsonl(`"2026-12-01T10:00:00.001Z"`, `"2026-12-01T10:00:00.400Z"`), time.Millisecond, "millisecond times", nil},
		{"jsonl padded .000 is whole seconds", trace.JSONL, jsonl(`"2026-12-01T10:00:00.000Z"`, `"2026-12-01T10:00:07.000Z"`), time.Second, "whole-second times", nil},
		{"alb microseconds", trace.ALB, alb("00.094001", "00.120000"), time.Microsecond, "microsecond times", nil},
		{"numeric epoch seconds", trace.JSONL, jsonl("1764583200", "1764583201", "1764583209"), time.Second, "whole-second times", nil},
		{"numeric epoch fractions", trace.JSONL, jsonl("1764583200.5", "1764583200.75"), 250 * time.Millisecond, "millisecond times", nil},
		// Only the requests replayed count: a filtered-out line's
		// milliseconds, or a keyless request's, say nothing of them.
		{"filtered out lines do not count", trace.JSONL,
			"{\"time\":\"2026-12-01T10:00:00Z\",\"key\":\"a\",\"path\":\"/api/x\"}\n{\"time\":\"2026-12-01T10:00:00.123Z\",\"key\":\"b\",\"path\":\"/web\"}\n{\"time\":\"2026-12-01T10:00:01Z\",\"key\":\"a\",\"path\":\"/api/x\"}\n",
			time.Second, "whole-second times", func(o *trace.Options) { o.PathPrefix = "/api/" }},
		{"keyless requests do not count", trace.JSONL,
			"{\"time\":\"2026-12-01T10:00:00Z\",\"key\":\"a\"}\n{\"time\":\"2026-12-01T10:00:00.123Z\"}\n{\"time\":\"2026-12-01T10:00:01Z\",\"key\":\"a\"}\n",
			time.Second, "whole-second times", nil},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			opts := trace.Options{Format: tt.format}
			if tt.opts != nil {
				tt.opts(&opts)
			}
			r := newReader(t, tt.log, opts)
			readAll(t, r)
			got := r.Stats().Resolution
			if got != tt.want {
				t.Errorf("resolution %v, want %v", got, tt.want)
			}
			if text := trace.ResolutionText(got); text != tt.text {
				t.Errorf("said %q, want %q", text, tt.text)
			}
		})
	}
}

// spreadLog is a combined log, at whole seconds, of the keys' requests:
// counts[s][k] requests of key k in second s.
func spreadLog(counts [][]int) string {
	var b strings.Builder
	for s, row := range counts {
		for k, n := range row {
			for range n {
				fmt.Fprintf(&b, "192.0.2.%d - - [01/Dec/2026:10:%02d:%02d +0000] \"GET / HTTP/1.1\" 200 1 \"-\" \"ua\"\n", k+1, s/60, s%60)
			}
		}
	}
	return b.String()
}

// Spread spaces a key's requests of a tick evenly across it, in their
// order, from an offset: over random whole-second logs, every request
// stays in its second, a key's n requests of a second are tick/n apart
// (to the nanosecond), the requests come out in time order, the same
// seed gives the same times and another seed other ones, and the
// resolution is still the log's own.
func TestSpreadSpacesEachKeysTick(t *testing.T) {
	rapid.Check(t, func(t *rapid.T) {
		secs := rapid.IntRange(1, 5).Draw(t, "seconds")
		keys := rapid.IntRange(1, 4).Draw(t, "keys")
		counts := make([][]int, secs)
		for s := range counts {
			counts[s] = rapid.SliceOfN(rapid.IntRange(0, 7), keys, keys).Draw(t, "counts")
		}
		log := spreadLog(counts)
		seed := rapid.Uint64().Draw(t, "seed")
		read := func(seed uint64) ([]trace.Record, trace.Stats) {
			r, err := trace.NewReader(strings.NewReader(log), "access.log", trace.Options{Format: trace.Combined, Spread: time.Second, SpreadSeed: seed})
			if err != nil {
				t.Fatal(err)
			}
			var out []trace.Record
			for {
				rec, err := r.Next()
				if err != nil {
					break
				}
				out = append(out, rec)
			}
			return out, r.Stats()
		}
		got, st := read(seed)
		again, _ := read(seed)
		if !slices.Equal(got, again) {
			t.Fatal("the same seed spread the log two ways")
		}
		if n := strings.Count(log, "\n"); len(got) != n {
			t.Fatalf("%d requests read of %d", len(got), n)
		}
		if n := len(got); n > 0 && st.Resolution != time.Second {
			t.Fatalf("resolution %v after spreading, want the log's 1s", st.Resolution)
		}
		start := time.Date(2026, 12, 1, 10, 0, 0, 0, time.UTC)
		type tickKey struct {
			sec int
			key string
		}
		times := map[tickKey][]time.Time{}
		var order []tickKey
		for i, rec := range got {
			if i > 0 && rec.At.Before(got[i-1].At) {
				t.Fatalf("request %d at %v, before the one before it at %v", i, rec.At, got[i-1].At)
			}
			sec := int(rec.At.Sub(start) / time.Second)
			line := strings.Split(log, "\n")[rec.Line-1]
			if want := fmt.Sprintf(":%02d:%02d ", sec/60, sec%60); !strings.Contains(line, want) {
				t.Fatalf("line %d (%s) spread to %v, out of its second", rec.Line, line, rec.At)
			}
			tk := tickKey{sec, rec.Key}
			if times[tk] == nil {
				order = append(order, tk)
			}
			times[tk] = append(times[tk], rec.At)
		}
		for _, tk := range order {
			ts := times[tk]
			for i := 1; i < len(ts); i++ {
				gap := ts[i].Sub(ts[i-1])
				want := time.Second / time.Duration(len(ts))
				if gap < want-time.Nanosecond || gap > want+time.Nanosecond {
					t.Fatalf("key %s second %d: requests %v apart, want %v (1s over %d)", tk.key, tk.sec, gap, want, len(ts))
				}
			}
		}
	})
}

// Another seed gives other offsets, and spread off keeps every time as
// logged.
func TestSpreadSeedAndOff(t *testing.T) {
	log := spreadLog([][]int{{5, 3}, {5, 3}, {5, 3}})
	read := func(opts trace.Options) []time.Time {
		opts.Format = trace.Combined
		var out []time.Time
		for _, rec := range readAll(t, newReader(t, log, opts)) {
			out = append(out, rec.At)
		}
		return out
	}
	a := read(trace.Options{Spread: time.Second, SpreadSeed: 1})
	b := read(trace.Options{Spread: time.Second, SpreadSeed: 2})
	if slices.Equal(a, b) {
		t.Errorf("seeds 1 and 2 spread alike: %v", a)
	}
	for _, at := range read(trace.Options{}) {
		if at.Nanosecond() != 0 {
			t.Fatalf("spread off moved a time to %v", at)
		}
	}
}

// A tick's requests are held with the reorder window's, under one
// bound: a second of more requests than MaxPending is refused as a
// busy log, not held without end.
func TestSpreadIsBounded(t *testing.T) {
	log := spreadLog([][]int{{50}, {1}})
	r := newReader(t, log, trace.Options{Format: trace.Combined, Spread: time.Second, MaxPending: 20})
	if err := readErr(r); err == nil || !strings.Contains(err.Error(), "more than 20 requests") {
		t.Fatalf("got %v, want the busy-log error", err)
	}
	if _, err := trace.NewReader(strings.NewReader(log), "x", trace.Options{Format: trace.Combined, Spread: -time.Second}); err == nil {
		t.Error("a negative spread was taken")
	}
}
