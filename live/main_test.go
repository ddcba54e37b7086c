package live

import (
	"context"
	"flag"
	"os"
	"testing"

	"github.com/redis/go-redis/v9"
)

type quietLogger struct{}

func (quietLogger) Printf(context.Context, string, ...any) {}

func TestMain(m *testing.M) {
	// The outage tests kill redis-server on purpose; go-redis would log
	// every refused dial.
	redis.SetLogger(quietLogger{})
	flag.Parse()
	given := false
	flag.Visit(func(f *flag.Flag) { given = given || f.Name == "test.parallel" })
	if !given {
		if err := flag.Set("test.parallel", wallClockParallel); err != nil {
			panic(err)
		}
	}
	os.Exit(m.Run())
}

// wallClockParallel is how many tests run at once here when -parallel is
// not given: wall-clock tests drive a fleet over loopback for seconds,
// mostly waiting on their schedules, so several overlap well even on two
// cores, where go test's default (GOMAXPROCS) runs two. Their checks are
// on what was observed (the simulator fed the run's arrivals), so a busier
// machine makes them late, never wrong. Four at once take the package from
// over two minutes to under one.
const wallClockParallel = "4"

// wallClock marks t as a wall-clock test, run beside the others.
func wallClock(t *testing.T) {
	t.Helper()
	t.Parallel()
}
