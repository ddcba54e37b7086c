package report

import (
	"bytes"
	"context"
	"encoding/json"
	"slices"
	"strings"
	"testing"
	"time"
	"unicode/utf8"

	"github.com/ratelim/ratelim/algorithms"
	"github.com/ratelim/ratelim/scenarios"
	"github.com/ratelim/ratelim/sim"
	"github.com/ratelim/ratelim/store"
)

// hammer is one client at 1000/s against 10/s burst 20 for 10 s, on
// servers of the given topology.
func hammer(kind sim.TopologyKind, servers int) sim.Scenario {
	return sim.Scenario{
		Name: "hammer", Duration: 10 * time.Second, Step: time.Second, Seed: 1,
		Servers: servers, Balancer: sim.RoundRobin,
		Limit:    sim.Limit{Algorithm: "token-bucket", Params: algorithms.Params{Rate: algorithms.Rate{N: 10, Per: time.Second}, Burst: 20}, Key: sim.KeyAuto},
		Topology: sim.Topology{Kind: kind, RTT: 500 * time.Microsecond, OnError: store.FailOpen, Clock: sim.ServerClock, PrimaryStopsAfter: sim.PrimaryNeverStops},
		Clients:  []sim.Client{{Name: "c", APIKey: "k", Traffic: []sim.Traffic{{Pattern: sim.Constant, Rate: algorithms.Rate{N: 1000, Per: time.Second}}}, Retry: sim.Retry{Policy: sim.RetryNone}}},
	}
}

func runScenario(t *testing.T, sc sim.Scenario) *sim.Result {
	t.Helper()
	r, err := sim.Run(context.Background(), sc, sim.Options{})
	if err != nil {
		t.Fatal(err)
	}
	return r
}

func TestWriteTableSaysWhatToNotice(t *testing.T) {
	var b strings.Builder
	if err := WriteTable(&b, runScenario(t, hammer(sim.Local, 4))); err != nil {
		t.Fatal(err)
	}
	// The findings wrap at 80 columns: read the table as words.
	out := strings.Join(strings.Fields(b.String()), " ")
	for _, want := range []string{"hammer · token-bucket · local on memory · 4 servers", "limit 10/s, burst 20", "admitted 4.00× what one exact limiter would", "4 servers, each with its own jar"} {
		if !strings.Contains(out, want) {
			t.Errorf("table lacks %q:\n%s", want, out)
		}
	}
	var c strings.Builder
	if err := WriteCSVWith(context.Background(), &c, runScenario(t, hammer(sim.Shared, 1)), WriteOptions{Dense: true}); err != nil {
		t.Fatal(err)
	}
	lines := strings.Split(strings.TrimSpace(c.String()), "\n")
	// Dense: 10 steps of the one client, then 10 of its key's state in the
	// one copy.
	if len(lines) != 21 || lines[0] != strings.Join(CSVHeader(), ",") || !strings.HasPrefix(lines[1], "hammer,token-bucket,shared,1,fail-open,1,client,0,c,k,,1000,") ||
		!strings.HasPrefix(lines[11], "hammer,token-bucket,shared,1,fail-open,1,state,1,,k,shared,") {
		t.Errorf("CSV: %d lines, starting %q / %q", len(lines), lines[0], lines[1])
	}
}

func TestWrap(t *testing.T) {
	text := "office-1…10 lost 75 requests sending under their share of key 203.0.113.7 (20/s ÷ 11 clients)"
	lines := Wrap(text, 30)
	for _, l := range lines {
		if n := len([]rune(l)); n > 30 {
			t.Errorf("line %q is %d runes, want at most 30", l, n)
		}
	}
	if got := strings.Join(lines, " "); got != text {
		t.Errorf("rejoined %q, want %q", got, text)
	}
	if got := Wrap("a-very-long-word b", 5); !slices.Equal(got, []string{"a-very-long-word", "b"}) {
		t.Errorf("a word longer than the width: %q", got)
	}
	for _, tt := range []struct {
		text  string
		width int
		want  []string
	}{
		{"", 10, []string{""}},
		{"  ", 10, []string{""}},
		{"short", 10, []string{"short"}},
		{"one two three four", 9, []string{"one two", "three", "four"}},
		{"a verylongword b", 4, []string{"a", "verylongword", "b"}},
		{"2× the limit", 6, []string{"2× the", "limit"}}, // runes, not bytes
	} {
		if got := Wrap(tt.text, tt.width); !slices.Equal(got, tt.want) {
			t.Errorf("Wrap(%q, %d) = %q, want %q", tt.text, tt.width, got, tt.want)
		}
	}
}

// WriteJSON streams the timeline, and its bytes are json.Encoder's on the
// whole result: every built-in, and names that JSON must escape.
func TestWriteJSONIsTheEncodersBytes(t *testing.T) {
	var results []*sim.Result
	for _, name := range scenarios.Builtin() {
		f, err := scenarios.Open(name)
		if err != nil {
			t.Fatal(err)
		}
		results = append(results, runScenario(t, f.Scenario))
	}
	odd := hammer(sim.Shared, 1)
	odd.Clients[0].Name = `a "<b>" & \ é`
	results = append(results, runScenario(t, odd))
	empty := *results[0]
	empty.Timeline = nil
	results = append(results, &empty)
	// Each streamed array empty, nil or whole, alone and together.
	for _, clear := range []func(*sim.Result){
		func(r *sim.Result) { r.Clients = nil },
		func(r *sim.Result) { r.Keys = []sim.KeyResult{} },
		func(r *sim.Result) { r.State = nil },
		func(r *sim.Result) { r.Clients, r.Keys, r.Timeline, r.State = nil, nil, nil, nil },
	} {
		r := *results[0]
		clear(&r)
		results = append(results, &r)
	}
	// A series longer than a batch of points (writeSeries), one with a
	// limit's name, and empty and nil points.
	long := *results[0]
	ser := sim.StateSeries{Key: "k", Copy: "shared", Limit: "per-second"}
	for i := range 3*checkEvery + 17 {
		ser.TS = append(ser.TS, float64(i+1)*0.001)
		ser.Remaining = append(ser.Remaining, int64(i/1000%3)-1)
	}
	long.State = []sim.StateSeries{ser, {Key: "e", Copy: "shared", TS: []float64{}}, {Key: "n", Copy: "shared"}}
	results = append(results, &long)
	for _, r := range results {
		// Dense, the encoder's bytes of r densified (a run's Result is
		// sparse); sparse, of r.Sparse().
		for _, dense := range []bool{true, false} {
			var want, got bytes.Buffer
			enc := json.NewEncoder(&want)
			enc.SetIndent("", "  ")
			enc.SetEscapeHTML(false)
			whole := r.Sparse()
			if dense {
				densified := *r
				densified.Densify()
				whole = &densified
			}
			if err := enc.Encode(whole); err != nil {
				t.Fatal(err)
			}
			streamed, err := streamJSON(context.Background(), &got, r, dense)
			if err != nil {
				t.Fatal(err)
			}
			if !streamed {
				// WriteJSON would still be right, encoding the whole: but
				// then it holds the whole in memory, which is what it is
				// for not to do.
				t.Errorf("%s: not streamed (the encoder's layout was not recognised)", r.Scenario)
				continue
			}
			if !bytes.Equal(got.Bytes(), want.Bytes()) {
				t.Errorf("%s dense=%v: streamed JSON differs from the encoder's (%d vs %d bytes)", r.Scenario, dense, got.Len(), want.Len())
			}
		}
	}
}

// A table that would pass 80 columns leaves out, in order, the latency,
// the peak and the cost sent; --wide keeps them. Here a live run's p99
// beside the cost columns of expensive-search: 87 columns before.
func TestTableFits80Columns(t *testing.T) {
	r := run(t, "expensive-search")
	r.Live = true
	for i := range r.Clients {
		r.Clients[i].LatencyMs.P99 = 0.912
	}
	for _, wide := range []bool{false, true} {
		var b strings.Builder
		if err := WriteTableRows(&b, r, TableOptions{Wide: wide}); err != nil {
			t.Fatal(err)
		}
		widest := 0
		for _, line := range strings.Split(b.String(), "\n") {
			widest = max(widest, utf8.RuneCountInString(line))
		}
		if hasP99 := strings.Contains(b.String(), "p99 ms"); hasP99 != wide || (!wide && widest > 80) || !strings.Contains(b.String(), "cost allowed") {
			t.Errorf("wide=%v: %d columns wide, p99 shown %v:\n%s", wide, widest, hasP99, b.String())
		}
	}
}
