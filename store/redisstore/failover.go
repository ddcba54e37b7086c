package redisstore

import (
	"context"
	"errors"
	"io"
	"net"

	"github.com/redis/go-redis/v9"
)

// How a Redis store follows a Redis Cluster through a failover, read from
// go-redis v9.23.0 (osscluster.go) and checked against a real cluster
// (TestRedisClusterFailoverFollowed):
//
//   - ClusterClient.process reloads its slot map only on a MOVED or ASK
//     reply (isMovedError) or a READONLY one, never on a network error.
//     A master that dies answers nothing, so nothing ever says MOVED: its
//     slots stay mapped to the dead address until the map is older than
//     ClusterStateReloadInterval (60 s; clusterStateHolder.Get). The
//     replica promoted seconds later was reached only then: measured,
//     the stopped master's last key back 57 s after the promotion, 60 s
//     after the map was read.
//   - On a network error process retries, in a loop bounded by
//     MaxRedirects (3), not MaxRetries (-1 here, which only the node
//     clients' own loop reads): the same node again, then, marked failing
//     (clusterNode.MarkAsFailing), whatever the stale map names for the
//     slot: the same dead master (clusterState.slotMasterNode takes the
//     slot's first node, failing or not). Four attempts of 200 ms each on
//     a hung master (a failing request measured at up to 1.3 s); and a
//     retried EVALSHA after a read timeout may run twice, since the first
//     may have run (shouldRetry, error.go, retries a timeout on any
//     command without a read timeout of its own): measured, 13 requests
//     counted twice in a 74 s run on a loaded machine.
//
// So a decision is sent as a command go-redis never retries ([once]), and
// an error that says the topology may have moved has the client reload its
// slot map ([Store.followTopology]). The reload runs in the background;
// the request that failed is answered by the fail policy at once.

// once is a command go-redis must not send twice: a script that decides a
// request. Its NoRetry stops every retry of go-redis's loops (the cluster
// client's process and pipelines, the node client's processWithRetry)
// except those after which the command certainly did not run: a MOVED or
// ASK reply is followed, and a READONLY one (a replica's refusal of the
// script's first write) sent to the slot's master, both handled by
// ClusterClient.process before it asks shouldRetry; and a failure the
// node client knows came before the command was written
// (baseClient.processWithRetry's forced retry).
// A read timeout, a reset connection, CLUSTERDOWN: the request fails, and
// the fail policy answers it. What this guarantees: each Take runs its
// script at most once (once per NOSCRIPT fallback, whose EVALSHA ran
// nothing); a request is never counted twice by the store.
type once struct{ *redis.Cmd }

// NoRetry reports that the command may not be retried.
func (once) NoRetry() bool { return true }

// scriptProcessor is what a script is run on: a client, or a pipeline
// that queues what it processes.
type scriptProcessor interface {
	redis.Scripter
	Process(ctx context.Context, cmd redis.Cmder) error
}

// onceScripter runs a script's EVALSHA and EVAL as [once] commands, so
// that redis.Script's Run (EVALSHA, then EVAL on NOSCRIPT) sends each at
// most once. The rest of redis.Scripter is p's own.
type onceScripter struct{ scriptProcessor }

func (s onceScripter) EvalSha(ctx context.Context, sha1 string, keys []string, args ...any) *redis.Cmd {
	return s.eval(ctx, "evalsha", sha1, keys, args)
}

func (s onceScripter) Eval(ctx context.Context, script string, keys []string, args ...any) *redis.Cmd {
	return s.eval(ctx, "eval", script, keys, args)
}

// eval builds the command as go-redis's own cmdable.eval does
// (scripting_commands.go): name, payload, the number of keys, the keys
// (the first at position 3, which a cluster routes by), then the args.
func (s onceScripter) eval(ctx context.Context, name, payload string, keys []string, args []any) *redis.Cmd {
	cmdArgs := make([]any, 0, 3+len(keys)+len(args))
	cmdArgs = append(cmdArgs, name, payload, len(keys))
	for _, k := range keys {
		cmdArgs = append(cmdArgs, k)
	}
	cmdArgs = append(cmdArgs, args...)
	cmd := redis.NewCmd(ctx, cmdArgs...)
	if len(keys) > 0 {
		cmd.SetFirstKeyPos(3)
	}
	_ = s.Process(ctx, once{cmd})
	return cmd
}

// followTopology has a cluster client reload its slot map when err says
// the map may be out of date: the node did not answer (a dial error, a
// timeout, a dropped connection), or answered that the cluster is moving
// (CLUSTERDOWN, MASTERDOWN, TRYAGAIN, MOVED, ASK, READONLY, LOADING).
//
// ClusterClient.ReloadState is clusterStateHolder.LazyReload: one reload
// in flight at a time in the background (CLUSTER SLOTS from a node that
// answers), and at most one more, 200 ms after it, for every call made
// meanwhile. So calling it on every failed request costs two atomic
// operations each, and while a master's slots fail the map is read again
// every 200 ms or so (plus a CLUSTER SLOTS that may wait 200 ms for the
// hung node): the promoted replica is found within a few hundred ms of
// its promotion.
func (r *Store) followTopology(err error) {
	if err == nil {
		return
	}
	if c, ok := r.client.(*redis.ClusterClient); ok && topologyError(err) {
		c.ReloadState(context.Background())
	}
}

// topologyError reports whether err says a cluster node may be gone or
// its slots moved.
func topologyError(err error) bool {
	var netErr net.Error
	if errors.As(err, &netErr) || errors.Is(err, io.EOF) || errors.Is(err, io.ErrUnexpectedEOF) {
		return true
	}
	for _, p := range []string{"CLUSTERDOWN", "MASTERDOWN", "TRYAGAIN", "MOVED", "ASK", "READONLY", "LOADING"} {
		if redis.HasErrorPrefix(err, p) {
			return true
		}
	}
	return false
}
