package main

import (
	"bytes"
	"context"
	"encoding/csv"
	"encoding/json"
	"fmt"
	"io"
	"math"
	"slices"
	"strconv"
	"strings"

	"github.com/spf13/cobra"
	"go.yaml.in/yaml/v3"

	"github.com/ratelim/ratelim/algorithms"
	"github.com/ratelim/ratelim/internal/escape"
	"github.com/ratelim/ratelim/internal/words"
	"github.com/ratelim/ratelim/report"
	"github.com/ratelim/ratelim/scenarios"
	"github.com/ratelim/ratelim/sim"
	"github.com/ratelim/ratelim/simrun"
	"github.com/ratelim/ratelim/store"
)

// allTopologies are the topology kinds a scenario file may name;
// defaultTopologies, those compare runs unless told: all but synced,
// two-tier, owner and regions, whose own knobs (the interval, the local
// tier, the sync wait, the regions and their clients) are axes of their
// own (sim --vs sync-interval=), and whose columns would take the
// matrix past 80 columns.
var (
	allTopologies     = scenarios.Choices("topology.kind")
	defaultTopologies = slices.DeleteFunc(slices.Clone(allTopologies), func(k string) bool {
		return k == string(sim.Synced) || k == string(sim.TwoTier) || k == string(sim.Owner) || k == string(sim.Regions)
	})
)

type compareOptions struct {
	streams
	Scenario   string
	Algorithms []string
	Topologies []string
	Format     string
	Limits     runLimits
	Plot       plotFlags
	// Vs are the --vs FIELD=VALUE flags: the matrix again, so changed.
	Vs   []string
	over overrides
}

func newCmdCompare(s streams, runF func(*compareOptions) error) *cobra.Command {
	opts := &compareOptions{streams: s}
	cmd := &cobra.Command{
		Use:   "compare SCENARIO|FILE",
		Short: "Run a scenario under every algorithm × topology and compare them",
		Long: `Run a scenario under every algorithm and every topology, in parallel (the
results are those of sequential runs), and print a matrix per figure:

  admitted    what was admitted ÷ what one exact limiter admits on the same
              arrivals (the token bucket for the bucket algorithms, a sliding
              log of the same limit for the window ones)
  peak        the worst client's most admitted in one second ÷ the exact
              limiter's
  false allow requests admitted that the exact limiter refused, % of sent
  false deny  requests refused that the exact limiter admitted, % of sent

The worst cell of each matrix is marked with *. The store is memory unless
--store says otherwise. Flags override the scenario as for 'sim', but for
--algorithm and --topology (the matrix's own); --vs FIELD=VALUE makes every
matrix again so changed, e.g. --vs limit.burst=50.`,
		Example: `  ratelim compare window-boundary
  ratelim compare runaway-healthcheck --topologies local,shared --servers 8
  ratelim compare partition --format json
  ratelim compare runaway-healthcheck --servers 8 --vs burst=100`,
		Args: exactArgs(1, "a scenario name or file (see 'ratelim scenarios')"),
		RunE: func(cmd *cobra.Command, args []string) error {
			opts.Scenario = args[0]
			opts.over.visit(cmd)
			if runF != nil {
				return runF(opts)
			}
			return compareRun(cmd.Context(), opts)
		},
	}
	f := cmd.Flags()
	f.StringSliceVar(&opts.Algorithms, "algorithms", []string{"exact"}, "algorithms to compare, comma-separated; exact (the six), peers (the libraries modelled) and all name groups")
	f.StringSliceVar(&opts.Topologies, "topologies", defaultTopologies, "topologies to compare, comma-separated (also: synced, two-tier, owner; regions only for a file that has them)")
	f.StringVar(&opts.Format, "format", "table", "output: table, json or csv (one row per cell)")
	f.StringArrayVar(&opts.Vs, "vs", nil, "FIELD=VALUE: the matrix again so changed, e.g. --vs limit.burst=50 (repeat for several fields)")
	addLimitFlags(f, &opts.Limits, true)
	// The algorithm and the topology are the matrix's own: --algorithms
	// and --topologies.
	addOverrideFlags(cmd, &opts.over, "algorithm", "topology")
	addWallClockFlag(cmd, &opts.over)
	addPlotFlags(cmd, &opts.Plot)
	return cmd
}

// Cell is one algorithm × topology run, summarised.
type Cell struct {
	Algorithm       string      `json:"algorithm"`
	Topology        string      `json:"topology"`
	AdmittedRatio   float64     `json:"admitted_ratio"`
	PeakRatio       float64     `json:"peak_ratio"`
	FalseAllowPct   float64     `json:"false_allow_pct"`
	FalseDenyPct    float64     `json:"false_deny_pct"`
	FailedOpen      int64       `json:"failed_open"`
	FailedClosed    int64       `json:"failed_closed"`
	Result          *sim.Result `json:"result"`
	worstPeakClient string
}

// comparePlan is what `ratelim compare` runs: one scenario per cell, in
// the cells' order (algorithm by algorithm, each on every topology).
type comparePlan struct {
	file    *scenarios.File
	base    sim.Scenario
	scs     []sim.Scenario
	cells   []Cell
	simOpts sim.Options
	// With --vs: its settings, the labels of the two matrices, and the
	// second matrix's base, scenarios and cells, in the first's order.
	vs             *versus
	labelA, labelB string
	baseB          sim.Scenario
	scsB           []sim.Scenario
	cellsB         []Cell
}

// checkMatrixFields refuses a --set or --vs of the algorithm or the
// topology's kind: each cell sets them (--algorithms, --topologies), so
// the setting would change nothing.
func checkMatrixFields(file *scenarios.File, over overrides, vs *versus) error {
	sets, err := over.settings()
	if err != nil {
		return err
	}
	if vs != nil {
		sets = append(sets, vs.Settings...)
	}
	for _, s := range sets {
		target, err := scenarios.SettingTarget(file, s.Name)
		if err != nil {
			continue // Apply has said why
		}
		switch {
		case target == "limit.algorithm" || strings.HasPrefix(target, "limits[") && strings.HasSuffix(target, "].algorithm"):
			return badInput("%s: compare's matrix sets it (want --algorithms)", s.Flag)
		case target == "topology.kind":
			return badInput("%s: compare's matrix sets it (want --topologies)", s.Flag)
		case (target == "limit" || target == "limits" || strings.HasPrefix(target, "limits[")) && setsAlgorithm(s.Value):
			// A whole limit with an algorithm: the cells' would
			// replace it, and B's label would name one it never ran.
			return badInput("%s: compare's matrix sets the algorithm (want the mapping without algorithm:, and --algorithms)", s.Flag)
		}
	}
	return nil
}

// setsAlgorithm reports whether a setting's value, a limit's mapping or
// a list of them (limits=[…]), names an algorithm.
func setsAlgorithm(value string) bool {
	var v any
	if yaml.Unmarshal([]byte(value), &v) != nil {
		return false // Apply says why
	}
	limits, ok := v.([]any)
	if !ok {
		limits = []any{v}
	}
	for _, l := range limits {
		if m, ok := l.(map[string]any); ok {
			if _, ok := m["algorithm"]; ok {
				return true
			}
		}
	}
	return false
}

// planCompare checks opts and makes each cell's scenario, running nothing.
func planCompare(opts *compareOptions) (*comparePlan, error) {
	if err := checkOutputFlags(opts.Format, &opts.Plot); err != nil {
		return nil, err
	}
	if opts.Plot.format == "gif" {
		return nil, badInput("--plot: compare draws a still grid; write it as .png or .svg")
	}
	simOpts, err := opts.Limits.apply()
	if err != nil {
		return nil, err
	}
	opts.Algorithms = expandAlgorithms(opts.Algorithms)
	for _, a := range opts.Algorithms {
		if !contains(algorithms.Names(), a) {
			return nil, badInput("--algorithms: unknown algorithm %q (want exact, peers, all or some of %s)", a, strings.Join(algorithms.Names(), ", "))
		}
	}
	for _, t := range opts.Topologies {
		if !contains(allTopologies, t) {
			return nil, badInput("--topologies: unknown topology %q (want %s)", t, strings.Join(allTopologies, ", "))
		}
	}
	vs, err := parseVersus(opts.Vs)
	if err != nil {
		return nil, err
	}
	if vs != nil && opts.Plot.Path != "" {
		return nil, badInput("--plot: --vs makes two matrices, and the grid draws one (want compare run once per setting, each with --plot)")
	}
	file, run, err := opts.loadFile(opts.Scenario, opts.over)
	if err != nil {
		return nil, err
	}
	if err := checkMatrixFields(file, opts.over, vs); err != nil {
		return nil, err
	}
	base := run.Scenario
	if base.Limit.Algorithm == "concurrency" && slices.Equal(opts.Algorithms, algorithms.ExactNames()) {
		// The default, exact, are rate limiters: a concurrency scenario
		// compares its own limiter across the topologies.
		opts.Algorithms = []string{"concurrency"}
	}
	p := &comparePlan{file: file, base: base, simOpts: simOpts}
	var skipped []string
	for _, a := range opts.Algorithms {
		for _, t := range opts.Topologies {
			sc, err := sim.WithAlgorithm(base, a)
			if err != nil {
				return nil, badInput("%s: --algorithms %s: the scenario's limit does not suit it: %v", scenarioLabel(file), a, err)
			}
			sc = sim.WithTopology(sc, sim.TopologyKind(t))
			if err := sim.Placement(&sc); err != nil {
				skipped = append(skipped, a+" on "+t)
				continue
			}
			p.scs = append(p.scs, sc)
			p.cells = append(p.cells, Cell{Algorithm: a, Topology: t})
		}
	}
	if len(p.cells) == 0 {
		return nil, badInput("%s: no algorithm and topology asked for can run it (%s)", scenarioLabel(file), strings.Join(skipped, ", "))
	}
	if len(skipped) > 0 {
		// The table is a grid: keep the topologies that ran. A topology
		// refuses a concurrency limit, and every cell of a concurrency
		// scenario is one, so whole columns go.
		var kept []string
		for _, t := range opts.Topologies {
			if slices.ContainsFunc(p.cells, func(c Cell) bool { return c.Topology == t }) {
				kept = append(kept, t)
			}
		}
		opts.Topologies = kept
	}
	if len(skipped) > 0 && opts.ErrOut != nil {
		fmt.Fprintf(opts.ErrOut, "ratelim: compare: left out %s: a concurrency limit runs on local and shared alone\n", strings.Join(skipped, ", "))
	}
	if vs != nil {
		runB, err := vs.apply(run)
		if err != nil {
			return nil, err
		}
		p.vs, p.baseB = vs, runB.Scenario
		p.labelA, p.labelB = vs.labels(run, runB)
		// The same cells, so that the matrices line up.
		for _, c := range p.cells {
			sc, err := sim.WithAlgorithm(p.baseB, c.Algorithm)
			if err == nil {
				sc = sim.WithTopology(sc, sim.TopologyKind(c.Topology))
				err = sim.Placement(&sc)
			}
			if err != nil {
				return nil, badInput("%s: --vs: %s on %s, which the first matrix runs, cannot run so changed: %v", scenarioLabel(file), c.Algorithm, c.Topology, err)
			}
			p.scsB = append(p.scsB, sc)
			p.cellsB = append(p.cellsB, Cell{Algorithm: c.Algorithm, Topology: c.Topology})
		}
	}
	return p, nil
}

// expandAlgorithms replaces the group names exact, peers and all by the
// algorithms they stand for, keeping the order given and dropping repeats.
func expandAlgorithms(names []string) []string {
	var out []string
	add := func(n string) {
		if !contains(out, n) {
			out = append(out, n)
		}
	}
	for _, n := range names {
		switch n {
		case "exact":
			for _, a := range algorithms.ExactNames() {
				add(a)
			}
		case "peers":
			for _, a := range algorithms.PeerNames() {
				add(a)
			}
		case "all":
			// The rate limiters: the concurrency limiter counts requests
			// in flight, and a rate scenario has none to compare.
			for _, a := range append(algorithms.ExactNames(), algorithms.PeerNames()...) {
				add(a)
			}
		default:
			add(n)
		}
	}
	return out
}

func compareRun(ctx context.Context, opts *compareOptions) error {
	if ctx == nil {
		ctx = context.Background()
	}
	p, err := planCompare(opts)
	if err != nil {
		return err
	}
	file, base, scs, cells, simOpts := p.file, p.base, p.scs, p.cells, p.simOpts
	// Both matrices' runs at once, when --vs makes a second.
	all := append(slices.Clone(scs), p.scsB...)
	results, errs := sim.RunAll(ctx, all, simOpts, opts.Limits.Workers)
	for i, err := range errs {
		c := &cells[i%len(cells)]
		if i >= len(cells) {
			c = &p.cellsB[i-len(cells)]
		}
		label := fmt.Sprintf("%s with %s on %s", scenarioLabel(file), c.Algorithm, c.Topology)
		if err := runError(opts.ErrOut, label, err); err != nil {
			return err
		}
		c.summarise(results[i])
	}
	if p.vs != nil {
		return writeCompareVersus(opts, p)
	}
	if err := opts.Plot.render(func(w io.Writer) error { return renderCompare(w, base.Name, cells, opts.Plot) }); err != nil {
		return err
	}
	switch opts.Format {
	case "json":
		return writeCompareJSON(opts.Out, base.Name, cells)
	case "csv":
		return writeCompareCSV(opts.Out, cells)
	}
	return writeCompareTable(opts.Out, base, cells, opts.Algorithms, opts.Topologies)
}

func (c *Cell) summarise(r *sim.Result) {
	for _, k := range r.Keys {
		if k.IdealMaxAllowed1s > 0 {
			if ratio := float64(k.MaxAllowed1s) / float64(k.IdealMaxAllowed1s); ratio > c.PeakRatio {
				c.PeakRatio, c.worstPeakClient = ratio, k.Key
			}
		}
	}
	t := r.Totals()
	c.FailedOpen, c.FailedClosed = t.FailedOpen, t.FailedClosed
	if t.IdealAllowed > 0 {
		c.AdmittedRatio = float64(t.Allowed) / float64(t.IdealAllowed)
	}
	if t.Sent > 0 {
		c.FalseAllowPct = 100 * float64(t.FalseAllows) / float64(t.Sent)
		c.FalseDenyPct = 100 * float64(t.FalseDenies) / float64(t.Sent)
	}
	// The cell's JSON carries the run's summary, not its timeline.
	summary := *r
	summary.Timeline, summary.State = nil, nil
	c.Result = &summary
}

func writeCompareTable(w io.Writer, sc sim.Scenario, cells []Cell, algs, topos []string) error {
	fmt.Fprintf(w, "%s · %d %s · seed %d · %s · store %s\n", escape.Text(sc.Name), sc.Servers, words.Plural(sc.Servers, "server", "servers"), sc.Seed, sc.Duration, store.Redacted(sc.Topology.Store))
	matrices := []struct {
		title  string
		value  func(Cell) float64
		format func(float64) string
		worst  func(a, b float64) bool // a is worse than b
	}{
		{"admitted ÷ exact limiter", func(c Cell) float64 { return c.AdmittedRatio }, ratioText, func(a, b float64) bool { return distance(a) > distance(b) }},
		{"worst 1-second peak ÷ exact limiter's", func(c Cell) float64 { return c.PeakRatio }, ratioText, func(a, b float64) bool { return a > b }},
		{"false allows, % of sent", func(c Cell) float64 { return c.FalseAllowPct }, pctText, func(a, b float64) bool { return a > b }},
		{"false denies, % of sent", func(c Cell) float64 { return c.FalseDenyPct }, pctText, func(a, b float64) bool { return a > b }},
	}
	width := len("algorithm")
	for _, a := range algs {
		width = max(width, len(a))
	}
	for _, m := range matrices {
		worst := 0
		for i := range cells {
			if m.worst(m.value(cells[i]), m.value(cells[worst])) {
				worst = i
			}
		}
		fmt.Fprintf(w, "\n%s\n%-*s", m.title, width, "")
		for _, t := range topos {
			fmt.Fprintf(w, "  %11s", t)
		}
		fmt.Fprintln(w)
		for ai, a := range algs {
			fmt.Fprintf(w, "%-*s", width, a)
			for ti := range topos {
				i := ai*len(topos) + ti
				mark := " "
				if i == worst && m.worst(m.value(cells[i]), neutral(m.title)) {
					mark = "*"
				}
				fmt.Fprintf(w, "  %10s%s", m.format(m.value(cells[i])), mark)
			}
			fmt.Fprintln(w)
		}
	}
	fmt.Fprintln(w, "\n* marks each matrix's worst cell")
	for _, line := range compareFindings(sc, cells) {
		// A line may name a client (the worst peak's) or quote a peer's
		// finding, which does.
		for _, l := range report.Wrap(escape.Text(line), 80) {
			fmt.Fprintln(w, l)
		}
	}
	return nil
}

// neutral is the value no cell is marked worst against: 1× for ratios, 0%
// for percentages, so that a matrix where every cell is exact marks none.
func neutral(title string) float64 {
	if strings.Contains(title, "%") {
		return 0
	}
	return 1
}

func distance(ratio float64) float64 {
	if ratio <= 0 {
		return 0
	}
	if ratio < 1 {
		return 1/ratio - 1
	}
	return ratio - 1
}

func ratioText(v float64) string { return strconv.FormatFloat(v, 'f', 2, 64) + "×" }

func pctText(v float64) string {
	switch {
	case v == 0:
		return "0%"
	case v < 0.01:
		return strconv.FormatFloat(v, 'f', 4, 64) + "%"
	}
	return strconv.FormatFloat(v, 'f', 2, 64) + "%"
}

// compareFindings says in a few lines what the matrix shows. A topology's
// effect is measured against the same algorithm on the shared atomic store,
// so that an algorithm's own flaw (the fixed window's double burst) is not
// blamed on where its counter lives; an algorithm's effect is read from the
// shared column, where no topology adds anything of its own.
func compareFindings(sc sim.Scenario, cells []Cell) []string {
	why := map[string]string{
		string(sim.Local):      fmt.Sprintf("%d %s, each with its own jar", sc.Servers, words.Plural(sc.Servers, "server", "servers")),
		string(sim.Racy):       "servers read the same state before either wrote it back",
		string(sim.SplitBrain): "each side of the partition counts in its own copy",
		string(sim.Synced):     "each server counts alone between its pushes",
		string(sim.TwoTier):    "each server's local tier passed what the shared store did not decide",
		string(sim.Owner):      "each node answers from its cache until the key's owner broadcasts",
		string(sim.Regions):    "each region counts in its own store, the others' admissions late or never",
	}
	shared := map[string]Cell{}
	for _, c := range cells {
		if c.Topology == string(sim.Shared) {
			shared[c.Algorithm] = c
		}
	}
	var lines []string
	for _, topo := range allTopologies {
		if topo == string(sim.Shared) {
			continue
		}
		lo, hi := math.Inf(1), 0.0
		for _, c := range cells {
			base, ok := shared[c.Algorithm]
			if c.Topology != topo || !ok || base.AdmittedRatio == 0 {
				continue
			}
			effect := c.AdmittedRatio / base.AdmittedRatio
			lo, hi = math.Min(lo, effect), math.Max(hi, effect)
		}
		if hi <= 1.05 {
			continue
		}
		span := ratioText(hi)
		if hi-lo >= 0.005 {
			span = ratioText(lo) + "–" + ratioText(hi)
		}
		lines = append(lines, fmt.Sprintf("%s admits %s what the shared store admits: %s", topo, span, why[topo]))
	}
	failOpen := false
	for _, c := range cells {
		if c.Topology != string(sim.Shared) {
			continue
		}
		if c.FailedOpen > 0 || c.FailedClosed > 0 {
			failOpen = failOpen || c.FailedOpen > 0
			continue
		}
		if c.PeakRatio >= 1.2 {
			lines = append(lines, fmt.Sprintf("%s lets %s the exact one-second peak through (%s), on the atomic store: the algorithm, not the topology", c.Algorithm, ratioText(c.PeakRatio), c.worstPeakClient))
		}
	}
	// What a library did otherwise than the exact algorithm of its family,
	// on the atomic store, in its own words (its run's peer finding).
	for _, c := range cells {
		if c.Topology != string(sim.Shared) || sim.PeerOf(c.Algorithm) == nil || c.Result == nil {
			continue
		}
		for _, f := range c.Result.Findings {
			if f.Kind == sim.FindingPeer {
				lines = append(lines, f.Text)
			}
		}
	}
	for _, c := range cells {
		if c.Topology == string(sim.Shared) && (c.FailedOpen > 0 || c.FailedClosed > 0) {
			line := fmt.Sprintf("on the shared store, %s requests (%s) failed open and %s failed closed while it was unreachable", words.Thousands(c.FailedOpen), c.Algorithm, words.Thousands(c.FailedClosed))
			if failOpen {
				line += ": failing open is what lets the peaks through"
			}
			lines = append(lines, line)
			break
		}
	}
	if len(lines) == 0 {
		lines = append(lines, "every cell admits within 5% of the shared store, and the shared store within 20% of the exact peak")
	}
	return lines
}

// writeCompareVersus writes compare --vs: each matrix under its label (a
// table), both runs' cells (json), or a row per cell with its run (csv).
func writeCompareVersus(opts *compareOptions, p *comparePlan) error {
	labels := [2]string{p.labelA, p.labelB}
	switch opts.Format {
	case "json":
		enc := json.NewEncoder(opts.Out)
		enc.SetIndent("", "  ")
		enc.SetEscapeHTML(false)
		type run struct {
			Label string `json:"label"`
			Cells []Cell `json:"cells"`
		}
		return enc.Encode(struct {
			Schema   string            `json:"schema"`
			Scenario string            `json:"scenario"`
			Changed  map[string]string `json:"changed"`
			Runs     [2]run            `json:"runs"`
		}{"ratelim.compare-vs/v1", p.base.Name, p.vs.set, [2]run{{labels[0], p.cells}, {labels[1], p.cellsB}}})
	case "csv":
		cw := csv.NewWriter(opts.Out)
		for i, cells := range [][]Cell{p.cells, p.cellsB} {
			var b bytes.Buffer
			if err := writeCompareCSV(&b, cells); err != nil {
				return err
			}
			rows, err := csv.NewReader(&b).ReadAll()
			if err != nil {
				return err
			}
			for j, row := range rows {
				if j == 0 && i > 0 {
					continue // one header
				}
				run := labels[i]
				if j == 0 {
					run = "run"
				}
				cw.Write(append([]string{run}, row...))
			}
		}
		cw.Flush()
		return cw.Error()
	}
	for i, m := range []struct {
		base  sim.Scenario
		cells []Cell
	}{{p.base, p.cells}, {p.baseB, p.cellsB}} {
		if i > 0 {
			fmt.Fprintln(opts.Out)
		}
		simrun.WriteRunHeading(opts.Out, [2]string{"A", "B"}[i], escape.Text(labels[i]))
		if err := writeCompareTable(opts.Out, m.base, m.cells, opts.Algorithms, opts.Topologies); err != nil {
			return err
		}
	}
	return nil
}

func writeCompareJSON(w io.Writer, scenario string, cells []Cell) error {
	enc := json.NewEncoder(w)
	enc.SetIndent("", "  ")
	enc.SetEscapeHTML(false)
	return enc.Encode(struct {
		Schema   string `json:"schema"`
		Scenario string `json:"scenario"`
		Cells    []Cell `json:"cells"`
	}{"ratelim.compare/v1", scenario, cells})
}

func writeCompareCSV(w io.Writer, cells []Cell) error {
	cw := csv.NewWriter(w)
	cw.Write([]string{"algorithm", "topology", "admitted_ratio", "peak_ratio", "false_allow_pct", "false_deny_pct", "failed_open", "failed_closed", "sent", "allowed", "ideal_allowed"})
	f := func(v float64) string { return strconv.FormatFloat(v, 'f', -1, 64) }
	for _, c := range cells {
		t := c.Result.Totals()
		cw.Write([]string{c.Algorithm, c.Topology, f(c.AdmittedRatio), f(c.PeakRatio), f(c.FalseAllowPct), f(c.FalseDenyPct),
			strconv.FormatInt(c.FailedOpen, 10), strconv.FormatInt(c.FailedClosed, 10),
			strconv.FormatInt(t.Sent, 10), strconv.FormatInt(t.Allowed, 10), strconv.FormatInt(t.IdealAllowed, 10)})
	}
	cw.Flush()
	return cw.Error()
}

func contains(list []string, s string) bool {
	for _, x := range list {
		if x == s {
			return true
		}
	}
	return false
}
