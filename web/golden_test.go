package web

import (
	"bytes"
	"context"
	"encoding/json"
	"flag"
	"fmt"
	"os"
	"path/filepath"
	"testing"
)

var update = flag.Bool("update", false, "rewrite the goldens under testdata/")

// TestResponseGoldens pins the Response JSON the page reads, field by
// field, for a run with settings and a side by side, a run with a
// question, and a failure: a change of the contract shows here as a diff.
// The pictures and results are ratelim's own, pinned elsewhere (plots,
// report): here each is a placeholder saying what it is.
func TestResponseGoldens(t *testing.T) {
	for _, tc := range []struct {
		golden string
		state  State
	}{
		{"runaway-healthcheck-vs.json", State{Builtin: "runaway-healthcheck", Settings: []Setting{{"limit.burst", "20"}}, Vs: []Setting{{"topology", "local"}}}},
		{"nat.json", State{Builtin: "nat"}},
		{"error.json", State{YAML: "name: lab\nduration: 30s\nlimit: {rate: 10/s, burst: lots}\nclients: [{name: a, traffic: {pattern: constant, rate: 5/s}}]\n", FileName: "lab.yaml"}},
	} {
		var p Playground
		resp := p.Run(context.Background(), tc.state)
		if resp.Timeline != "" {
			resp.Timeline = "<svg: plots.Timeline of run A>"
		}
		if resp.Result != nil {
			resp.Result = json.RawMessage(`"ratelim sim --format json of run A"`)
		}
		if resp.ResultJSON != "" {
			resp.ResultJSON = "ratelim sim --format json's bytes of run A"
		}
		if resp.Table != "" {
			resp.Table = "ratelim sim's table of run A"
		}
		if resp.Scenario != nil {
			resp.Scenario.Source = "the file's text"
		}
		// A choice list is the algorithms' and topologies' registries
		// (every value the field takes; Choices filters them): its length
		// pinned, not every name, so a new algorithm does not rewrite
		// these.
		for i := range resp.Controls {
			if c := &resp.Controls[i]; len(c.Choices) > 1 {
				c.Choices = []string{fmt.Sprintf("%d choices", len(c.Choices))}
			}
		}
		if resp.Vs != nil {
			resp.Vs.Timeline, resp.Vs.Result = "<svg: plots.TimelineVs of A and B>", json.RawMessage(`"ratelim sim --format json of run B"`)
			resp.Vs.ResultJSON = "ratelim sim --format json's bytes of run B"
		}
		var got bytes.Buffer
		enc := json.NewEncoder(&got)
		enc.SetIndent("", "  ")
		enc.SetEscapeHTML(false)
		if err := enc.Encode(resp); err != nil {
			t.Fatal(err)
		}
		path := filepath.Join("testdata", tc.golden)
		if *update {
			if err := os.WriteFile(path, got.Bytes(), 0o644); err != nil {
				t.Fatal(err)
			}
			continue
		}
		want, err := os.ReadFile(path)
		if err != nil {
			t.Fatalf("%v (run go test ./web -run Goldens -update)", err)
		}
		if !bytes.Equal(got.Bytes(), want) {
			t.Errorf("%s: the Response differs from the golden (go test ./web -run Goldens -update, then read the diff):\n%s", tc.golden, got.String())
		}
	}
}
