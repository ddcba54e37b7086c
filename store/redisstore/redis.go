package redisstore

import (
	"context"
	"errors"
	"fmt"
	"hash/fnv"
	"net/url"
	"strconv"
	"strings"
	"sync/atomic"
	"time"

	"github.com/alicebob/miniredis/v2"
	"github.com/redis/go-redis/v9"

	"github.com/ratelim/ratelim/algorithms"
	"github.com/ratelim/ratelim/store"
)

// Options say which Redis to use and how.
type Options struct {
	// URL is "" or "miniredis" for an embedded server started in process;
	// redis://[user:pass@]host:port[/db] (rediss:// for TLS) for one server;
	// redis+cluster://host:port[,host:port...] for a Redis Cluster.
	URL string
	// Prefix is prepended to every key, so that runs sharing a server never
	// see each other's state and [Store.Clear] can delete a run's keys.
	Prefix string
	// StoreClock decides on the store's own clock (the script calls Redis
	// TIME) instead of the now passed to Take, as a script that trusts no
	// API server's clock does.
	StoreClock bool
	// FailFast bounds every call: 200 ms to dial, read or write, one dial
	// attempt and no retry, and a decision (Take) 200 ms in all, waiting
	// for a pooled connection included, so that a store that is gone
	// costs a request milliseconds and the fail policy decides, instead
	// of the client's default of several dial attempts with backoff. What
	// a limiter in front of a live API wants; a batch simulation may
	// prefer patience.
	FailFast bool
}

const failFastTimeout = 200 * time.Millisecond

func (o Options) tune(ro *redis.Options) {
	if !o.FailFast {
		return
	}
	ro.DialTimeout, ro.ReadTimeout, ro.WriteTimeout = failFastTimeout, failFastTimeout, failFastTimeout
	ro.DialerRetries, ro.DialerRetryTimeout = 1, 10*time.Millisecond
	ro.MaxRetries = -1
	ro.Dialer = newRedialer(redis.NewDialer(ro)).DialContext
}

// tuneCluster is tune for a cluster's node clients, which go-redis builds
// from co (ClusterOptions.clientOptions, osscluster.go). MaxRetries is
// each node client's; the cluster's own loop (ClusterClient.process) is
// bounded by MaxRedirects, left at go-redis's 3 so that a MOVED or ASK
// reply, after which the script certainly did not run, is followed at
// once: the decisions themselves are sent as commands that are never
// retried (see noRetry).
func (o Options) tuneCluster(co *redis.ClusterOptions) {
	if !o.FailFast {
		return
	}
	co.DialTimeout, co.ReadTimeout, co.WriteTimeout = failFastTimeout, failFastTimeout, failFastTimeout
	co.DialerRetries, co.DialerRetryTimeout = 1, 10*time.Millisecond
	co.MaxRetries = -1
	co.Dialer = newRedialer(redis.NewDialer(&redis.Options{DialTimeout: co.DialTimeout, TLSConfig: co.TLSConfig})).DialContext
}

// Store keeps state in Redis and decides with the algorithm's Lua twin, so
// that each decision is one atomic step inside the server: one round trip,
// no race, whatever the number of API servers. Scripts are sent with EVALSHA
// and re-sent with EVAL when the server answers NOSCRIPT (after a restart or
// a SCRIPT FLUSH). With one limit, each key's state is one Redis key, so it
// works on a cluster without hash tags.
//
// A key with several limits ([algorithms.Multi]) keeps each limit's state
// in a Redis key of its own, in that limit's twin's layout, and decides
// them all in one script (lua/multi.lua): still one round trip, atomic.
// Limit i of key K lives at
//
//	prefix + "{#" + K + "}:" + i
//
// The braces are a cluster hash tag: the cluster hashes only what lies
// between the first "{" and the first "}" after it, so every limit of K
// lands on one slot, which a script touching all of them needs. Whatever
// bytes K holds, the tag is the same for all of K's limits: it ends at the
// first "}" after the first "{", at the latest at the "}" the store puts
// after K, and the keys differ only after that. The "#" keeps the tag
// non-empty when K is empty or starts with "}" (an empty tag, "{}", counts
// as none: the whole key would be hashed). The same holds under any prefix
// except one whose first "{" is followed at once by "}", which Open
// refuses for a Multi (and Take, Load and Save, under such a prefix
// from WithPrefix). The layout also keeps a Multi's keys apart from a
// single-limit store's key K (prefix + K): none of them is K, and the
// index after the tag names the limit by its place, so K is read back
// unambiguously from any of them.
type Store struct {
	client   redis.UniversalClient
	script   *script
	opts     Options
	embedded *miniredis.Miniredis
	derived  bool // made by WithPrefix: the connection belongs to another
	// loaded is set once the twin is known to be in the server's script
	// cache (TakeBatch); shared with the stores WithPrefix makes, which
	// talk to the same server.
	loaded *atomic.Bool
}

// Open connects to the Redis opts.URL names (starting an embedded one
// for "" or "miniredis"), checks that it answers, and returns a store that
// decides with alg.
func Open(ctx context.Context, alg algorithms.Algorithm, opts Options) (*Store, error) {
	sc, err := scriptFor(alg)
	if err != nil {
		return nil, err
	}
	if sc.limits != nil {
		if err := multiPrefixError(opts.Prefix); err != nil {
			return nil, err
		}
	}
	r := &Store{script: sc, opts: opts, loaded: new(atomic.Bool)}
	switch {
	case opts.URL == "" || opts.URL == store.Embedded:
		r.embedded = miniredis.NewMiniRedis()
		if err := r.embedded.Start(); err != nil {
			return nil, fmt.Errorf("store: starting the embedded Redis: %w", err)
		}
		ro := &redis.Options{Addr: r.embedded.Addr()}
		opts.tune(ro)
		r.client = redis.NewClient(ro)
	case strings.HasPrefix(opts.URL, "redis+cluster://"), strings.HasPrefix(opts.URL, "rediss+cluster://"):
		co, err := parseClusterURL(opts.URL)
		if err != nil {
			return nil, err
		}
		opts.tuneCluster(co)
		r.client = redis.NewClusterClient(co)
	default:
		o, err := redis.ParseURL(opts.URL)
		if err != nil {
			return nil, fmt.Errorf("store: %q is not a Redis URL (want redis://host:port, redis+cluster://host:port,host:port or miniredis): %v", opts.URL, err)
		}
		opts.tune(o)
		r.client = redis.NewClient(o)
	}
	if err := r.client.Ping(ctx).Err(); err != nil {
		r.Close()
		return nil, fmt.Errorf("store: Redis at %s does not answer: %w", r.Addr(), err)
	}
	return r, nil
}

// parseClusterURL reads redis+cluster://[user:pass@]h1:p1,h2:p2[?options]
// into go-redis's cluster form, which names the extra nodes as addr=.
func parseClusterURL(raw string) (*redis.ClusterOptions, error) {
	scheme, rest, _ := strings.Cut(raw, "://")
	auth, hostsAndQuery := "", rest
	if at := strings.LastIndex(rest, "@"); at >= 0 {
		auth, hostsAndQuery = rest[:at+1], rest[at+1:]
	}
	hosts, query, _ := strings.Cut(hostsAndQuery, "?")
	hosts = strings.TrimSuffix(hosts, "/")
	nodes := strings.Split(hosts, ",")
	if hosts == "" || len(nodes) == 0 {
		return nil, fmt.Errorf("store: %q names no cluster node (want redis+cluster://host:port[,host:port...])", raw)
	}
	q, err := url.ParseQuery(query)
	if err != nil {
		return nil, fmt.Errorf("store: %q: %v", raw, err)
	}
	for _, n := range nodes[1:] {
		q.Add("addr", n)
	}
	base := strings.TrimSuffix(scheme, "+cluster") + "://" + auth + nodes[0]
	if len(q) > 0 {
		base += "?" + q.Encode()
	}
	co, err := redis.ParseClusterURL(base)
	if err != nil {
		return nil, fmt.Errorf("store: %q is not a Redis Cluster URL: %v", raw, err)
	}
	return co, nil
}

// Addr names the server, for messages.
func (r *Store) Addr() string {
	if r.embedded != nil {
		return "embedded miniredis " + r.embedded.Addr()
	}
	if c, ok := r.client.(*redis.Client); ok {
		return c.Options().Addr
	}
	return r.opts.URL
}

// Embedded returns the in-process server when the store started one, nil
// otherwise: a test or a simulator uses it to stop and restart the store,
// or to move its clock.
func (r *Store) Embedded() *miniredis.Miniredis { return r.embedded }

// Take runs the Lua twin for key (the multi script, for a key with several
// limits): one round trip, atomic.
func (r *Store) Take(ctx context.Context, key string, now algorithms.Time, cost int64) (store.Decision, error) {
	if err := store.CheckCost(cost); err != nil {
		return store.Decision{}, err
	}
	keys, err := r.script.keys(r.opts.Prefix, key)
	if err != nil {
		return store.Decision{}, err
	}
	if r.opts.FailFast {
		// The whole decision, not each dial, write and read: a call
		// queued for one of a hung node's pooled connections (go-redis's
		// pool holds 5 × GOMAXPROCS a node, each busy for the read
		// timeout) waited 0.4–0.9 s for it in the live comparison with a
		// frozen master (live TestClusterLiveAgainstSimulator).
		var cancel context.CancelFunc
		ctx, cancel = context.WithTimeout(ctx, failFastTimeout)
		defer cancel()
	}
	d, err := r.script.runKeys(ctx, onceScripter{r.client}, keys, now, r.opts.StoreClock, cost)
	r.followTopology(err)
	return store.Decision{Decision: d}, err
}

// TakeBatch decides reqs, each as Take would, in pipelines: one round
// trip for many instead of one each. Each script still runs atomically on
// its own key, in order, so requests on different keys decide exactly as
// they would one by one; out[i] is reqs[i]'s result (out must be as long
// as reqs). A script the server does not have cached is run again alone,
// which loads it.
//
// A large batch is split by key into two pipelines on two connections,
// run at once: every key's requests stay in one pipeline, in order, so
// each key sees the same sequence of scripts, and the client's encoding
// and decoding of one half overlaps the server's running of the other
// (alone, a pipeline keeps the two waiting on each other, and Redis runs
// one script at a time either way).
func (r *Store) TakeBatch(ctx context.Context, reqs []store.TakeRequest, out []store.TakeResult) {
	if len(reqs) < 2*minShardedBatch {
		r.takeBatch(ctx, reqs, out, nil)
		return
	}
	// A script missing from the server's cache fails with NOSCRIPT and is
	// run again alone, after its pipeline. With two pipelines at once, the
	// other's rerun could load it halfway through this one, and a key's
	// later request then run before its earlier one's rerun: so the script
	// is loaded first, once: a NOSCRIPT seen later (the server restarted,
	// or its cache was flushed) has it loaded again before the next
	// sharded batch. Only a flush during a batch could still reorder a
	// key's requests.
	if !r.loaded.Load() {
		if err := r.script.lua.Load(ctx, r.client).Err(); err != nil {
			r.takeBatch(ctx, reqs, out, nil)
			return
		}
		r.loaded.Store(true)
	}
	shard := make([]bool, len(reqs)) // true: the second pipeline's
	for i, q := range reqs {
		shard[i] = keyShard(q.Key)
	}
	done := make(chan struct{})
	go func() {
		defer close(done)
		r.takeBatch(ctx, reqs, out, func(i int) bool { return shard[i] })
	}()
	r.takeBatch(ctx, reqs, out, func(i int) bool { return !shard[i] })
	<-done
}

// minShardedBatch is the smallest half-batch worth a second pipeline: below
// it the goroutine and the second round trip cost more than they overlap.
const minShardedBatch = 16

// keyShard is which of two pipelines a key's requests go to: the low bit of
// the key's FNV-1a, the hash topology.HashKey spreads keys over servers by
// (store sits below topology, so it asks hash/fnv itself). It runs only on
// a batch bound for Store, where a script costs microseconds.
func keyShard(key string) bool {
	h := fnv.New64a()
	h.Write([]byte(key))
	return h.Sum64()&1 == 1
}

// takeBatch decides, in one pipeline, the requests of reqs that mine
// accepts (all of them when mine is nil), into out.
func (r *Store) takeBatch(ctx context.Context, reqs []store.TakeRequest, out []store.TakeResult, mine func(int) bool) {
	pipe := r.client.Pipeline()
	cmds := make([]*redis.Cmd, len(reqs))
	for i, q := range reqs {
		if mine != nil && !mine(i) {
			continue
		}
		if err := store.CheckCost(q.Cost); err != nil {
			out[i] = store.TakeResult{Err: err}
			continue
		}
		keys, err := r.script.keys(r.opts.Prefix, q.Key)
		if err != nil {
			out[i] = store.TakeResult{Err: err}
			continue
		}
		cmds[i] = r.script.lua.EvalSha(ctx, onceScripter{pipe}, keys, r.script.args(q.Now, r.opts.StoreClock, q.Cost)...)
	}
	_, err := pipe.Exec(ctx) // the first error; each command carries its own
	r.followTopology(err)
	for i, cmd := range cmds {
		if cmd == nil {
			continue
		}
		reply, err := cmd.Int64Slice()
		if err != nil && redis.HasErrorPrefix(err, "NOSCRIPT") {
			r.loaded.Store(false)
			out[i].Decision, out[i].Err = r.Take(ctx, reqs[i].Key, reqs[i].Now, reqs[i].Cost)
			continue
		}
		if err != nil {
			out[i] = store.TakeResult{Err: fmt.Errorf("store: %s script on key %q: %w", r.script.name, cmd.Args()[3], err)}
			continue
		}
		d, err := r.script.decode(reply)
		out[i] = store.TakeResult{Decision: store.Decision{Decision: d}, Err: err}
	}
}

// Load reads key's state in the twin's layout: the read of a hand-written
// read-modify-write. A key with several limits reads every limit's key in
// one MULTI (so the states are of one instant) into State.Sub, one per
// limit, the zero State for a limit whose key is missing.
func (r *Store) Load(ctx context.Context, key string) (algorithms.State, error) {
	var st algorithms.State
	var err error
	if r.script.limits != nil {
		st, err = r.loadMulti(ctx, key)
	} else {
		st, err = readState(ctx, r.client, r.opts.Prefix+key, listLayout(r.script.name))
	}
	r.followTopology(err)
	return st, err
}

func (r *Store) loadMulti(ctx context.Context, key string) (algorithms.State, error) {
	keys, err := r.script.keys(r.opts.Prefix, key)
	if err != nil {
		return algorithms.State{}, err
	}
	cmds := make([]redis.Cmder, len(keys))
	_, err = r.client.TxPipelined(ctx, func(p redis.Pipeliner) error {
		for i, k := range keys {
			cmds[i] = queueRead(ctx, p, k, listLayout(r.script.limits[i].name))
		}
		return nil
	})
	if err != nil && !errors.Is(err, redis.Nil) {
		return algorithms.State{}, fmt.Errorf("store: reading %s: %w", keys[0], err)
	}
	st := algorithms.State{Sub: make([]algorithms.State, len(keys))}
	for i, cmd := range cmds {
		if st.Sub[i], err = parseState(keys[i], cmd); err != nil {
			return algorithms.State{}, err
		}
	}
	return st, nil
}

// readState reads a twin's state at key: the list of instants of the
// sliding log and the concurrency limiter (list, see listLayout), or every
// other algorithm's "T N P" string (lib/prelude.lua). A missing key is the
// zero State.
func readState(ctx context.Context, c redis.Cmdable, key string, list bool) (algorithms.State, error) {
	return parseState(key, queueRead(ctx, c, key, list))
}

// queueRead sends (or, on a pipeline, queues) the read of a twin's state
// at key: LRANGE for a list, GET for the others.
func queueRead(ctx context.Context, c redis.Cmdable, key string, list bool) redis.Cmder {
	if list {
		return c.LRange(ctx, key, 0, -1)
	}
	return c.Get(ctx, key)
}

// parseState reads the State out of queueRead's command once it has run.
func parseState(key string, cmd redis.Cmder) (algorithms.State, error) {
	var st algorithms.State
	switch cmd := cmd.(type) {
	case *redis.StringSliceCmd:
		log, err := cmd.Result()
		if err != nil {
			return st, fmt.Errorf("store: LRANGE %s: %w", key, err)
		}
		for _, s := range log {
			at, err := strconv.ParseInt(s, 10, 64)
			if err != nil {
				return algorithms.State{}, fmt.Errorf("store: %s holds %q, not a time in µs", key, s)
			}
			st.Log = append(st.Log, at)
		}
		return st, nil
	case *redis.StringCmd:
		v, err := cmd.Result()
		if errors.Is(err, redis.Nil) {
			return st, nil
		}
		if err != nil {
			return st, fmt.Errorf("store: GET %s: %w", key, err)
		}
		fields := strings.Fields(v)
		if len(fields) != 3 {
			return st, fmt.Errorf("store: %s holds %q, not a limiter state (want \"T N P\")", key, v)
		}
		var n [3]int64
		for i, f := range fields {
			if n[i], err = strconv.ParseInt(f, 10, 64); err != nil {
				return st, fmt.Errorf("store: %s holds %q, not a limiter state (want \"T N P\")", key, v)
			}
		}
		return algorithms.State{T: n[0], N: n[1], Prev: n[2]}, nil
	}
	return st, fmt.Errorf("store: reading %s: unexpected %T", key, cmd)
}

// Save writes st for key in the twin's layout, replacing what is there, with
// ttl as its expiry: the write of a hand-written read-modify-write. A key
// with several limits writes each limit's state from st.Sub (a missing
// one is the zero State) in one MULTI.
func (r *Store) Save(ctx context.Context, key string, st algorithms.State, ttl time.Duration) error {
	err := r.save(ctx, key, st, ttl)
	r.followTopology(err)
	return err
}

func (r *Store) save(ctx context.Context, key string, st algorithms.State, ttl time.Duration) error {
	if r.script.limits != nil {
		return r.saveMulti(ctx, key, st, ttl)
	}
	k := r.opts.Prefix + key
	var err error
	if listLayout(r.script.name) {
		_, err = r.client.TxPipelined(ctx, func(p redis.Pipeliner) error {
			queueSave(ctx, p, k, true, st, ttl)
			return nil
		})
	} else {
		err = queueSave(ctx, r.client, k, false, st, ttl)
	}
	if err != nil {
		return fmt.Errorf("store: writing %s: %w", k, err)
	}
	return nil
}

func (r *Store) saveMulti(ctx context.Context, key string, st algorithms.State, ttl time.Duration) error {
	keys, err := r.script.keys(r.opts.Prefix, key)
	if err != nil {
		return err
	}
	if len(st.Sub) > len(keys) {
		return fmt.Errorf("store: saving %d limits' states for %s, which has %d limits", len(st.Sub), r.script.name, len(keys))
	}
	_, err = r.client.TxPipelined(ctx, func(p redis.Pipeliner) error {
		for i, k := range keys {
			var sub algorithms.State
			if i < len(st.Sub) {
				sub = st.Sub[i]
			}
			queueSave(ctx, p, k, listLayout(r.script.limits[i].name), sub, ttl)
		}
		return nil
	})
	if err != nil {
		return fmt.Errorf("store: writing %s: %w", keys[0], err)
	}
	return nil
}

// queueSave sends (or, on a pipeline, queues) the write of st at key in a
// twin's layout: a list replaced (a transaction's part: DEL, RPUSH,
// PEXPIRE), or SET "T N P" with the ttl. It returns the error of a write
// sent at once.
func queueSave(ctx context.Context, c redis.Cmdable, key string, list bool, st algorithms.State, ttl time.Duration) error {
	if !list {
		return c.Set(ctx, key, fmt.Sprintf("%d %d %d", st.T, st.N, st.Prev), ttl).Err()
	}
	c.Del(ctx, key)
	if len(st.Log) == 0 {
		return nil
	}
	log := make([]any, len(st.Log))
	for i, at := range st.Log {
		log[i] = at
	}
	c.RPush(ctx, key, log...)
	c.PExpire(ctx, key, ttl)
	return nil
}

// Clear deletes every key under the store's prefix (all keys, without a
// prefix) and returns how many it deleted: a run cleaning up after itself.
func (r *Store) Clear(ctx context.Context) (int, error) {
	// ForEachMaster runs on every master at once: count atomically.
	var deleted atomic.Int64
	clear := func(ctx context.Context, c *redis.Client) error {
		iter := c.Scan(ctx, 0, scanPattern(r.opts.Prefix), 1000).Iterator()
		for iter.Next(ctx) {
			// One key at a time: a cluster node may hold keys of many slots.
			n, err := c.Del(ctx, iter.Val()).Result()
			if err != nil {
				return err
			}
			deleted.Add(n)
		}
		return iter.Err()
	}
	var err error
	switch c := r.client.(type) {
	case *redis.ClusterClient:
		err = c.ForEachMaster(ctx, func(ctx context.Context, node *redis.Client) error { return clear(ctx, node) })
	case *redis.Client:
		err = clear(ctx, c)
	default:
		err = errors.New("unknown client")
	}
	if err != nil {
		return int(deleted.Load()), fmt.Errorf("store: clearing %q keys: %w", r.opts.Prefix, err)
	}
	return int(deleted.Load()), nil
}

// scanPattern matches every key starting with prefix, with SCAN's glob
// characters escaped.
func scanPattern(prefix string) string {
	var b strings.Builder
	for _, c := range prefix {
		if strings.ContainsRune(`*?[]\`, c) {
			b.WriteByte('\\')
		}
		b.WriteRune(c)
	}
	b.WriteByte('*')
	return b.String()
}

// WithPrefix returns a store on the same connection and server whose keys
// live under another prefix: a second, independent copy of the state (a jar
// per simulated server, a replica) without a second connection. Closing it
// does nothing; close r.
func (r *Store) WithPrefix(prefix string) *Store {
	d := *r
	d.opts.Prefix = prefix
	d.derived = true
	return &d
}

// Close disconnects, and stops the embedded server if the store started one.
func (r *Store) Close() error {
	if r.derived {
		return nil
	}
	err := r.client.Close()
	if r.embedded != nil {
		r.embedded.Close()
	}
	return err
}
