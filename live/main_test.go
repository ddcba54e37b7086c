package live

import (
	"context"
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
	os.Exit(m.Run())
}
