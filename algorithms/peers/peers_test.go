package peers

import (
	"reflect"
	"slices"
	"testing"
	"time"

	"pgregory.net/rapid"

	"github.com/ratelim/ratelim/algorithms"
	"github.com/ratelim/ratelim/algorithms/algorithmstest"
)

// The package's init registers every model in algorithms' catalog, in the
// order catalog lists them, after algorithms' own kinds: New builds each
// by its name, and PeerNames is derived from what registered.
func TestInitRegistersEveryPeer(t *testing.T) {
	var want []string
	for _, info := range catalog {
		if info.Peer == nil {
			t.Errorf("%s has no Provenance: a peer model says what it models", info.Name)
		}
		want = append(want, info.Name)
	}
	if got := algorithms.PeerNames(); !slices.Equal(got, want) {
		t.Errorf("algorithms.PeerNames() = %v, want %v", got, want)
	}
	names := algorithms.Names()
	if got := names[len(names)-len(want):]; !slices.Equal(got, want) {
		t.Errorf("algorithms.Names() ends %v, want the peers %v last", got, want)
	}
	p := algorithms.Params{Rate: algorithms.Rate{N: 10, Per: time.Second}, Burst: 5, Window: time.Second}
	for _, name := range want {
		alg, err := algorithms.New(name, p)
		if err != nil {
			t.Errorf("algorithms.New(%q): %v", name, err)
			continue
		}
		if alg.Name() != name {
			t.Errorf("algorithms.New(%q).Name() = %q", name, alg.Name())
		}
	}
}

// genPeer draws a peer model with parameters every peer accepts: a rate
// per second or per minute (all nginx can express), the same length of
// window (a unit of envoy's), a burst, and an Origin anywhere from 2000 to
// 2100, where the float-keeping peers round differently.
func genPeer(t *rapid.T) algorithms.Algorithm {
	var peers []algorithms.Info
	for _, info := range algorithms.Catalog() {
		if info.Peer != nil {
			peers = append(peers, info)
		}
	}
	info := rapid.SampledFrom(peers).Draw(t, "peer")
	per := rapid.SampledFrom([]time.Duration{time.Second, time.Minute}).Draw(t, "rate.Per")
	p := algorithms.Params{
		Rate:   algorithms.Rate{N: rapid.Int64Range(1, 1000).Draw(t, "rate.N"), Per: per},
		Burst:  rapid.Int64Range(1, 100).Draw(t, "burst"),
		Window: per,
		Origin: algorithms.FromTime(time.Date(2000, 1, 1, 0, 0, 0, 0, time.UTC)) + algorithms.Time(rapid.Int64Range(0, 100*365*24*3600*1_000_000).Draw(t, "origin")),
	}
	a, err := info.Build(p)
	if err != nil {
		t.Fatalf("%s with %+v: %v", info.Name, p, err)
	}
	return a
}

// What every peer model must do, whatever the library it models does with
// its numbers: step purely (prev untouched, the same answer twice), never
// panic on a clock that steps back or a cost past its burst, admit a fresh
// key's first request, and give a decision a server can answer with: no
// Retry-After on an admission, nothing negative.
func TestPropertyPeersStepPurelyAndSanely(t *testing.T) {
	rapid.Check(t, func(t *rapid.T) {
		alg := genPeer(t)
		var st algorithms.State
		_, first := alg.Step(st, 0, 1)
		if !first.Allowed {
			t.Fatalf("%s refused a fresh key's first request: %+v", alg.Name(), first)
		}
		for i, r := range algorithmstest.Requests(t, true) {
			cost := rapid.SampledFrom([]int64{0, 1, 1, 1, 2, alg.Params().Burst + 2}).Draw(t, "cost")
			before := st
			before.Log = append([]int64(nil), st.Log...)
			next, d := alg.Step(st, algorithms.Time(r.At), cost)
			if !reflect.DeepEqual(before, st) {
				t.Fatalf("%s: step %d changed the state it was given: %+v, now %+v", alg.Name(), i, before, st)
			}
			again, d2 := alg.Step(st, algorithms.Time(r.At), cost)
			if !reflect.DeepEqual(next, again) || d != d2 {
				t.Fatalf("%s: step %d twice gave %+v %+v, then %+v %+v", alg.Name(), i, next, d, again, d2)
			}
			if d.Allowed && d.RetryAfter != 0 {
				t.Fatalf("%s: step %d admitted with Retry-After %v", alg.Name(), i, d.RetryAfter)
			}
			if d.Remaining < 0 || d.RetryAfter < 0 || d.ResetAfter < 0 || d.Delay < 0 {
				t.Fatalf("%s: step %d gave a negative figure: %+v", alg.Name(), i, d)
			}
			st = next
		}
	})
}

// A peer's zero value, declared without its constructor, refuses what it
// cannot count rather than panicking on the parameters it was never given.
func TestPeerZeroValuesDoNotPanic(t *testing.T) {
	for _, info := range algorithms.Catalog() {
		if info.Peer == nil {
			continue
		}
		alg, err := info.Build(algorithms.Params{Rate: algorithms.Rate{N: 10, Per: time.Second}, Burst: 5, Window: time.Second})
		if err != nil {
			t.Fatal(err)
		}
		zero := reflect.New(reflect.TypeOf(alg).Elem()).Interface().(algorithms.Algorithm)
		_, d := zero.Step(algorithms.State{}, 1_000_000, 1)
		if d.Allowed {
			t.Errorf("%s: the zero value admitted a request: %+v", info.Name, d)
		}
	}
}

// A limiter's Params hold what it reads and nothing else, whatever it was
// built with: the simulator picks the exact limiter to measure against by
// them (a window means a sliding log), and the result prints them.
func TestParamsHoldWhatTheLimiterReads(t *testing.T) {
	p := algorithms.Params{Rate: algorithms.Rate{N: 10, Per: time.Second}, Burst: 5, Window: time.Second, Delay: 2, Origin: 7}
	for _, info := range algorithms.Catalog() {
		alg, err := info.Build(p)
		if err != nil {
			t.Fatalf("%s: %v", info.Name, err)
		}
		got := alg.Params()
		// The concurrency limiter's scenario names for Burst and Window.
		alias := map[string]string{"max_in_flight": "burst", "lease_ttl": "window"}
		reads := func(name string) bool {
			for _, r := range info.Params {
				if r == name || alias[r] == name {
					return true
				}
			}
			return false
		}
		if (got.Rate != p.Rate) == reads("rate") || (got.Burst != 0) != reads("burst") || (got.Window != 0) != reads("window") {
			t.Errorf("%s reads %v but its Params are %+v", info.Name, info.Params, got)
		}
	}
}
