package simrun_test

import (
	"bytes"
	"context"
	"strings"
	"testing"

	"github.com/ratelim/ratelim/report"
	"github.com/ratelim/ratelim/scenarios"
	"github.com/ratelim/ratelim/sim"
	"github.com/ratelim/ratelim/simrun"
)

// bareJSON is what a plain sim.Run of file writes as JSON, with the
// file's expectations evaluated here, by scenarios.Evaluate directly: the
// steps simrun.Run takes, written out a second time.
func bareJSON(t *testing.T, file *scenarios.File) (out []byte, expectations int) {
	t.Helper()
	r, err := sim.Run(context.Background(), file.Scenario, sim.Options{})
	if err != nil {
		t.Fatal(err)
	}
	for i := range file.Expect {
		e := &file.Expect[i]
		if len(e.With) > 0 {
			continue
		}
		outs, err := scenarios.Evaluate(file.Scenario.Name, e, r)
		if err != nil {
			t.Fatal(err)
		}
		for _, o := range outs {
			r.Expectations = append(r.Expectations, sim.ExpectationResult{Text: o.Claim(), OK: o.OK, Got: o.Got, Found: o.GotText})
		}
	}
	var b bytes.Buffer
	if err := report.WriteJSONWith(context.Background(), &b, r, report.WriteOptions{}); err != nil {
		t.Fatal(err)
	}
	return b.Bytes(), len(r.Expectations)
}

// TestRunJSONIsTheRunWithItsExpectations checks, for every built-in, that
// simrun.Run's JSON is byte for byte a plain run's with the file's
// expectations filled: nothing dropped, added or reordered. (That it is
// also `ratelim sim NAME --format json`'s is cmd/ratelim's
// TestSimJSONIsSimrun.)
func TestRunJSONIsTheRunWithItsExpectations(t *testing.T) {
	names := scenarios.Builtin()
	if testing.Short() {
		names = names[:3]
	}
	withExpectations := 0
	for _, name := range names {
		t.Run(name, func(t *testing.T) {
			file, err := scenarios.Open(name)
			if err != nil {
				t.Fatal(err)
			}
			var got bytes.Buffer
			out, err := simrun.Run(context.Background(), &got, simrun.Options{File: file, Layout: simrun.Layout{Format: "json"}})
			if err != nil {
				t.Fatal(err)
			}
			want, n := bareJSON(t, file)
			if !bytes.Equal(got.Bytes(), want) {
				t.Fatalf("simrun.Run wrote %d bytes, a plain run with its expectations %d: they differ", got.Len(), len(want))
			}
			if len(out.Result.Expectations) != n {
				t.Errorf("Outcome has %d expectations, the file %d", len(out.Result.Expectations), n)
			}
			if n > 0 {
				withExpectations++
			}
		})
	}
	if withExpectations == 0 {
		t.Error("no built-in had an expectation: the comparison checked none being filled")
	}
}

// TestRunWithSettingsLeavesExpectations checks that a setting changes the
// run (--rate is applied) and leaves the file's expectations out, as
// `ratelim sim NAME --rate R` does: they are about the file as written.
func TestRunWithSettingsLeavesExpectations(t *testing.T) {
	file, err := scenarios.Open("runaway-healthcheck")
	if err != nil {
		t.Fatal(err)
	}
	run := func(sets []scenarios.Setting) (*simrun.Outcome, string) {
		var b bytes.Buffer
		out, err := simrun.Run(context.Background(), &b, simrun.Options{File: file, Settings: sets, Layout: simrun.Layout{Format: "json"}})
		if err != nil {
			t.Fatal(err)
		}
		return out, b.String()
	}
	asWritten, plain := run(nil)
	changed, faster := run([]scenarios.Setting{{Name: "rate", Value: "1000/s", Flag: "--rate"}})
	if len(asWritten.Result.Expectations) == 0 || strings.Contains(plain, `"expectations": [],`) {
		t.Fatal("runaway-healthcheck as written: no expectations filled")
	}
	if len(changed.Result.Expectations) != 0 || !strings.Contains(faster, `"expectations": [],`) {
		t.Errorf("with --rate 1000/s: %d expectations filled, want none", len(changed.Result.Expectations))
	}
	if changed.File.Scenario.Limit.Params == asWritten.File.Scenario.Limit.Params || faster == plain {
		t.Errorf("--rate 1000/s left the limit and the run as they were: %+v", changed.File.Scenario.Limit.Params)
	}
}

// TestRunRefusesBadInput checks that what a user typed is refused with
// the field and what is wanted, and nothing written.
func TestRunRefusesBadInput(t *testing.T) {
	file, err := scenarios.Open("partition")
	if err != nil {
		t.Fatal(err)
	}
	for _, tc := range []struct {
		name string
		opts simrun.Options
		want string
	}{
		{"bad rate", simrun.Options{File: file, Settings: []scenarios.Setting{{Name: "rate", Value: "fast", Flag: "--rate"}}, Layout: simrun.Layout{Format: "json"}}, "--rate"},
		{"bad format", simrun.Options{File: file, Layout: simrun.Layout{Format: "yaml"}}, "format: \"yaml\""},
		{"no file", simrun.Options{Layout: simrun.Layout{Format: "json"}}, "no scenario file"},
		{"too many requests", simrun.Options{File: file, Sim: sim.Options{MaxRequests: 10}, Layout: simrun.Layout{Format: "json"}}, "partition"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			var b bytes.Buffer
			_, err := simrun.Run(context.Background(), &b, tc.opts)
			if err == nil || !strings.Contains(err.Error(), tc.want) {
				t.Fatalf("err %v, want one naming %q", err, tc.want)
			}
			if b.Len() != 0 {
				t.Errorf("wrote %d bytes on an error", b.Len())
			}
		})
	}
}
