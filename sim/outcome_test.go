package sim

import (
	"testing"

	"pgregory.net/rapid"

	"github.com/ratelim/ratelim/store"
)

// TestAddVerdictIsTheTally checks the recorder's fast path against the
// tally it stands in for: any outcome, plain or not; where plain says it
// is, addVerdict adds to a row and totals exactly what tally().add does.
func TestAddVerdictIsTheTally(t *testing.T) {
	rapid.Check(t, func(t *rapid.T) {
		var o outcome
		o.p.cost = rapid.Int64Range(1, 5).Draw(t, "cost")
		// Half the cases plain, the rest anything: plain ones would be
		// one in 72 if every field were drawn alike.
		if !rapid.Bool().Draw(t, "plain") {
			o.p.attempt = rapid.IntRange(0, 2).Draw(t, "attempt")
			o.shadowed = rapid.Bool().Draw(t, "shadowed")
			o.shed = rapid.Bool().Draw(t, "shed")
			o.noAnswer = rapid.Bool().Draw(t, "noAnswer")
			o.d.Policy = rapid.SampledFrom([]store.Policy{"", store.FailOpen, store.FailClosed}).Draw(t, "policy")
		}
		o.d.Allowed = rapid.Bool().Draw(t, "allowed")
		o.idealAllowed = rapid.Bool().Draw(t, "idealAllowed")
		wantPlain := o.p.attempt == 0 && !o.shadowed && !o.shed && !o.noAnswer && o.d.Policy == ""
		if o.plain() != wantPlain {
			t.Fatalf("plain() = %v, want %v", o.plain(), wantPlain)
		}
		if !wantPlain {
			return
		}
		var wantRow, gotRow TimelineRow
		var wantTotal, gotTotal counts
		o.tally().add(&wantRow, &wantTotal)
		addVerdict(&gotRow, &gotTotal, o.allowed(), o.idealAllowed, o.p.cost)
		if gotRow != wantRow || gotTotal != wantTotal {
			t.Fatalf("addVerdict: row %+v totals %+v, want row %+v totals %+v", gotRow, gotTotal, wantRow, wantTotal)
		}
	})
}
