package main

import (
	"math"
	"os"
	"runtime"

	"github.com/dustin/go-humanize"
	"github.com/spf13/pflag"

	"github.com/ratelim/ratelim/sim"
)

// runLimits are the flags that bound how big a simulated run may be, the
// same on every command that simulates: a run over them is refused before
// it starts (exit 3), not left to exhaust the machine.
type runLimits struct {
	MaxRequests int64
	MaxMemory   string
	Workers     int
	// parallel says the command has --parallel: its runs go several at
	// once, each within MaxMemory.
	parallel bool
}

// minMemory is the least --max-memory accepts: below it no run fits.
const minMemory = 16 << 20

func addLimitFlags(f *pflag.FlagSet, l *runLimits, parallel bool) {
	f.Int64Var(&l.MaxRequests, "max-requests", sim.DefaultMaxRequests, "refuse a run estimated to send more requests than this, and stop one whose retries send more")
	f.StringVar(&l.MaxMemory, "max-memory", humanize.IBytes(sim.DefaultMaxMemory), "refuse a run estimated to need more (e.g. 512MiB, 8GB); the heap's soft limit too")
	l.parallel = parallel
	if parallel {
		f.IntVar(&l.Workers, "parallel", 0, "runs at once (0: one per core)")
	}
}

// apply checks the flags, holds the heap under --max-memory (holdHeapUnder)
// and returns them as the simulator's options.
func (l runLimits) apply() (sim.Options, error) {
	if l.MaxRequests < 1 {
		return sim.Options{}, badInput("--max-requests: must be at least 1 (got %d)", l.MaxRequests)
	}
	bytes, err := humanize.ParseBytes(l.MaxMemory)
	if err != nil {
		return sim.Options{}, badInput("--max-memory: %q is not a size (want e.g. 512MiB, 4GiB or 8GB)", l.MaxMemory)
	}
	if bytes < minMemory {
		return sim.Options{}, badInput("--max-memory: %s is too little for any run (want at least %s)", humanize.IBytes(bytes), humanize.IBytes(minMemory))
	}
	if l.Workers < 0 {
		return sim.Options{}, badInput("--parallel: %d is less than 0 (want 0 for one run per core, or more)", l.Workers)
	}
	maxMemory := int64(min(bytes, math.MaxInt64))
	l.holdHeapUnder(maxMemory)
	return sim.Options{MaxRequests: l.MaxRequests, MaxMemory: maxMemory}, nil
}

// holdHeapUnder sets the Go runtime's soft memory limit to what the runs
// at once may use, unless GOMEMLIMIT already chose one. The simulator's
// estimate (sim.MemoryEstimate) counts what a run holds live and a
// quarter more; without a limit the collector lets the heap grow to twice
// what is live before it collects, and a run the estimate let through
// could take twice --max-memory. Under the limit the collector works
// harder near it instead: a million clients (2.5 GB live) stay under
// 4 GiB.
//
// Only the program does (main sets setMemoryLimit): a test of a command
// leaves its process's limit alone, where a --max-memory of 16MiB would
// make the collector run all the time for the tests after it.
func (l runLimits) holdHeapUnder(perRun int64) {
	if setMemoryLimit == nil || os.Getenv("GOMEMLIMIT") != "" {
		return
	}
	runs := int64(1)
	if l.parallel {
		runs = int64(l.Workers)
		if runs == 0 {
			runs = int64(runtime.GOMAXPROCS(0))
		}
	}
	setMemoryLimit(satMulBytes(perRun, runs))
}

// setMemoryLimit is debug.SetMemoryLimit in the program, nil in its tests.
var setMemoryLimit func(int64) int64

// satMulBytes is a × b for sizes, at most math.MaxInt64.
func satMulBytes(a, b int64) int64 {
	if a > 0 && b > math.MaxInt64/a {
		return math.MaxInt64
	}
	return a * b
}
