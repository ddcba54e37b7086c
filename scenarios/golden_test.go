package scenarios

import (
	"bytes"
	"context"
	"flag"
	"fmt"
	"os"
	"path/filepath"
	"testing"

	"github.com/ratelim/ratelim/sim"
)

var update = flag.Bool("update", false, "rewrite the golden files under testdata/")

// dump renders a parsed file for a golden: every field of the Scenario,
// one client or fault per line, then the expectations as they read.
func dump(f *File) []byte {
	var b bytes.Buffer
	sc := f.Scenario
	fmt.Fprintf(&b, "name: %s\nsummary: %s\n", sc.Name, sc.Summary)
	fmt.Fprintf(&b, "duration: %s seed: %d step: %s servers: %d balancer: %s\n", sc.Duration, sc.Seed, sc.Step, sc.Servers, sc.Balancer)
	fmt.Fprintf(&b, "limit: %+v\n", sc.Limit)
	fmt.Fprintf(&b, "topology: %+v\n", sc.Topology)
	for _, c := range sc.Clients {
		fmt.Fprintf(&b, "client: %+v\n", c)
	}
	for _, ft := range sc.Faults {
		fmt.Fprintf(&b, "fault: %+v\n", ft)
	}
	for _, e := range f.Expect {
		fmt.Fprintf(&b, "expect (line %d): %s\n", e.Line, e.Text)
	}
	return b.Bytes()
}

// TestBuiltinGolden pins what each built-in parses to, defaults included:
// a change in the loader that changes a scenario shows here.
func TestBuiltinGolden(t *testing.T) {
	for _, name := range Builtin() {
		t.Run(name, func(t *testing.T) {
			f, err := Open(name)
			if err != nil {
				t.Fatal(err)
			}
			got := dump(f)
			path := filepath.Join("testdata", name+".golden")
			if *update {
				if err := os.WriteFile(path, got, 0o644); err != nil {
					t.Fatal(err)
				}
				return
			}
			want, err := os.ReadFile(path)
			if err != nil {
				t.Fatalf("%v (go test ./scenarios -update creates it)", err)
			}
			if !bytes.Equal(got, want) {
				t.Errorf("%s differs from its golden file (go test ./scenarios -update rewrites it):\n--- got\n%s\n--- want\n%s", name, got, want)
			}
		})
	}
}

// TestBuiltinFindingsGolden pins what each built-in teaches: its findings,
// one per line, the headline first. A change in the simulator or in the
// findings that changes a built-in's lesson shows here.
func TestBuiltinFindingsGolden(t *testing.T) {
	for _, name := range Builtin() {
		t.Run(name, func(t *testing.T) {
			f, err := Open(name)
			if err != nil {
				t.Fatal(err)
			}
			r, err := sim.Run(context.Background(), f.Scenario, sim.Options{})
			if err != nil {
				t.Fatal(err)
			}
			var b bytes.Buffer
			for _, fd := range r.Findings {
				fmt.Fprintf(&b, "%s client=%q key=%q value=%g\n  %s\n", fd.Kind, fd.Client, fd.Key, fd.Value, fd.Text)
			}
			got := b.Bytes()
			path := filepath.Join("testdata", name+".findings.golden")
			if *update {
				if err := os.WriteFile(path, got, 0o644); err != nil {
					t.Fatal(err)
				}
				return
			}
			want, err := os.ReadFile(path)
			if err != nil {
				t.Fatalf("%v (go test ./scenarios -update creates it)", err)
			}
			if !bytes.Equal(got, want) {
				t.Errorf("%s's findings differ from the golden file (go test ./scenarios -update rewrites it):\n--- got\n%s\n--- want\n%s", name, got, want)
			}
		})
	}
}
