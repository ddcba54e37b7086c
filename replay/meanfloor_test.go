package replay

import (
	"bytes"
	"context"
	"fmt"
	"math/rand/v2"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/ratelim/ratelim/algorithms"
	"github.com/ratelim/ratelim/sim"
	"github.com/ratelim/ratelim/trace"
)

// steadyLog writes span of a bulk of steady keys, key i paced (±40%
// jitter, the same seed whatever the span) at 0.15 + 0.01·i a second:
// the same traffic, longer or shorter.
func steadyLog(t *testing.T, name string, keys int, span time.Duration) string {
	t.Helper()
	var recs []trace.Record
	for i := range keys {
		rng := rand.New(rand.NewPCG(uint64(i), 7))
		gap := float64(time.Second) / (0.15 + 0.01*float64(i))
		at := logStart.Add(time.Duration(rng.Float64() * gap))
		for at.Before(logStart.Add(span)) {
			recs = append(recs, trace.Record{At: at.Truncate(time.Millisecond), Key: fmt.Sprintf("ok-%02d", i), Method: "GET", Path: "/", Status: 200})
			at = at.Add(time.Duration(gap * (0.6 + 0.8*rng.Float64())))
		}
	}
	slices.SortStableFunc(recs, func(x, y trace.Record) int { return x.At.Compare(y.At) })
	return writeLog(t, name, recs)
}

// A row below the bulk's busiest mean rate spares it only because the
// log ended: the limit recommended on ten minutes of steady traffic
// still spares every key on an hour of the same traffic, and the rows
// below the floor are marked and not recommended.
func TestRecommendedRowHoldsOnALongerLog(t *testing.T) {
	short := steadyLog(t, "short.jsonl", 20, 10*time.Minute)
	long := steadyLog(t, "long.jsonl", 20, time.Hour)
	l, f, _ := frontierOf(t, short, "token-bucket", DefaultHeadroom)
	defer l.Close()
	if f.Recommended < 0 {
		t.Fatal("nothing recommended")
	}
	rec := f.Rows[f.Recommended]
	for _, row := range f.Rows {
		if want := row.Params.Rate.PerSecond() < f.MeanFloor; row.BelowBulkMean != want {
			t.Errorf("%v: below the floor %v, want %v (floor %.3g/s)", row.Params.Rate, row.BelowBulkMean, want, f.MeanFloor)
		}
	}
	if rec.BelowBulkMean || rec.Params.Rate.PerSecond() < f.BusiestMean*(1+DefaultHeadroom) {
		t.Fatalf("recommended %v, below the bulk's busiest mean %.3g/s × 1.2", rec.Params.Rate, f.BusiestMean)
	}
	ll, _, sc := frontierOf(t, long, "token-bucket", DefaultHeadroom)
	defer ll.Close()
	sc.Limit.Params = rec.Params
	run, err := ll.Replay(context.Background(), "long", sc, sim.Options{})
	if err != nil {
		t.Fatal(err)
	}
	if run.Totals.Throttled != 0 {
		t.Fatalf("%v burst %d, recommended on 10 minutes, throttles %d of %d keys on an hour of the same traffic", rec.Params.Rate, rec.Params.Burst, run.Totals.Throttled, run.Totals.Keys)
	}
}

// Each row names the key of the bulk whose need is its NEEDS: a bulk key
// needing exactly that, no bulk key needing more.
func TestRowsNameTheKeySettingTheirNeed(t *testing.T) {
	path := keyedLog(t, 6)
	l, f, _ := frontierOf(t, path, "token-bucket", DefaultHeadroom)
	defer l.Close()
	for _, row := range f.Rows {
		if row.SetBy < 0 || f.Outliers.Is[row.SetBy] {
			t.Fatalf("%v: set by %d", row.Params.Rate, row.SetBy)
		}
		if got := f.KeyNeeds(row, row.SetBy); got != row.Need {
			t.Errorf("%v: set by %s, which needs %d, not %d", row.Params.Rate, l.Keys[row.SetBy].Key, got, row.Need)
		}
		for i := range f.Keys {
			if !f.Outliers.Is[i] && f.KeyNeeds(row, i) > row.Need {
				t.Errorf("%v: %s needs %d, more than NEEDS %d", row.Params.Rate, l.Keys[i].Key, f.KeyNeeds(row, i), row.Need)
			}
		}
	}
}

// With a quantile, the row recommended throttles the fewest keys that are
// not outliers before it refuses the most: a row refusing more by
// throttling an ordinary key loses to one that throttles outliers alone.
func TestQuantileRecommendsFewestOrdinaryKeysThrottled(t *testing.T) {
	keys := make([]trace.KeyProfile, 60)
	f := &Frontier{Keys: keys, Quantile: 0.95, Outliers: trace.Outliers{Is: make([]bool, 60)}}
	f.Outliers.Is[58], f.Outliers.Is[59] = true, true
	row := func(rate int64, rejected int64, throttled []ThrottledKey, outliers int) FrontierRow {
		return FrontierRow{Params: algorithms.Params{Rate: algorithms.Rate{N: rate, Per: time.Second}},
			Totals:    Totals{Keys: 60, Throttled: len(throttled), Requests: 10000, Rejected: rejected},
			Throttled: throttled, OutliersThrottled: outliers}
	}
	bad := []ThrottledKey{{"k58", 2000}, {"k59", 2000}}
	f.Rows = []FrontierRow{
		row(1, 5000, append(slices.Clone(bad), ThrottledKey{"k0", 1000}), 2),
		row(2, 4000, bad, 2),
		row(5, 3000, bad[:1], 1),
	}
	f.recommend()
	if f.Recommended != 1 {
		t.Fatalf("recommended row %d, want 1 (throttles no ordinary key, refuses the most of those)", f.Recommended)
	}
}

// The bulk's median mean rate is the true median: of an even count, the
// mean of the middle two.
func TestBulkRangeMedian(t *testing.T) {
	f := &Frontier{Span: 100 * time.Second, Outliers: trace.Outliers{Is: make([]bool, 4)}}
	for _, n := range []int{100, 200, 400, 800} { // 1, 2, 4, 8 a second
		f.Keys = append(f.Keys, trace.KeyProfile{Requests: n, Busiest: []int{n}})
	}
	if lo, hi := f.bulkRange(); lo != 3 || hi != 800 {
		t.Errorf("bulk range %v to %v, want 3 (between 2 and 4) to 800", lo, hi)
	}
}

// A bulk faster than 1,000/s gets rows that reach it: a key at 2,000/s is
// recommended a rate above its own, not 1000/s with the log's excess as a
// burst; past the grid's top, the frontier says so.
func TestGridReachesAFastBulk(t *testing.T) {
	for _, tc := range []struct {
		gap       time.Duration
		aboveGrid bool
	}{{500 * time.Microsecond, false}, {50 * time.Microsecond, true}} {
		var recs []trace.Record
		for i := range 20_000 {
			recs = append(recs, trace.Record{At: logStart.Add(time.Duration(i) * tc.gap), Key: "fast", Method: "GET", Path: "/", Status: 200})
		}
		l, f, _ := frontierOf(t, writeLog(t, "fast.jsonl", recs), "token-bucket", DefaultHeadroom)
		l.Close()
		if got := f.AboveGrid > 0; got != tc.aboveGrid {
			t.Errorf("gap %v: above the grid %v, want %v", tc.gap, got, tc.aboveGrid)
		}
		if tc.aboveGrid {
			continue
		}
		if f.Recommended < 0 {
			t.Fatalf("gap %v: nothing recommended", tc.gap)
		}
		if rec := f.Rows[f.Recommended]; rec.Params.Rate.PerSecond() < 2000*(1+DefaultHeadroom) {
			t.Errorf("gap %v: recommended %v burst %d, below the key's own 2,000/s", tc.gap, rec.Params.Rate, rec.Params.Burst)
		}
	}
}

// The recommended command replays the same algorithm: named unless it is
// the default.
func TestRowLimitNamesTheAlgorithm(t *testing.T) {
	path := keyedLog(t, 6)
	for algorithm, want := range map[string]string{"token-bucket": "--limit ", "sliding-window": "--algorithm sliding-window --limit "} {
		l, f, _ := frontierOf(t, path, algorithm, DefaultHeadroom)
		l.Close()
		if got := f.rowLimit(f.Rows[0]); !strings.HasPrefix(got, want) {
			t.Errorf("%s: %q, want it to start %q", algorithm, got, want)
		}
	}
}

func TestCountFigure(t *testing.T) {
	for x, want := range map[float64]string{120000: "120,000", 18.5: "18.5", 5: "5", 1234.5: "1,234.5"} {
		if got := countFigure(x); got != want {
			t.Errorf("countFigure(%v) = %q, want %q", x, got, want)
		}
	}
}

// With no outlier, the rule says nothing of throttling outliers.
func TestRuleWithoutOutliers(t *testing.T) {
	l, f, _ := frontierOf(t, steadyLog(t, "steady.jsonl", 20, 10*time.Minute), "token-bucket", DefaultHeadroom)
	defer l.Close()
	if f.Outliers.Count() != 0 {
		t.Fatalf("%d outliers", f.Outliers.Count())
	}
	var out bytes.Buffer
	if err := WriteTable(&out, &Report{Log: l, Runs: shownRuns(f), Frontier: f}, TableOptions{}); err != nil {
		t.Fatal(err)
	}
	if text := strings.Join(strings.Fields(out.String()), " "); strings.Contains(text, "most outliers") || !strings.Contains(text, "that spare every key on replay, the one refusing the most") {
		t.Errorf("rule without outliers:\n%s", out.String())
	}
}
