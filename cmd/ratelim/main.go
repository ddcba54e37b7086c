// Command ratelim replays rate-limiter scenarios against every algorithm and
// store topology, and shows what each client experienced.
package main

import (
	"context"
	"os"
	"os/signal"
	"runtime/debug"
	"syscall"

	"github.com/redis/go-redis/v9"

	// The Redis driver: --store miniredis and redis:// URLs open through
	// store.Open, which finds it registered by this import. The packages
	// that only read a result (sim, report, plots, tui, scenarios) do not
	// link Redis; the program that runs scenarios on it does, here.
	_ "github.com/ratelim/ratelim/store/redisstore"
)

func main() {
	// go-redis logs each failed dial to stderr; the store's own error says
	// what went wrong, once, in a sentence the user can act on.
	redis.SetLogger(quietLogger{})
	// --max-memory holds the heap (runLimits.holdHeapUnder): the
	// program's, not its tests'.
	setMemoryLimit = debug.SetMemoryLimit
	ctx, stop := signal.NotifyContext(context.Background(), os.Interrupt, syscall.SIGTERM)
	code := run(ctx, os.Args[1:], streams{In: os.Stdin, Out: os.Stdout, ErrOut: os.Stderr})
	stop()
	os.Exit(code)
}

type quietLogger struct{}

func (quietLogger) Printf(context.Context, string, ...any) {}
