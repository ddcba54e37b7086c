package report

import (
	"bytes"
	"context"
	"crypto/sha256"
	"fmt"
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
			r, err := sim.Run(context.Background(), sc, sim.Options{})
			if err != nil {
				t.Fatalf("%s on %s: %v", name, label, err)
			}
			var out bytes.Buffer
			if err := WriteJSON(&out, r); err != nil {
				t.Fatal(err)
			}
			fmt.Fprintf(&sums, "%x  %s %s\n", sha256.Sum256(out.Bytes()), name, label)
		}
	}
	golden(t, "builtin-json.sha256", sums.Bytes())
}
