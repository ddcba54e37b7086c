package gubernatorcheck

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"flag"
	"fmt"
	"math/rand/v2"
	"net"
	"os"
	"path/filepath"
	"runtime/pprof"
	"strconv"
	"strings"
	"syscall"
	"testing"
	"time"

	guber "github.com/gubernator-io/gubernator/v2"
	"github.com/prometheus/client_golang/prometheus"
	dto "github.com/prometheus/client_model/go"
	"github.com/sirupsen/logrus"
	"google.golang.org/grpc"
	"google.golang.org/grpc/credentials/insecure"
)

var update = flag.Bool("update", false, "rewrite testdata/global.golden.json from what gubernator answers")

// globalSyncWait is the BehaviorConfig.GlobalSyncWait every daemon runs with:
// a non-owner sends its summed hits this long after the first one queued
// (global.go runAsyncHits), and an owner broadcasts this long after the first
// update queued (global.go runBroadcasts). 50 ms is what gubernator's own
// cluster test helper uses (cluster/cluster.go StartWith).
const globalSyncWait = 50 * time.Millisecond

// defaultGap is the pause between two bursts when a case does not name one:
// ≫ globalSyncWait, so a burst's hits reach the owner (+1 wait) and the
// owner's broadcast comes back (+1 wait) before the next burst begins.
const defaultGap = 300 * time.Millisecond

// Timing bounds an attempt must observe to count; an attempt outside them is
// retried, and a case that never meets them is skipped, never failed.
const (
	maxBurstSpan = globalSyncWait / 2 // no flush can fire inside a burst
	minGap       = 3 * globalSyncWait // every flush of a burst lands before the next
	maxGapExcess = 100 * time.Millisecond
	attempts     = 3
)

// Port range for the daemons: fixed ports are required because a daemon marks
// itself among its peers by comparing AdvertiseAddress with the peer's
// GRPCAddress (daemon.go (*Daemon).SetPeers), so ":0" would leave no node
// owning anything. They stay below Linux's ephemeral range (32768–60999), where
// other processes' outgoing connections would collide with them.
const (
	portLow  = 20000
	portHigh = 32000
)

// caseFile is testdata/cases.json.
type caseFile struct {
	Cases []checkCase `json:"cases"`
}

// checkCase is one scenario: a fresh cluster, then bursts of requests.
type checkCase struct {
	Name        string `json:"name"`
	Description string `json:"description"`
	Nodes       int    `json:"nodes"`
	Limit       int64  `json:"limit"`
	DurationMS  int64  `json:"duration_ms"`
	Algorithm   string `json:"algorithm"` // token | leaky
	Behavior    string `json:"behavior"`  // GLOBAL
	// ResetGranularityMS rounds each answer's reset time, taken relative to
	// the start of the request's burst, to the nearest multiple of itself;
	// 0 leaves it out.
	ResetGranularityMS int64   `json:"reset_granularity_ms"`
	Bursts             []burst `json:"bursts"`
}

// burst is a list of requests sent one after another, as fast as possible.
type burst struct {
	// GapMS is the pause after the previous burst's last answer (0: defaultGap).
	GapMS    int64       `json:"gap_ms,omitempty"`
	Requests []caseCalls `json:"requests"`
}

// caseCalls is Repeat identical requests (Repeat 0 means 1).
type caseCalls struct {
	Node   string `json:"node"` // "owner", "peer-1", "peer-2", ...: relative to the key's owner
	Key    string `json:"key"`
	Hits   int64  `json:"hits"`
	Repeat int    `json:"repeat,omitempty"`
}

// golden is testdata/global.golden.json.
type golden struct {
	Library          string       `json:"library"`
	GlobalSyncWaitMS int64        `json:"global_sync_wait_ms"`
	Cases            []goldenCase `json:"cases"`
}

type goldenCase struct {
	Name               string `json:"name"`
	Nodes              int    `json:"nodes"`
	Limit              int64  `json:"limit"`
	DurationMS         int64  `json:"duration_ms"`
	Algorithm          string `json:"algorithm"`
	Behavior           string `json:"behavior"`
	ResetGranularityMS int64  `json:"reset_granularity_ms"`
	// AdmittedHits sums the hits of the UNDER_LIMIT answers to requests with
	// hits > 0: what the cluster let through.
	AdmittedHits int64           `json:"admitted_hits"`
	Requests     []goldenRequest `json:"requests"`
}

type goldenRequest struct {
	Burst     int    `json:"burst"`
	Node      string `json:"node"`
	Key       string `json:"key"`
	Hits      int64  `json:"hits"`
	Status    string `json:"status"`
	Remaining int64  `json:"remaining"`
	ResetMS   *int64 `json:"reset_ms,omitempty"`
}

// timingError says an attempt did not observe the timing the case needs.
type timingError struct{ what string }

func (e *timingError) Error() string { return e.what }

func TestGlobalMatchesGolden(t *testing.T) {
	logrus.SetLevel(logrus.ErrorLevel)
	cases := loadCases(t)
	got := golden{Library: "github.com/gubernator-io/gubernator/v2 v2.13.0", GlobalSyncWaitMS: globalSyncWait.Milliseconds()}
	var want golden
	if !*update {
		raw, err := os.ReadFile(filepath.Join("testdata", "global.golden.json"))
		if err != nil {
			t.Fatalf("read golden (run with -update to create it): %v", err)
		}
		if err := json.Unmarshal(raw, &want); err != nil {
			t.Fatalf("parse golden: %v", err)
		}
	}
	incomplete := false
	for i, c := range cases {
		var result goldenCase
		ok := t.Run(c.Name, func(t *testing.T) {
			var figures []string
			for attempt := 1; attempt <= attempts; attempt++ {
				r, err := runCase(c, t.Logf)
				var te *timingError
				if errors.As(err, &te) {
					figures = append(figures, fmt.Sprintf("attempt %d: %s", attempt, te.what))
					t.Logf("attempt %d discarded, timing not met: %s", attempt, te.what)
					continue
				}
				if err != nil {
					t.Fatal(err)
				}
				result = r
				break
			}
			if result.Name == "" {
				t.Skipf("timing never met (a loaded machine?): %s", strings.Join(figures, "; "))
			}
			if *update {
				return
			}
			if i >= len(want.Cases) || want.Cases[i].Name != c.Name {
				t.Fatalf("golden has no case %q at position %d; run with -update", c.Name, i)
			}
			compareCase(t, want.Cases[i], result)
		})
		if !ok && *update {
			t.Fatalf("case %s failed; golden not written", c.Name)
		}
		got.Cases = append(got.Cases, result)
		incomplete = incomplete || result.Name == ""
	}
	if !*update {
		if len(want.Cases) != len(cases) {
			t.Errorf("golden has %d cases, cases.json %d; run with -update", len(want.Cases), len(cases))
		}
		return
	}
	if incomplete {
		t.Fatal("not every case ran (skipped on timing, or a -run filter); golden not written")
	}
	out, err := json.MarshalIndent(got, "", "  ")
	if err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(filepath.Join("testdata", "global.golden.json"), append(out, '\n'), 0o644); err != nil {
		t.Fatal(err)
	}
}

// compareCase reports every request whose answer differs from the golden.
func compareCase(t *testing.T, want, got goldenCase) {
	t.Helper()
	wantHead, gotHead := want, got
	wantHead.Requests, gotHead.Requests = nil, nil
	if fmt.Sprint(wantHead) != fmt.Sprint(gotHead) {
		t.Errorf("case header: got %+v, golden %+v", gotHead, wantHead)
	}
	if len(want.Requests) != len(got.Requests) {
		t.Fatalf("%d answers, golden %d", len(got.Requests), len(want.Requests))
	}
	for i := range want.Requests {
		w, g := want.Requests[i], got.Requests[i]
		if describe(w) != describe(g) {
			t.Errorf("request %d: got %s, golden %s", i, describe(g), describe(w))
		}
	}
}

func describe(r goldenRequest) string {
	reset := "-"
	if r.ResetMS != nil {
		reset = strconv.FormatInt(*r.ResetMS, 10)
	}
	return fmt.Sprintf("burst %d %s %s hits %d: %s remaining %d reset_ms %s",
		r.Burst, r.Node, r.Key, r.Hits, r.Status, r.Remaining, reset)
}

func loadCases(t *testing.T) []checkCase {
	t.Helper()
	raw, err := os.ReadFile(filepath.Join("testdata", "cases.json"))
	if err != nil {
		t.Fatal(err)
	}
	dec := json.NewDecoder(bytes.NewReader(raw))
	dec.DisallowUnknownFields()
	var f caseFile
	if err := dec.Decode(&f); err != nil {
		t.Fatalf("cases.json: %v", err)
	}
	seen := map[string]bool{}
	for _, c := range f.Cases {
		if err := c.validate(); err != nil {
			t.Fatalf("cases.json: case %q: %v", c.Name, err)
		}
		if seen[c.Name] {
			t.Fatalf("cases.json: case %q: name used twice", c.Name)
		}
		seen[c.Name] = true
	}
	return f.Cases
}

func (c checkCase) validate() error {
	switch {
	case c.Name == "":
		return errors.New("name: empty (want a unique name)")
	case c.Nodes < 2 || c.Nodes > 4:
		return fmt.Errorf("nodes: %d (want 2..4)", c.Nodes)
	case c.Limit < 1 || c.Limit > 1000:
		return fmt.Errorf("limit: %d (want 1..1000)", c.Limit)
	case c.DurationMS < 100 || c.DurationMS > 3_600_000:
		return fmt.Errorf("duration_ms: %d (want 100..3600000)", c.DurationMS)
	case c.Algorithm != "token" && c.Algorithm != "leaky":
		return fmt.Errorf("algorithm: %q (want token or leaky)", c.Algorithm)
	case c.Behavior != "GLOBAL":
		return fmt.Errorf("behavior: %q (want GLOBAL)", c.Behavior)
	case c.ResetGranularityMS < 0:
		return fmt.Errorf("reset_granularity_ms: %d (want >= 0)", c.ResetGranularityMS)
	case len(c.Bursts) == 0 || len(c.Bursts) > 10:
		return fmt.Errorf("bursts: %d (want 1..10)", len(c.Bursts))
	}
	for b, bu := range c.Bursts {
		if bu.GapMS < 0 || bu.GapMS > 10_000 {
			return fmt.Errorf("bursts[%d].gap_ms: %d (want 0..10000)", b, bu.GapMS)
		}
		if len(bu.Requests) == 0 {
			return fmt.Errorf("bursts[%d].requests: empty", b)
		}
		for i, r := range bu.Requests {
			if _, err := roleIndex(r.Node, c.Nodes); err != nil {
				return fmt.Errorf("bursts[%d].requests[%d].node: %v", b, i, err)
			}
			if r.Key == "" {
				return fmt.Errorf("bursts[%d].requests[%d].key: empty", b, i)
			}
			if r.Hits < 0 || r.Hits > 1000 {
				return fmt.Errorf("bursts[%d].requests[%d].hits: %d (want 0..1000)", b, i, r.Hits)
			}
			if r.Repeat < 0 || r.Repeat > 50 {
				return fmt.Errorf("bursts[%d].requests[%d].repeat: %d (want 0..50)", b, i, r.Repeat)
			}
		}
	}
	return nil
}

// roleIndex turns "owner" into 0 and "peer-k" into k (1..nodes-1).
func roleIndex(role string, nodes int) (int, error) {
	if role == "owner" {
		return 0, nil
	}
	k, err := strconv.Atoi(strings.TrimPrefix(role, "peer-"))
	if !strings.HasPrefix(role, "peer-") || err != nil || k < 1 || k >= nodes {
		return 0, fmt.Errorf("%q (want owner or peer-1..peer-%d)", role, nodes-1)
	}
	return k, nil
}

// node is one in-process gubernator daemon and a client connected to it.
type node struct {
	daemon  *guber.Daemon
	conn    *grpc.ClientConn
	client  guber.V1Client
	metrics *prometheus.Registry
}

type cluster struct{ nodes []*node }

// startCluster starts n daemons on consecutive free loopback ports below the
// ephemeral range, retrying with other ports when a bind fails.
func startCluster(n int) (*cluster, error) {
	var lastErr error
	for try := 0; try < 8; try++ {
		base := portLow + 2*rand.IntN((portHigh-portLow)/2-2*n)
		c, err := startClusterAt(base, n)
		if err == nil {
			return c, nil
		}
		lastErr = err
		if !errors.Is(err, syscall.EADDRINUSE) && !strings.Contains(err.Error(), "address already in use") {
			return nil, err
		}
	}
	return nil, fmt.Errorf("no free ports after 8 tries: %w", lastErr)
}

func startClusterAt(base, n int) (*cluster, error) {
	// Check the ports first: a failed SpawnDaemon leaves goroutines behind.
	for p := base; p < base+2*n; p++ {
		l, err := net.Listen("tcp", fmt.Sprintf("127.0.0.1:%d", p))
		if err != nil {
			return nil, err
		}
		l.Close()
	}
	c := &cluster{}
	var peers []guber.PeerInfo
	for i := 0; i < n; i++ {
		grpcAddr := fmt.Sprintf("127.0.0.1:%d", base+2*i)
		httpAddr := fmt.Sprintf("127.0.0.1:%d", base+2*i+1)
		ctx, cancel := context.WithTimeout(context.Background(), 10*time.Second)
		d, err := guber.SpawnDaemon(ctx, guber.DaemonConfig{
			InstanceID:        grpcAddr,
			GRPCListenAddress: grpcAddr,
			HTTPListenAddress: httpAddr,
			AdvertiseAddress:  grpcAddr,
			Logger:            logrus.WithField("instance", grpcAddr),
			Behaviors: guber.BehaviorConfig{
				GlobalSyncWait: globalSyncWait,
				GlobalTimeout:  5 * time.Second,
				BatchTimeout:   5 * time.Second,
			},
		})
		cancel()
		if err != nil {
			d.Close()
			_ = c.stop()
			return nil, fmt.Errorf("start daemon on %s: %w", grpcAddr, err)
		}
		d.PeerInfo = guber.PeerInfo{GRPCAddress: grpcAddr, HTTPAddress: httpAddr}
		conn, err := grpc.NewClient(grpcAddr, grpc.WithTransportCredentials(insecure.NewCredentials()))
		if err != nil {
			d.Close()
			_ = c.stop()
			return nil, err
		}
		reg := prometheus.NewRegistry()
		if err := reg.Register(d.V1Server); err != nil {
			conn.Close()
			d.Close()
			_ = c.stop()
			return nil, err
		}
		c.nodes = append(c.nodes, &node{daemon: d, conn: conn, client: guber.NewV1Client(conn), metrics: reg})
		peers = append(peers, d.PeerInfo)
	}
	for _, nd := range c.nodes {
		nd.daemon.SetPeers(peers)
	}
	return c, nil
}

// closeWait bounds how long stop waits for a daemon to close.
const closeWait = 10 * time.Second

// stop closes the clients, then the daemons. A daemon whose Close does not
// return within closeWait is left behind (its goroutines and ports live on
// until the test binary exits) and its goroutines are dumped to a file named
// in the returned error, so one stuck Close costs seconds, not the test's
// timeout.
func (c *cluster) stop() error {
	for _, nd := range c.nodes {
		nd.conn.Close()
	}
	var stuck []string
	for _, nd := range c.nodes {
		closed := make(chan struct{})
		go func() {
			nd.daemon.Close()
			close(closed)
		}()
		select {
		case <-closed:
		case <-time.After(closeWait):
			stuck = append(stuck, nd.daemon.PeerInfo.GRPCAddress)
		}
	}
	c.nodes = nil
	if len(stuck) == 0 {
		return nil
	}
	dump, err := os.CreateTemp("", "gubernatorcheck-close-*.txt")
	if err != nil {
		return fmt.Errorf("daemon.Close did not return within %v for %v", closeWait, stuck)
	}
	defer dump.Close()
	_ = pprof.Lookup("goroutine").WriteTo(dump, 2)
	return fmt.Errorf("daemon.Close did not return within %v for %v; goroutines in %s", closeWait, stuck, dump.Name())
}

// roles maps a key to its nodes: index 0 the owner (as every daemon's hash
// ring says, replicated_hash.go Get), then the non-owners in daemon order.
func (c *cluster) roles(hashKey string) ([]*node, error) {
	var owner string
	for i, nd := range c.nodes {
		p, err := nd.daemon.V1Server.GetPeer(context.Background(), hashKey)
		if err != nil {
			return nil, err
		}
		if i > 0 && p.Info().GRPCAddress != owner {
			return nil, fmt.Errorf("daemons disagree on the owner of %q", hashKey)
		}
		owner = p.Info().GRPCAddress
	}
	out := []*node{nil}
	for _, nd := range c.nodes {
		if nd.daemon.PeerInfo.GRPCAddress == owner {
			out[0] = nd
		} else {
			out = append(out, nd)
		}
	}
	if out[0] == nil {
		return nil, fmt.Errorf("owner %s of %q is not a daemon", owner, hashKey)
	}
	return out, nil
}

// syncState is what a node's globalManager reports (global.go metrics): how
// many hit sends and broadcasts it completed and how many keys wait for each.
type syncState struct {
	sends, broadcasts           uint64
	queuedHits, queuedBroadcast float64
}

func (nd *node) syncState() (syncState, error) {
	families, err := nd.metrics.Gather()
	if err != nil {
		return syncState{}, err
	}
	var s syncState
	for _, f := range families {
		m := f.GetMetric()
		if len(m) == 0 {
			continue
		}
		switch f.GetName() {
		case "gubernator_global_send_duration":
			s.sends = summaryCount(m[0])
		case "gubernator_broadcast_duration":
			s.broadcasts = summaryCount(m[0])
		case "gubernator_global_send_queue_length":
			s.queuedHits = m[0].GetGauge().GetValue()
		case "gubernator_global_queue_length":
			s.queuedBroadcast = m[0].GetGauge().GetValue()
		}
	}
	return s, nil
}

func summaryCount(m *dto.Metric) uint64 { return m.GetSummary().GetSampleCount() }

func (c *cluster) syncStates() ([]syncState, error) {
	out := make([]syncState, len(c.nodes))
	for i, nd := range c.nodes {
		s, err := nd.syncState()
		if err != nil {
			return nil, err
		}
		out[i] = s
	}
	return out, nil
}

// settle waits, at most limit, until no node has hits or updates queued and
// no node completed a sync for 3 × globalSyncWait.
func (c *cluster) settle(limit time.Duration) {
	deadline := time.Now().Add(limit)
	prev, err := c.syncStates()
	for err == nil && time.Now().Before(deadline) {
		time.Sleep(3 * globalSyncWait)
		var cur []syncState
		if cur, err = c.syncStates(); err != nil {
			return
		}
		quiet := true
		for i := range cur {
			if cur[i] != prev[i] || cur[i].queuedHits != 0 || cur[i].queuedBroadcast != 0 {
				quiet = false
			}
		}
		if quiet {
			return
		}
		prev = cur
	}
}

const rateLimitName = "gubercheck"

// warmUp opens every peer connection (non-owner → owner hits, owner → all
// broadcasts) with keys of another name, so the first burst of a case does
// not pay for dialing.
func (c *cluster) warmUp() error {
	owned := map[*node]bool{}
	for i := 0; len(owned) < len(c.nodes) && i < 1000; i++ {
		key := fmt.Sprintf("warm-%d", i)
		roles, err := c.roles("warmup_" + key)
		if err != nil {
			return err
		}
		if owned[roles[0]] {
			continue
		}
		owned[roles[0]] = true
		for _, nd := range c.nodes {
			if _, err := call(nd, &guber.RateLimitReq{Name: "warmup", UniqueKey: key, Hits: 1, Limit: 100,
				Duration: 60_000, Behavior: guber.Behavior_GLOBAL}); err != nil {
				return err
			}
		}
	}
	time.Sleep(defaultGap)
	return nil
}

func call(nd *node, req *guber.RateLimitReq) (*guber.RateLimitResp, error) {
	ctx, cancel := context.WithTimeout(context.Background(), 5*time.Second)
	defer cancel()
	resp, err := nd.client.GetRateLimits(ctx, &guber.GetRateLimitsReq{Requests: []*guber.RateLimitReq{req}})
	if err != nil {
		return nil, err
	}
	if len(resp.Responses) != 1 {
		return nil, fmt.Errorf("%d responses to one request", len(resp.Responses))
	}
	r := resp.Responses[0]
	if r.Error != "" {
		return nil, fmt.Errorf("gubernator: %s", r.Error)
	}
	return r, nil
}

// runCase runs c once on a fresh cluster. A *timingError means the attempt did
// not observe the timing the case needs (the answers are then not used).
//
// A daemon that does not close is logged through logf, not failed: it says
// nothing about the answers (see cluster.stop).
func runCase(c checkCase, logf func(string, ...any)) (result goldenCase, err error) {
	cl, err := startCluster(c.Nodes)
	if err != nil {
		return goldenCase{}, err
	}
	defer func() {
		// An attempt cut short may leave syncs pending; closing a daemon then
		// can hang (see README, Noticed), so let them finish first.
		cl.settle(3 * time.Second)
		if stopErr := cl.stop(); stopErr != nil {
			logf("%v", stopErr)
		}
	}()
	if err := cl.warmUp(); err != nil {
		return goldenCase{}, fmt.Errorf("warm up: %w", err)
	}
	algorithm := guber.Algorithm_TOKEN_BUCKET
	if c.Algorithm == "leaky" {
		algorithm = guber.Algorithm_LEAKY_BUCKET
	}
	roleCache := map[string][]*node{}
	nodeFor := func(role, key string) (*node, error) {
		roles, ok := roleCache[key]
		if !ok {
			var err error
			if roles, err = cl.roles(rateLimitName + "_" + c.Name + "/" + key); err != nil {
				return nil, err
			}
			roleCache[key] = roles
		}
		k, err := roleIndex(role, c.Nodes)
		if err != nil {
			return nil, err
		}
		return roles[k], nil
	}

	out := goldenCase{Name: c.Name, Nodes: c.Nodes, Limit: c.Limit, DurationMS: c.DurationMS,
		Algorithm: c.Algorithm, Behavior: c.Behavior, ResetGranularityMS: c.ResetGranularityMS}
	var lastAnswer time.Time
	for b, bu := range c.Bursts {
		if b > 0 {
			gap := defaultGap
			if bu.GapMS > 0 {
				gap = time.Duration(bu.GapMS) * time.Millisecond
			}
			time.Sleep(gap - time.Since(lastAnswer))
			if observed := time.Since(lastAnswer); observed < minGap || observed > gap+maxGapExcess {
				return out, &timingError{fmt.Sprintf("burst %d began %v after the previous one ended (want %v..%v)",
					b, observed.Round(time.Millisecond), minGap, gap+maxGapExcess)}
			}
		}
		before, err := cl.syncStates()
		if err != nil {
			return out, err
		}
		for i, s := range before {
			if s.queuedHits != 0 || s.queuedBroadcast != 0 {
				return out, &timingError{fmt.Sprintf("burst %d: node %d still had %v hit keys and %v updates queued at its start",
					b, i, s.queuedHits, s.queuedBroadcast)}
			}
		}
		burstStart := time.Now()
		for _, calls := range bu.Requests {
			nd, err := nodeFor(calls.Node, calls.Key)
			if err != nil {
				return out, err
			}
			for range max(calls.Repeat, 1) {
				r, err := call(nd, &guber.RateLimitReq{Name: rateLimitName, UniqueKey: c.Name + "/" + calls.Key,
					Hits: calls.Hits, Limit: c.Limit, Duration: c.DurationMS, Algorithm: algorithm,
					Behavior: guber.Behavior_GLOBAL})
				if err != nil {
					return out, fmt.Errorf("burst %d %s %s: %w", b, calls.Node, calls.Key, err)
				}
				answer := goldenRequest{Burst: b, Node: calls.Node, Key: calls.Key, Hits: calls.Hits,
					Status: r.Status.String(), Remaining: r.Remaining}
				if g := c.ResetGranularityMS; g > 0 {
					offset := r.ResetTime - burstStart.UnixMilli()
					rounded := (offset + g/2) / g * g
					answer.ResetMS = &rounded
				}
				if answer.Status == guber.Status_UNDER_LIMIT.String() {
					out.AdmittedHits += calls.Hits
				}
				out.Requests = append(out.Requests, answer)
			}
		}
		lastAnswer = time.Now()
		if span := lastAnswer.Sub(burstStart); span > maxBurstSpan {
			return out, &timingError{fmt.Sprintf("burst %d took %v (want <= %v)", b, span.Round(time.Millisecond), maxBurstSpan)}
		}
		after, err := cl.syncStates()
		if err != nil {
			return out, err
		}
		for i := range after {
			if after[i].sends != before[i].sends || after[i].broadcasts != before[i].broadcasts {
				return out, &timingError{fmt.Sprintf("burst %d: node %d completed a sync during the burst", b, i)}
			}
		}
	}
	return out, nil
}
