package report

import (
	"bytes"
	"context"
	"crypto/sha256"
	"encoding/json"
	"errors"
	"fmt"
	"reflect"
	"testing"

	"github.com/ratelim/ratelim/algorithms"
	"github.com/ratelim/ratelim/scenarios"
	"github.com/ratelim/ratelim/sim"
)

// TestBuiltinJSONUnchanged pins the v1 JSON of every built-in, as written
// and on each topology, by its SHA-256: a refactor of the engine or of the
// result types (an embedded struct, a split file, a new store layer) must
// leave every byte where it was. A change that means to alter a figure
// says so by rewriting testdata/builtin-json.sha256 with -update. The
// JSON pinned is the dense one (--dense), every row and point: what the
// JSON was before sparse output, byte for byte; the sparse one, the
// default, must give it back (sparseGivesDenseBack).
func TestBuiltinJSONUnchanged(t *testing.T) {
	var sums bytes.Buffer
	for _, name := range scenarios.Builtin() {
		f, err := scenarios.Open(name)
		if err != nil {
			t.Fatal(err)
		}
		for _, kind := range []sim.TopologyKind{"", sim.Local, sim.Shared, sim.Racy, sim.SplitBrain} {
			sc := f.Scenario
			label := "as-written"
			if kind != "" {
				sc.Topology.Kind, label = kind, string(kind)
			}
			if sim.Placement(&sc) != nil {
				continue // a concurrency limit runs on local and shared alone
			}
			r, err := sim.Run(context.Background(), sc, sim.Options{})
			if err != nil {
				t.Fatalf("%s on %s: %v", name, label, err)
			}
			var out bytes.Buffer
			if err := WriteJSONWith(context.Background(), &out, r, WriteOptions{Dense: true}); err != nil {
				t.Fatal(err)
			}
			fmt.Fprintf(&sums, "%x  %s %s\n", sha256.Sum256(out.Bytes()), name, label)
			var sparse bytes.Buffer
			if err := WriteJSON(&sparse, r); err != nil {
				t.Fatal(err)
			}
			sparseGivesDenseBack(t, name+" on "+label, r, sparse.Bytes(), out.Bytes())
			findingsWithoutState(t, name+" on "+label, sc, r, sparse.Bytes())
		}
	}
	builtinsUnderEveryAlgorithm(t, &sums)
	golden(t, "builtin-json.sha256", sums.Bytes())
}

// builtinsUnderEveryAlgorithm adds to sums the dense JSON's SHA-256 of
// every built-in under every algorithm of algorithms.Catalog (the exact
// limiters, concurrency and the peer models), on its own topology and on
// each other: the engine's paths an algorithm alone takes (a lease, a
// library's atomic store, a compare-and-swap, a store clock) are pinned
// too. A combination the simulator refuses is skipped, as compare skips
// it: an algorithm that counts something else than the scenario's limit
// (sim.WithAlgorithm: concurrency against a rate, or the reverse), one
// that cannot run where the topology puts its state (sim.Placement: a
// peer model off the memory store, a lease on a racy or split-brain
// topology), or one sim.Run refuses at setup (a *sim.SetupError). The
// sparse JSON and the findings are checked on the built-ins as written
// above; here the bytes alone, which keeps the test within seconds.
func builtinsUnderEveryAlgorithm(t *testing.T, sums *bytes.Buffer) {
	t.Helper()
	for _, name := range scenarios.Builtin() {
		f, err := scenarios.Open(name)
		if err != nil {
			t.Fatal(err)
		}
		for _, info := range algorithms.Catalog() {
			for _, kind := range []sim.TopologyKind{"", sim.Local, sim.Shared, sim.Racy, sim.SplitBrain} {
				sc, err := sim.WithAlgorithm(f.Scenario, info.Name)
				if err != nil {
					continue // counts something else than the scenario's limit
				}
				label := "as-written"
				if kind != "" {
					sc.Topology.Kind, label = kind, string(kind)
				}
				if sim.Placement(&sc) != nil {
					continue // cannot run where this topology puts its state
				}
				r, err := sim.Run(context.Background(), sc, sim.Options{})
				var setup *sim.SetupError
				if errors.As(err, &setup) {
					continue // refused before it starts
				}
				if err != nil {
					t.Fatalf("%s under %s on %s: %v", name, info.Name, label, err)
				}
				var out bytes.Buffer
				if err := WriteJSONWith(context.Background(), &out, r, WriteOptions{Dense: true}); err != nil {
					t.Fatal(err)
				}
				fmt.Fprintf(sums, "%x  %s %s %s\n", sha256.Sum256(out.Bytes()), name, info.Name, label)
			}
		}
	}
}

// sparseGivesDenseBack checks the sparse JSON's contract on r: read
// back and densified as the contract says (sim.Result.Densify), it is the
// dense JSON byte for byte; it is marked sparse; and its rows add up to
// the same totals as the dense ones, with no row in which nothing
// happened and no point equal to the one before but a series' last.
func sparseGivesDenseBack(t *testing.T, what string, r *sim.Result, sparse, dense []byte) {
	t.Helper()
	var back sim.Result
	if err := json.Unmarshal(sparse, &back); err != nil {
		t.Fatal(err)
	}
	if !back.TimelineSparse {
		t.Errorf("%s: the sparse JSON does not say timeline_sparse", what)
	}
	if got, want := rowTotals(back.Timeline), rowTotals(r.Timeline); got != want {
		t.Errorf("%s: the sparse rows add up to %+v, the dense ones to %+v", what, got, want)
	}
	for _, row := range back.Timeline {
		if row.Empty() {
			t.Errorf("%s: the sparse JSON keeps an empty row %+v", what, row)
		}
	}
	for _, ser := range back.State {
		for i := 1; i < len(ser.Remaining)-1; i++ {
			if ser.Remaining[i] == ser.Remaining[i-1] {
				t.Errorf("%s: series %s/%s repeats %d at %gs", what, ser.Key, ser.Copy, ser.Remaining[i], ser.TS[i])
			}
		}
	}
	back.Densify()
	var again bytes.Buffer
	if err := WriteJSONWith(context.Background(), &again, &back, WriteOptions{Dense: true}); err != nil {
		t.Fatal(err)
	}
	if !bytes.Equal(again.Bytes(), dense) {
		t.Errorf("%s: the sparse JSON densified is not the dense JSON (%d vs %d bytes; sparse %d)", what, again.Len(), len(dense), len(sparse))
	}
}

// rowTotals adds up timeline rows.
func rowTotals(rows []sim.TimelineRow) (t struct {
	sim.Counts
	Retries, RetriesAllowed, Served int64
}) {
	for _, row := range rows {
		t.Counts.Add(row.Counts)
		t.Retries += row.Retries
		t.RetriesAllowed += row.RetriesAllowed
		t.Served += row.Served
	}
	return t
}

// findingsWithoutState checks that r's findings are the same whether its
// state series are kept (sim.Options.StateOf) and whether they are seen as
// the run went (the copies' disagreement, online) or read back from the
// JSON's series (a sparse JSON, which Findings densifies).
func findingsWithoutState(t *testing.T, what string, sc sim.Scenario, r *sim.Result, js []byte) {
	t.Helper()
	bare, err := sim.Run(context.Background(), sc, sim.Options{StateOf: func(string) bool { return false }})
	if err != nil {
		t.Fatalf("%s without state: %v", what, err)
	}
	if len(bare.State) != 0 {
		t.Errorf("%s: %d state series kept, want none", what, len(bare.State))
	}
	if !reflect.DeepEqual(bare.Findings, r.Findings) || !reflect.DeepEqual(bare.Clients, r.Clients) || !reflect.DeepEqual(bare.Timeline, r.Timeline) {
		t.Errorf("%s: without state series the run differs:\n%+v\nwith them:\n%+v", what, bare.Findings, r.Findings)
	}
	var back sim.Result
	if err := json.Unmarshal(js, &back); err != nil {
		t.Fatal(err)
	}
	if got := sim.Findings(&back); !reflect.DeepEqual(got, r.Findings) {
		t.Errorf("%s: read back from its JSON, the findings are\n%+v\nas run:\n%+v", what, got, r.Findings)
	}
}
