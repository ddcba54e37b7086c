package replay

// The frontier a limit is chosen on: for each candidate rate, the
// smallest burst that spares every key but the outliers, with headroom,
// each replayed so that every figure a row shows is measured.

import (
	"cmp"
	"context"
	"errors"
	"fmt"
	"math"
	"slices"
	"sync"
	"time"

	"github.com/ratelim/ratelim/algorithms"
	"github.com/ratelim/ratelim/sim"
	"github.com/ratelim/ratelim/trace"
)

// DefaultHeadroom is the margin added to the burst a row needs: 20%.
const DefaultHeadroom = 0.2

// MaxHeadroom bounds FrontierOptions.Headroom: 10, a burst 11 times what
// the bulk needs.
const MaxHeadroom = 10.0

// FrontierOptions choose the rows of a frontier.
type FrontierOptions struct {
	// Headroom is the margin on the burst (or the count in a window)
	// each row needs: burst = ⌈need × (1 + Headroom)⌉, 0 to MaxHeadroom.
	Headroom float64
	// Rate, when set, pins the rate (for the window algorithms, the
	// window, Rate.Per): a row of its own instead of the grid's.
	Rate *algorithms.Rate
	// Window, for the window algorithms, pins the window instead.
	Window time.Duration
	// Quantile, when set, spares that share of the keys (the nearest
	// rank of their bursts) instead of every key but the outliers.
	Quantile float64
	// Workers replay the rows at once (at least 1).
	Workers int
}

// FrontierRow is one candidate limit and what its replay did.
type FrontierRow struct {
	// Params are the limit tried: the rate and burst (or, for the window
	// algorithms, the count a window).
	Params algorithms.Params
	// Need is what spares the keys asked for before headroom: the burst,
	// or the count in the window.
	Need int64
	// SetBy is the key (an index into Log.Keys) whose need Need is: the
	// bulk's busiest at the row, the one a reader should look at before
	// trusting the row; -1 for none.
	SetBy int
	// Predicted are the keys (indexes into Log.Keys) one exact limiter
	// of Params throttles, from their profiles.
	Predicted []int
	// Totals are the replay's through Params: Throttled, Spared and every
	// figure shown are its. Only the totals and the throttled keys of a
	// row are kept, not its run (Frontier.Run is the recommended row's):
	// a frontier holds no more than one run's memory a worker.
	Totals Totals
	// Throttled are the keys the replay refused a request of, most
	// refused first.
	Throttled []ThrottledKey
	// OutliersThrottled counts the outliers among them.
	OutliersThrottled int
	// BelowBulkMean says the row's rate is below the bulk's busiest mean
	// rate × (1 + headroom) (Frontier.MeanFloor): it spares that key only
	// because the log ended, its burst growing with the log's span, so it
	// is shown but never recommended.
	BelowBulkMean bool
	// Profiled is the row's rate's index in the profile's Rates (a
	// window algorithm's: its window's in Windows), where each key's
	// Bursts (Busiest) at it are.
	Profiled int
}

// KeyNeeds is what key i (of Log.Keys) needs not to be throttled by an
// exact limiter of the row: its burst at the row's rate, or its busiest
// count in the row's window.
func (f *Frontier) KeyNeeds(row FrontierRow, i int) int64 {
	if f.Window {
		return int64(f.Keys[i].Busiest[row.Profiled])
	}
	return f.Keys[i].Bursts[row.Profiled]
}

// ThrottledKey is a key a row's replay refused requests of.
type ThrottledKey struct {
	Key      string // as the run names it (redacted when asked)
	Rejected int64
}

// Spared is how many keys the row's replay refused nothing of.
func (r FrontierRow) Spared() int { return r.Totals.Keys - r.Totals.Throttled }

// Frontier is the set of limits a choice is made among.
type Frontier struct {
	// Keys are the log's keys' profiles, in Log.Keys' order.
	Keys []trace.KeyProfile
	// Outliers are the keys far busier than the bulk, by FindOutliers.
	Outliers trace.Outliers
	// Span is the log's span, the mean rates' denominator.
	Span     time.Duration
	Headroom float64
	Quantile float64
	// Window says the rows vary the window (the window algorithms),
	// not the rate.
	Window bool
	// Pinned says the rate (or window) was given, not chosen from a grid.
	Pinned bool
	// AboveGrid, when not 0, is the bulk's busiest second (or the mean
	// floor), above the grid's top rate: no row reaches it.
	AboveGrid float64
	Rows      []FrontierRow
	// Recommended is the index of the recommended row, -1 for none.
	Recommended int
	// MeanFloor is the lowest rate a row may be recommended at, in
	// requests a second: the busiest mean rate of the bulk's keys
	// (BusiestMean, of the key MeanFloorKey), × (1 + Headroom). Below it
	// the bulk's busiest key sends more than the limit refills over the
	// log, and the burst that spares it is the log's excess, growing with
	// its span.
	MeanFloor    float64
	BusiestMean  float64
	MeanFloorKey int // an index into Keys, -1 for none
	// Run is the recommended row's replay, whole (nil when none is
	// recommended): the rows keep only their totals.
	Run *Run
	// Scenario is the scenario the rows were replayed in, each with its
	// own limit: its clients name the keys.
	Scenario sim.Scenario
}

// ProfileRates are the rates a log is profiled at for a frontier: the
// grid, and the pinned rate if it is not on it.
func ProfileRates(pinned *algorithms.Rate) []trace.Rate {
	rates := trace.GridRates()
	if pinned != nil {
		r := *pinned
		if !slices.Contains(rates, r) {
			rates = append(rates, r)
		}
	}
	return rates
}

// Frontier builds the frontier of the log, profiled as it was scanned
// (ScanOptions.Profile, with ProfileRates(opts.Rate)), for sc's
// algorithm, and replays each row on sc's topology. For a bucket
// (token bucket, GCRA, leaky bucket) a row is a rate of the 1-2-5 grid
// from the bulk's median mean rate to its busiest second, and the
// smallest burst that spares the bulk at it; for a window algorithm a row
// is a window of 1s, 10s, 1m and 10m up to the log's span, and the
// largest count of the bulk in it. The bulk is every key but the
// outliers (or, with opts.Quantile, the keys of the smallest needs).
func (l *Log) Frontier(ctx context.Context, sc sim.Scenario, opts FrontierOptions, simOpts sim.Options) (*Frontier, error) {
	if l.Profile == nil {
		return nil, errors.New("replay: the log was scanned without a profile (ScanOptions.Profile)")
	}
	if !(opts.Headroom >= 0 && opts.Headroom <= MaxHeadroom) {
		return nil, fmt.Errorf("headroom: %g is out of range (want 0 to %g)", opts.Headroom, MaxHeadroom)
	}
	byKey := map[string]trace.KeyProfile{}
	for _, k := range l.Profile.Keys() {
		byKey[k.Key] = k
	}
	f := &Frontier{Span: l.Last.Sub(l.First), Headroom: opts.Headroom, Quantile: opts.Quantile, Window: sc.Limit.Params.Window > 0, Recommended: -1, Scenario: sc,
		Pinned: opts.Rate != nil || opts.Window > 0}
	for _, k := range l.Keys {
		f.Keys = append(f.Keys, byKey[k.Key])
	}
	var err error
	if f.Outliers, err = trace.FindOutliers(f.Keys, f.Span); err != nil {
		return nil, err
	}
	f.setMeanFloor()
	if f.Window {
		f.Rows = f.windowRows(sc.Limit.Params, l.Profile.Windows(), opts)
	} else {
		f.Rows = f.rateRows(sc.Limit.Params, l.Profile.Rates(), opts)
	}
	if f.Rows == nil {
		return nil, errors.New("replay: the pinned rate or window was not profiled (want the profile made with ProfileRates and the window)")
	}
	if err := l.replayRows(ctx, sc, f, simOpts, opts.Workers); err != nil {
		return nil, err
	}
	f.recommend()
	if f.Recommended >= 0 {
		// Replayed again, whole, for the table of keys and the plot: the
		// rows kept their totals only.
		s := sc
		s.Limit.Params = f.Rows[f.Recommended].Params
		if f.Run, err = l.Replay(ctx, LimitText(s.Limit), s, simOpts); err != nil {
			return nil, err
		}
	}
	return f, nil
}

// setMeanFloor sets MeanFloor from the bulk's busiest mean rate: of every
// key but the outliers, or, with a quantile, the mean rate of the
// quantile's nearest rank.
func (f *Frontier) setMeanFloor() {
	f.MeanFloorKey = -1
	var idx []int
	for i := range f.Keys {
		if f.bulk(i) {
			idx = append(idx, i)
		}
	}
	if len(idx) == 0 {
		return
	}
	slices.SortStableFunc(idx, func(a, b int) int {
		return cmp.Compare(f.Keys[a].MeanRate(f.Span), f.Keys[b].MeanRate(f.Span))
	})
	at := len(idx) - 1
	if f.Quantile > 0 {
		at = min(max(int(math.Ceil(math.Round(f.Quantile*1e6)*float64(len(idx))/1e6)), 1), len(idx)) - 1
	}
	f.MeanFloorKey = idx[at]
	f.BusiestMean = f.Keys[idx[at]].MeanRate(f.Span)
	f.MeanFloor = f.BusiestMean * (1 + f.Headroom)
}

// belowMeanFloor says a limit of perSecond is below MeanFloor.
func (f *Frontier) belowMeanFloor(perSecond float64) bool { return perSecond < f.MeanFloor }

// bulk reports whether key i is of the keys to spare.
func (f *Frontier) bulk(i int) bool { return f.Quantile > 0 || !f.Outliers.Is[i] }

// need is what spares the bulk, given each key's: the most of the bulk's,
// or the nearest-rank quantile of every key's; and the key whose need it
// is (-1 for none).
func (f *Frontier) need(of func(i int) int64) (int64, int) {
	var idx []int
	for i := range f.Keys {
		if f.bulk(i) {
			idx = append(idx, i)
		}
	}
	if len(idx) == 0 {
		return 1, -1
	}
	// Stable: of keys that need as much, the first in the log sets it.
	slices.SortStableFunc(idx, func(a, b int) int { return cmp.Compare(of(a), of(b)) })
	at := len(idx) - 1
	if f.Quantile > 0 {
		rank := int(math.Ceil(math.Round(f.Quantile*1e6) * float64(len(idx)) / 1e6))
		at = min(max(rank, 1), len(idx)) - 1
	}
	return max(of(idx[at]), 1), idx[at]
}

// withHeadroom is ⌈need × (1 + h)⌉, saturating.
func withHeadroom(need int64, h float64) int64 {
	v := math.Ceil(float64(need) * (1 + h))
	if v >= math.MaxInt64/2 {
		return math.MaxInt64 / 2
	}
	return max(int64(v), need)
}

// rateRows are a bucket's rows: the pinned rate, or the grid's rates from
// the bulk's median mean rate to its busiest second, or to MeanFloor if
// that is higher.
func (f *Frontier) rateRows(base algorithms.Params, rates []trace.Rate, opts FrontierOptions) []FrontierRow {
	var idx []int
	if opts.Rate != nil {
		i := slices.Index(rates, *opts.Rate)
		if i < 0 {
			return nil
		}
		idx = []int{i}
	} else {
		lo, hi := f.bulkRange()
		// Up to a rate that may be recommended, at least.
		hi = max(hi, f.MeanFloor)
		grid := trace.GridRates()
		first, last := 0, len(grid)-1
		for i, r := range grid {
			if r.PerSecond() <= lo {
				first = i
			}
		}
		for i := len(grid) - 1; i >= 0; i-- {
			if grid[i].PerSecond() >= hi {
				last = i
			}
		}
		if top := grid[len(grid)-1].PerSecond(); hi > top {
			f.AboveGrid = hi
		}
		for i := first; i <= max(last, first); i++ {
			idx = append(idx, i)
		}
	}
	var rows []FrontierRow
	for _, ri := range idx {
		need, setBy := f.need(func(i int) int64 { return f.Keys[i].Bursts[ri] })
		p := base
		p.Rate = rates[ri]
		p.Burst = withHeadroom(need, f.Headroom)
		row := FrontierRow{Params: p, Need: need, SetBy: setBy, Profiled: ri, BelowBulkMean: f.belowMeanFloor(rates[ri].PerSecond())}
		for i, k := range f.Keys {
			if k.Bursts[ri] > p.Burst {
				row.Predicted = append(row.Predicted, i)
			}
		}
		rows = append(rows, row)
	}
	return rows
}

// bulkRange is the bulk's median mean rate and its busiest second, in
// requests a second: the span of rates a bucket's rows cover.
func (f *Frontier) bulkRange() (lo, hi float64) {
	var means []float64
	for i, k := range f.Keys {
		if !f.Outliers.Is[i] {
			means = append(means, k.MeanRate(f.Span))
			hi = max(hi, float64(k.Busiest[0]))
		}
	}
	if len(means) == 0 {
		return 1, 1
	}
	return trace.Median(means), hi
}

// windowRows are a window algorithm's rows: the pinned window, or each
// of trace.ProfileWindows up to the log's span, at the count that spares
// the bulk.
func (f *Frontier) windowRows(base algorithms.Params, windows []time.Duration, opts FrontierOptions) []FrontierRow {
	var idx []int
	switch {
	case opts.Window > 0 || opts.Rate != nil:
		w := opts.Window
		if w == 0 {
			w = opts.Rate.Per
		}
		i := slices.Index(windows, w)
		if i < 0 {
			return nil
		}
		idx = []int{i}
	default:
		for i, w := range trace.ProfileWindows {
			if i == 0 || w <= f.Span {
				idx = append(idx, i)
			}
		}
	}
	var rows []FrontierRow
	for _, wi := range idx {
		need, setBy := f.need(func(i int) int64 { return int64(f.Keys[i].Busiest[wi]) })
		p := base
		p.Window = windows[wi]
		p.Rate = algorithms.Rate{N: withHeadroom(need, f.Headroom), Per: windows[wi]}
		row := FrontierRow{Params: p, Need: need, SetBy: setBy, Profiled: wi, BelowBulkMean: f.belowMeanFloor(float64(p.Rate.N) / windows[wi].Seconds())}
		for i, k := range f.Keys {
			if int64(k.Busiest[wi]) > p.Rate.N {
				row.Predicted = append(row.Predicted, i)
			}
		}
		rows = append(rows, row)
	}
	return rows
}

// replayRows replays every row, on up to workers goroutines, as many as
// simOpts.MaxMemory holds runs of sc at once; of each replay it keeps the
// totals and the throttled keys.
func (l *Log) replayRows(ctx context.Context, sc sim.Scenario, f *Frontier, simOpts sim.Options, workers int) error {
	if budget := simOpts.MaxMemory; budget > 0 {
		perRun := max(sim.MemoryEstimate(sc), 1)
		workers = min(workers, int(min(budget/perRun, math.MaxInt32)))
	}
	outlier := map[string]bool{}
	for i := range f.Keys {
		if f.Outliers.Is[i] {
			outlier[sc.Clients[i].Name] = true
		}
	}
	errs := make([]error, len(f.Rows))
	next := make(chan int)
	var wg sync.WaitGroup
	for range max(1, min(workers, len(f.Rows))) {
		wg.Add(1)
		go func() {
			defer wg.Done()
			for i := range next {
				s := sc
				s.Limit.Params = f.Rows[i].Params
				o := simOpts
				o.Progress = nil
				run, err := l.Replay(ctx, LimitText(s.Limit), s, o)
				if err != nil {
					errs[i] = err
					continue
				}
				row := &f.Rows[i]
				row.Totals = run.Totals
				for _, k := range run.Keys {
					if k.Rejected > 0 {
						row.Throttled = append(row.Throttled, ThrottledKey{Key: k.Key, Rejected: k.Rejected})
						if outlier[k.Key] {
							row.OutliersThrottled++
						}
					}
				}
			}
		}()
	}
	for i := range f.Rows {
		next <- i
	}
	close(next)
	wg.Wait()
	return errors.Join(errs...)
}

// bulkThrottled is how many keys that are not outliers the row's replay
// throttled.
func (r FrontierRow) bulkThrottled() int { return len(r.Throttled) - r.OutliersThrottled }

// recommend marks the row to recommend, from what the replays measured:
// of the rows at or above MeanFloor that spare every key of the bulk
// (with a quantile, at least its share of the keys), the one that
// throttles the most outliers (with a quantile: the fewest keys that are
// not outliers), then refuses the most requests, then has the lower rate
// (a window algorithm: the shorter window). None when no row qualifies.
func (f *Frontier) recommend() {
	wantSpared := 0
	if f.Quantile > 0 {
		wantSpared = int(math.Ceil(math.Round(f.Quantile*1e6) * float64(len(f.Keys)) / 1e6))
	}
	best := -1
	for i, row := range f.Rows {
		if row.BelowBulkMean {
			continue // spares the bulk only because the log ended
		}
		if f.Quantile > 0 {
			if row.Spared() < wantSpared {
				continue
			}
		} else if len(row.Throttled) != row.OutliersThrottled {
			continue // a key of the bulk throttled
		}
		if best < 0 {
			best = i
			continue
		}
		b := f.Rows[best]
		switch {
		case f.Quantile == 0 && row.OutliersThrottled != b.OutliersThrottled:
			if row.OutliersThrottled > b.OutliersThrottled {
				best = i
			}
		case f.Quantile > 0 && row.bulkThrottled() != b.bulkThrottled():
			// A share allows some keys throttled; the fewest ordinary
			// ones first, whatever else it refuses.
			if row.bulkThrottled() < b.bulkThrottled() {
				best = i
			}
		case row.Totals.Rejected != b.Totals.Rejected:
			if row.Totals.Rejected > b.Totals.Rejected {
				best = i
			}
		}
	}
	f.Recommended = best
}
