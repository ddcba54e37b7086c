package report

import (
	"bytes"
	"context"
	"crypto/sha256"
	"encoding/json"
	"fmt"
	"reflect"
	"testing"

	"github.com/ratelim/ratelim/scenarios"
	"github.com/ratelim/ratelim/sim"
)

// TestBuiltinJSONUnchanged pins the v1 JSON of every built-in, as written
// and on each topology, by its SHA-256: a refactor of the engine or of the
// result types (an embedded struct, a split file, a new store layer) must
// leave every byte where it was. A change that means to alter a figure
// says so by rewriting testdata/builtin-json.sha256 with -update.
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
			if err := WriteJSON(&out, r); err != nil {
				t.Fatal(err)
			}
			fmt.Fprintf(&sums, "%x  %s %s\n", sha256.Sum256(out.Bytes()), name, label)
			findingsWithoutState(t, name+" on "+label, sc, r, out.Bytes())
		}
	}
	golden(t, "builtin-json.sha256", sums.Bytes())
}

// findingsWithoutState checks that r's findings are the same whether its
// state series are kept (sim.Options.StateOf) and whether they are seen as
// the run went (the copies' disagreement, online) or read back from the
// JSON's series.
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
