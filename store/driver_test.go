package store

import (
	"context"
	"errors"
	"strings"
	"testing"

	"github.com/ratelim/ratelim/algorithms"
)

// A store test links no driver: opening a Redis store must say which
// import would register one, never panic, and never repeat a password.
func TestOpenWithoutTheDriverNamesTheImport(t *testing.T) {
	alg := tokenBucket(t, 1, 1)
	const want = `import _ "github.com/ratelim/ratelim/store/redisstore"`
	for _, url := range []string{Embedded, "redis://:s3cret@127.0.0.1:6379/2", "rediss://u:s3cret@host:6380", "redis+cluster://a:7000,b:7001", "rediss+cluster://:s3cret@a:7000"} {
		r, err := Open(context.Background(), alg, RemoteOptions{URL: url, Prefix: "p:"})
		if err == nil || r != nil {
			t.Errorf("Open(%q) without the driver = %v, %v; want an error", url, r, err)
			continue
		}
		if !strings.Contains(err.Error(), want) || strings.Contains(err.Error(), "s3cret") {
			t.Errorf("Open(%q) without the driver: %q; want it to name %s, and no password", url, err, want)
		}
	}
	_, err := Open(context.Background(), alg, RemoteOptions{URL: "memcached://host:11211"})
	if err == nil || !strings.Contains(err.Error(), `no driver for the store kind "memcached"`) {
		t.Errorf("Open of an unknown scheme: %v; want it to say there is no driver for memcached", err)
	}
}

// A registered driver is the one Open calls for its scheme, with the
// options as given; registering a scheme twice is a programming error.
func TestRegisteredDriverOpens(t *testing.T) {
	var got RemoteOptions
	refused := errors.New("the test driver opens nothing")
	Register("test-driver", func(_ context.Context, _ algorithms.Algorithm, o RemoteOptions) (Remote, error) {
		got = o
		return nil, refused
	})
	opts := RemoteOptions{URL: "test-driver://somewhere", Prefix: "run:"}
	if _, err := Open(context.Background(), tokenBucket(t, 1, 1), opts); !errors.Is(err, refused) || got != opts {
		t.Errorf("Open through the test driver: %v, called with %+v; want its error, called with %+v", err, got, opts)
	}
	defer func() {
		if recover() == nil {
			t.Error("a second Register for test-driver did not panic")
		}
	}()
	Register("test-driver", func(context.Context, algorithms.Algorithm, RemoteOptions) (Remote, error) { return nil, nil })
}
