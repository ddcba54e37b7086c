package replay

import (
	"context"
	"errors"
	"fmt"
	"sync"

	"github.com/ratelim/ratelim/algorithms"
	"github.com/ratelim/ratelim/sim"
	"github.com/ratelim/ratelim/trace"
)

// Suggestion is a limit chosen from the log's peaks, and what it did when
// the log was replayed through it.
type Suggestion struct {
	trace.Limit
	// Params is the limit tried: the algorithm's own with the burst set to
	// Limit.Burst (token bucket, GCRA, leaky bucket), or the rate set to
	// Limit.InWindow per window (the window algorithms).
	Params algorithms.Params
	// Untouched is how many keys Params leaves untouched on one exact
	// limiter: Limit.BurstUntouched for a burst, Limit.InWindowUntouched
	// for a window. On one server with an atomic store, Run throttles
	// exactly the others for the exact algorithms (token bucket, GCRA,
	// leaky bucket, sliding log); a fixed window may throttle fewer, a
	// sliding-window counter or a jar per server more.
	Untouched int
	// Run is the replay through it.
	Run *Run
}

// Suggest chooses, for each quantile q, the limit that leaves q of the
// log's keys untouched by sc's algorithm on one exact limiter (from the
// peaks Scan measured at sc's limit), and replays the log through each,
// on sc's topology, so that what each would have refused is measured and
// not assumed: a sliding-window counter or a jar per server may refuse
// some requests of a key the exact limit leaves alone. Runs go on up to
// workers goroutines (at least 1).
func (l *Log) Suggest(ctx context.Context, sc sim.Scenario, quantiles []float64, opts sim.Options, workers int) ([]Suggestion, error) {
	if l.Peaks == nil {
		return nil, errors.New("replay: the log was scanned without peaks (ScanOptions.Peaks)")
	}
	limits, err := trace.Suggest(l.Peaks, quantiles...)
	if err != nil {
		return nil, err
	}
	out := make([]Suggestion, len(limits))
	errs := make([]error, len(limits))
	for i, lim := range limits {
		p := sc.Limit.Params
		untouched := lim.BurstUntouched
		if p.Window > 0 {
			p.Rate = algorithms.Rate{N: int64(max(lim.InWindow, 1)), Per: p.Window}
			untouched = lim.InWindowUntouched
		} else {
			p.Burst = max(lim.Burst, 1)
		}
		out[i] = Suggestion{Limit: lim, Params: p, Untouched: untouched}
	}
	next := make(chan int)
	var wg sync.WaitGroup
	for range max(1, min(workers, len(out))) {
		wg.Add(1)
		go func() {
			defer wg.Done()
			for i := range next {
				s := sc
				s.Limit.Params = out[i].Params
				o := opts
				o.Progress = nil
				out[i].Run, errs[i] = l.Replay(ctx, fmt.Sprintf("%g%%", 100*out[i].Quantile), s, o)
			}
		}()
	}
	for i := range out {
		next <- i
	}
	close(next)
	wg.Wait()
	return out, errors.Join(errs...)
}
