package sim

import (
	"context"
	"fmt"
	"testing"
	"time"

	"github.com/ratelim/ratelim/algorithms"
	"github.com/ratelim/ratelim/store"
	"pgregory.net/rapid"
)

// A run has the stages its scenario uses, in the order they apply, and no
// other: a plain run only records.
func TestStagesAreWhatTheScenarioUses(t *testing.T) {
	retrying := func(sc *Scenario) { sc.Clients[0].Retry = Retry{Policy: RetryImmediate} }
	shadowed := func(sc *Scenario) { sc.Limit.Shadow = true }
	shedding := func(sc *Scenario) {
		sc.Shedder = &Shedder{Capacity: perSecond(100), Burst: 10, Reserve: [3]float64{0, 0.2, 0.5}}
	}
	leasing := func(sc *Scenario) {
		sc.Limit = Limit{Algorithm: "concurrency", Params: algorithms.Params{Burst: 5, Window: time.Second}, Key: KeyAuto}
		sc.Clients[0].Service = Service{Mean: 10 * time.Millisecond}
	}
	several := func(sc *Scenario) {
		sc.Limit.Name = "per-second"
		sc.Also = []Limit{{Name: "per-minute", Algorithm: "token-bucket", Params: algorithms.Params{Rate: perSecond(5), Burst: 50}, Key: KeyAuto, Shadow: true}}
	}
	for _, tc := range []struct {
		name    string
		set     []func(*Scenario)
		observe bool
		want    string
	}{
		{"plain", nil, false, "[sim.recordStage]"},
		{"retrying", []func(*Scenario){retrying}, false, "[sim.recordStage sim.retryStage]"},
		{"shadow", []func(*Scenario){shadowed}, false, "[sim.shadowOne sim.recordStage]"},
		{"several limits, one shadowed", []func(*Scenario){several}, false, "[sim.shadowSeveral sim.recordStage]"},
		{"every stage", []func(*Scenario){leasing, shadowed, shedding, retrying}, true,
			"[sim.shadowOne *sim.shedStage sim.recordStage *sim.leaseStage sim.observeStage sim.retryStage]"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			sc := hammer(Shared, 1, RoundRobin)
			for _, set := range tc.set {
				set(&sc)
			}
			opts := Options{}
			if tc.observe {
				opts.Observe = func(Observation) {}
			}
			p, err := NewPlayer(context.Background(), sc, opts)
			if err != nil {
				t.Fatal(err)
			}
			defer p.Close()
			var kinds []string
			for _, st := range p.s.stages {
				kinds = append(kinds, fmt.Sprintf("%T", st))
			}
			if got := fmt.Sprint(kinds); got != tc.want {
				t.Errorf("stages %s, want %s", got, tc.want)
			}
		})
	}
}

// One tally of an outcome adds to a step's row and to a client's totals
// what the recorder once incremented in each by hand, counter by counter
// (the oracle below is that code): every combination of verdict, fail
// policy, shadow, shed, retry, exact verdict and no answer.
func TestTallyCountsWhatEachCounterDid(t *testing.T) {
	rapid.Check(t, func(t *rapid.T) {
		o := outcome{
			p:            pending{cost: rapid.Int64Range(1, 9).Draw(t, "cost"), attempt: rapid.IntRange(0, 2).Draw(t, "attempt")},
			d:            store.Decision{Decision: algorithms.Decision{Allowed: rapid.Bool().Draw(t, "allowed")}},
			shadowed:     rapid.Bool().Draw(t, "shadowed"),
			shed:         rapid.Bool().Draw(t, "shed"),
			noAnswer:     rapid.Bool().Draw(t, "noAnswer"),
			idealAllowed: rapid.Bool().Draw(t, "idealAllowed"),
		}
		o.d.Policy = rapid.SampledFrom([]store.Policy{"", store.FailOpen, store.FailClosed}).Draw(t, "policy")
		var row TimelineRow
		var total counts
		o.tally().add(&row, &total)
		wantRow, wantTotal := oldIncrements(&o)
		if row != wantRow {
			t.Fatalf("row %+v, want %+v", row, wantRow)
		}
		if total != wantTotal {
			t.Fatalf("totals %+v, want %+v", total, wantTotal)
		}
	})
}

// oldIncrements is what sim.record and sim.recordNoAnswer added to a row
// and to a client's totals before an outcome was a value (commit
// fcb729e), counter by counter, Served and the rest left out.
func oldIncrements(o *outcome) (row TimelineRow, total counts) {
	row.Sent++
	total.Sent++
	if o.noAnswer {
		row.NoAnswer++
		total.NoAnswer++
		if o.p.attempt > 0 {
			row.Retries++
			total.Retries++
		}
		return row, total
	}
	allowed := o.d.Allowed
	if o.shadowed {
		row.WouldReject++
		total.WouldReject++
	}
	if o.shed {
		row.Shed++
		total.Shed++
	}
	if o.p.attempt > 0 {
		row.Retries++
		total.Retries++
	}
	switch o.d.Policy {
	case store.FailOpen:
		allowed = true
		row.FailedOpen++
		total.FailedOpen++
	case store.FailClosed:
		allowed = false
		row.FailedClosed++
		total.FailedClosed++
	}
	row.CostSent += o.p.cost
	total.CostSent += o.p.cost
	if allowed {
		row.CostAllowed += o.p.cost
		total.CostAllowed += o.p.cost
	}
	if o.idealAllowed {
		total.IdealAllowed++
	}
	if allowed {
		row.Allowed++
		total.Allowed++
		if !o.idealAllowed {
			total.FalseAllows++
		}
		if o.p.attempt > 0 {
			row.RetriesAllowed++
			total.RetriesAllowed++
		}
	} else {
		if o.idealAllowed {
			total.FalseDenies++
		}
		row.Rejected++
		total.Rejected++
	}
	return row, total
}
