package store

// Drivers: the stores this package does not build itself. Redis is one
// (package store/redisstore); it links the Redis client and an embedded
// server, which a program that only reads a simulator's results must not
// pay for. So, as database/sql does with its drivers, the driver registers
// itself here in its init, by the URL schemes it opens, and a program that
// wants Redis links it with a blank import; [Open] opens a store by its
// URL through whichever driver registered the scheme.

import (
	"context"
	"fmt"
	"slices"
	"strings"
	"sync"

	"github.com/ratelim/ratelim/algorithms"
)

// Remote is a store a driver opens: state kept outside the Go heap, in a
// server reached over a connection (Redis, or miniredis in process), and
// decided there atomically.
type Remote interface {
	Limiter
	KV
	Releaser
	// WithPrefix returns a store on the same connection and server whose
	// keys live under another prefix: a second, independent copy of the
	// state. Closing it does nothing; close the store it came from.
	WithPrefix(prefix string) Remote
	// Clear deletes every key under the store's prefix and returns how
	// many it deleted: a run cleaning up after itself.
	Clear(ctx context.Context) (int, error)
	// Close disconnects, and stops a server the store started.
	Close() error
}

// RemoteOptions say which store [Open] opens and how.
type RemoteOptions struct {
	// URL names the store: "miniredis", redis://host:port, ... Its scheme
	// (the whole of it when it has no "://") chooses the driver.
	URL string
	// Prefix is prepended to every key, so that runs sharing a server
	// never see each other's state and Clear deletes only a run's keys.
	Prefix string
}

// OpenFunc opens a store that decides with alg: what a driver registers.
type OpenFunc func(ctx context.Context, alg algorithms.Algorithm, opts RemoteOptions) (Remote, error)

var (
	driversMu sync.RWMutex
	drivers   = map[string]OpenFunc{}
)

// Register makes open the driver of the stores whose URL has the given
// scheme. A driver calls it from its init; registering a scheme twice, or
// a nil open, is a programming error and panics, as database/sql's
// Register does.
func Register(scheme string, open OpenFunc) {
	driversMu.Lock()
	defer driversMu.Unlock()
	if open == nil {
		panic("store: Register of a nil driver for " + scheme)
	}
	if _, dup := drivers[scheme]; dup {
		panic("store: Register called twice for " + scheme)
	}
	drivers[scheme] = open
}

// Schemes returns the schemes a driver is registered for, sorted.
func Schemes() []string {
	driversMu.RLock()
	defer driversMu.RUnlock()
	var s []string
	for scheme := range drivers {
		s = append(s, scheme)
	}
	slices.Sort(s)
	return s
}

// redisDriver is the package that registers the Redis schemes, for the
// error that names what to import when none did.
const redisDriver = "github.com/ratelim/ratelim/store/redisstore"

// driverPackages name, for a scheme whose driver this program did not
// link, the package whose import registers it.
var driverPackages = map[string]string{
	Embedded: redisDriver, "redis": redisDriver, "rediss": redisDriver,
	"redis+cluster": redisDriver, "rediss+cluster": redisDriver,
}

// schemeOf is the scheme of a store URL: what comes before "://", or the
// whole name when there is none ("miniredis").
func schemeOf(url string) string {
	scheme, _, ok := strings.Cut(url, "://")
	if !ok {
		return url
	}
	return scheme
}

// Open opens the store opts.URL names through the driver registered for
// its scheme. A program that did not link that driver gets an error
// naming the import that would, never a panic.
func Open(ctx context.Context, alg algorithms.Algorithm, opts RemoteOptions) (Remote, error) {
	scheme := schemeOf(opts.URL)
	driversMu.RLock()
	open := drivers[scheme]
	driversMu.RUnlock()
	if open != nil {
		return open(ctx, alg, opts)
	}
	// Redacted: the URL may hold a password.
	if pkg, ok := driverPackages[scheme]; ok {
		return nil, fmt.Errorf("store: %s: this program does not link the %s driver (want import _ %q in its main package)", Redacted(opts.URL), scheme, pkg)
	}
	want := "no driver is linked"
	if linked := Schemes(); len(linked) > 0 {
		want = "want one of " + strings.Join(linked, ", ")
	}
	return nil, fmt.Errorf("store: %s: no driver for the store kind %q (%s)", Redacted(opts.URL), scheme, want)
}

// TakeRequest is one decision of a batch: a request of cost on key at now.
type TakeRequest struct {
	Key  string
	Now  algorithms.Time
	Cost int64
}

// TakeResult is a TakeRequest's Decision, or why there is none.
type TakeResult struct {
	Decision Decision
	Err      error
}
