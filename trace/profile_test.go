package trace_test

import (
	"fmt"
	"math"
	"testing"
	"time"

	"github.com/ratelim/ratelim/trace"
)

func TestGridRates(t *testing.T) {
	got := trace.GridRates()
	var texts []string
	for i, r := range got {
		texts = append(texts, r.String())
		if i > 0 && !(r.PerSecond() > got[i-1].PerSecond()) {
			t.Errorf("%v after %v: not ascending", r, got[i-1])
		}
	}
	if got, want := fmt.Sprint(texts), "[36/h 72/h 3/m 6/m 12/m 30/m 1/s 2/s 5/s 10/s 20/s 50/s 100/s 200/s 500/s 1000/s 2000/s 5000/s 10000/s]"; got != want {
		t.Errorf("grid %s, want %s", got, want)
	}
}

// Profile's figures for keys of known shape: the busiest count in each
// window, over every placement of it, and the smallest burst at each rate.
func TestProfile(t *testing.T) {
	t0 := time.Date(2026, 3, 1, 12, 0, 0, 0, time.UTC)
	p, err := trace.NewProfile([]trace.Rate{{N: 1, Per: time.Second}, {N: 10, Per: time.Second}}, 2*time.Second)
	if err != nil {
		t.Fatal(err)
	}
	// burst: 10 requests 100 ms apart; steady: one a second for 11 minutes;
	// pair: two at once, then two 30 s later; "" is exempt.
	for i := range 10 {
		p.Add("burst", t0.Add(time.Duration(i)*100*time.Millisecond))
	}
	for i := range 660 {
		p.Add("steady", t0.Add(time.Duration(i)*time.Second))
	}
	p.Add("pair", t0)
	p.Add("pair", t0)
	p.Add("pair", t0.Add(30*time.Second))
	p.Add("pair", t0.Add(30*time.Second))
	p.Add("", t0)
	if got := fmt.Sprint(p.Windows()); got != "[1s 10s 1m0s 10m0s 2s]" {
		t.Errorf("windows %s", got)
	}
	want := map[string]struct {
		requests int
		busiest  []int   // 1s 10s 1m 10m 2s
		bursts   []int64 // at 1/s, 10/s
	}{
		"burst":  {10, []int{10, 10, 10, 10, 10}, []int64{10, 1}},
		"steady": {660, []int{1, 10, 60, 600, 2}, []int64{1, 1}},
		"pair":   {4, []int{2, 2, 4, 4, 2}, []int64{2, 2}},
	}
	keys := p.Keys()
	if len(keys) != len(want) {
		t.Fatalf("%d keys, want %d", len(keys), len(want))
	}
	for _, k := range keys {
		w := want[k.Key]
		if k.Requests != w.requests || fmt.Sprint(k.Busiest) != fmt.Sprint(w.busiest) || fmt.Sprint(k.Bursts) != fmt.Sprint(w.bursts) {
			t.Errorf("%s: %d requests, busiest %v, bursts %v; want %d, %v, %v", k.Key, k.Requests, k.Busiest, k.Bursts, w.requests, w.busiest, w.bursts)
		}
	}
	if _, err := trace.NewProfile([]trace.Rate{{N: 0, Per: time.Second}}); err == nil {
		t.Error("NewProfile took a rate of 0")
	}
	if _, err := trace.NewProfile(nil, -time.Second); err == nil {
		t.Error("NewProfile took a negative window")
	}
}

// FindOutliers on busiest counts of known spread: the median, the MAD
// (floored at ln 1.5), the z of each key, the outliers above 3.5 and the
// keys close to the rule above 2.5.
func TestFindOutliers(t *testing.T) {
	keysOf := func(counts ...int) []trace.KeyProfile {
		var ks []trace.KeyProfile
		for i, c := range counts {
			ks = append(ks, trace.KeyProfile{Key: fmt.Sprint(i), Busiest: []int{c, c, c, c}})
		}
		return ks
	}
	for _, tc := range []struct {
		name     string
		counts   []int
		span     time.Duration
		windows  int
		median   float64
		mad      float64
		outliers []bool
		near     []bool
		bulkMax  int
	}{
		// Every key alike: the MAD is floored, nobody stands out.
		{"alike", []int{5, 5, 5, 5, 5}, time.Minute, 3, 5, math.Log(1.5), []bool{false, false, false, false, false}, []bool{false, false, false, false, false}, 5},
		// One key at 100× the rest: z = ln 100 / (1.4826 ln 1.5) = 7.6.
		{"one far", []int{10, 10, 10, 10, 1000}, 10 * time.Second, 2, 10, math.Log(1.5), []bool{false, false, false, false, true}, []bool{false, false, false, false, false}, 10},
		// One at 5×: z = ln 5 / (1.4826 ln 1.5) = 2.66, close but in.
		{"one near", []int{10, 10, 10, 10, 50}, time.Second, 1, 10, math.Log(1.5), []bool{false, false, false, false, false}, []bool{false, false, false, false, true}, 50},
		// One below the bulk: one-sided, never an outlier.
		{"one low", []int{100, 100, 100, 100, 1}, time.Hour, 4, 100, math.Log(1.5), []bool{false, false, false, false, false}, []bool{false, false, false, false, false}, 100},
	} {
		t.Run(tc.name, func(t *testing.T) {
			o, err := trace.FindOutliers(keysOf(tc.counts...), tc.span)
			if err != nil {
				t.Fatal(err)
			}
			if len(o.Windows) != tc.windows {
				t.Fatalf("%d windows, want %d", len(o.Windows), tc.windows)
			}
			ws := o.Windows[0]
			if ws.Median != tc.median || math.Abs(ws.MAD-tc.mad) > 1e-12 || ws.BulkMax != tc.bulkMax {
				t.Errorf("median %v MAD %v bulk max %d, want %v %v %d", ws.Median, ws.MAD, ws.BulkMax, tc.median, tc.mad, tc.bulkMax)
			}
			if fmt.Sprint(o.Is) != fmt.Sprint(tc.outliers) || fmt.Sprint(o.Near) != fmt.Sprint(tc.near) {
				t.Errorf("outliers %v near %v, want %v %v (z %v)", o.Is, o.Near, tc.outliers, tc.near, o.Z)
			}
		})
	}
	if _, err := trace.FindOutliers(nil, time.Minute); err == nil {
		t.Error("FindOutliers of no keys took it")
	}
}

// Of two keys neither can stand out (a z of at most 0.67): the rule is
// not applied below three, and says so.
func TestFindOutliersTooFewKeys(t *testing.T) {
	for _, n := range []int{1, 2} {
		keys := []trace.KeyProfile{{Key: "a", Busiest: []int{1, 1, 1, 1}}, {Key: "b", Busiest: []int{1000, 1000, 1000, 1000}}}[:n]
		o, err := trace.FindOutliers(keys, time.Hour)
		if err != nil || !o.TooFew || o.Count() != 0 || len(o.Is) != n || len(o.Near) != n || len(o.Z) != n {
			t.Errorf("%d keys: %+v, %v; want too few, no outlier", n, o, err)
		}
	}
	o, _ := trace.FindOutliers([]trace.KeyProfile{{Busiest: []int{1}}, {Busiest: []int{1}}, {Busiest: []int{1}}}, 0)
	if o.TooFew {
		t.Error("3 keys: too few")
	}
}
