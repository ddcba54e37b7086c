package sim

import (
	"context"
	"encoding/json"
	"os"
	"path/filepath"
	"testing"
	"time"

	"github.com/ratelim/ratelim/algorithms"
	"github.com/ratelim/ratelim/store"
)

// The real library's answers, recorded by internal/gubernatorcheck (a
// module of its own, so that gubernator's dependencies stay out of this
// one): its cases, and each request's answer.
const gubernatorCheck = "../internal/gubernatorcheck/testdata"

type gubernatorGolden struct {
	Library          string `json:"library"`
	GlobalSyncWaitMS int64  `json:"global_sync_wait_ms"`
	Cases            []struct {
		Name       string `json:"name"`
		Nodes      int    `json:"nodes"`
		Limit      int64  `json:"limit"`
		DurationMS int64  `json:"duration_ms"`
		Algorithm  string `json:"algorithm"`
		Requests   []struct {
			Burst     int    `json:"burst"`
			Node      string `json:"node"`
			Key       string `json:"key"`
			Hits      int64  `json:"hits"`
			Status    string `json:"status"`
			Remaining int64  `json:"remaining"`
		} `json:"requests"`
	} `json:"cases"`
}

type gubernatorCases struct {
	Cases []struct {
		Name   string `json:"name"`
		Bursts []struct {
			GapMS int64 `json:"gap_ms"`
		} `json:"bursts"`
	} `json:"cases"`
}

// TestOwnerAgreesWithGubernator replays each case the real gubernator
// v2.13.0 answered (three or four daemons in process, GLOBAL behaviour,
// GlobalSyncWait 50ms, bursts far apart: internal/gubernatorcheck) on
// the owner model with the gubernator algorithm of the case (its token
// bucket, or its leaky bucket), request by request on the node the case
// names (the key's owner, or the first, second... of the others), the
// bursts as far apart as there, and requires every answer's status and
// remaining to be the library's.
func TestOwnerAgreesWithGubernator(t *testing.T) {
	var golden gubernatorGolden
	var cases gubernatorCases
	for path, into := range map[string]any{"global.golden.json": &golden, "cases.json": &cases} {
		data, err := os.ReadFile(filepath.Join(gubernatorCheck, path))
		if err != nil {
			t.Fatal(err)
		}
		if err := json.Unmarshal(data, into); err != nil {
			t.Fatalf("%s: %v", path, err)
		}
	}
	gaps := map[string][]int64{}
	for _, c := range cases.Cases {
		for _, b := range c.Bursts {
			gaps[c.Name] = append(gaps[c.Name], b.GapMS)
		}
	}
	compared := 0
	for _, c := range golden.Cases {
		algorithm := map[string]string{"token": "gubernator", "leaky": "gubernator-leaky"}[c.Algorithm]
		if algorithm == "" {
			t.Fatalf("%s: no model of gubernator's %q algorithm", c.Name, c.Algorithm)
		}
		t.Run(c.Name, func(t *testing.T) {
			window := time.Duration(c.DurationMS) * time.Millisecond
			sc := Scenario{Name: c.Name, Duration: time.Hour, Step: time.Second, Servers: c.Nodes, Seed: 1, Balancer: RoundRobin,
				Limit:    Limit{Algorithm: algorithm, Params: algorithms.Params{Rate: algorithms.Rate{N: c.Limit, Per: window}, Window: window}, Key: KeyAPIKey},
				Topology: Topology{Kind: Owner, SyncWait: time.Duration(golden.GlobalSyncWaitMS) * time.Millisecond, OnError: store.FailOpen, Clock: ServerClock, PrimaryStopsAfter: PrimaryNeverStops},
				Clients:  []Client{{Name: "k", APIKey: "k", Traffic: []Traffic{{Pattern: Times}}}},
			}
			ctx := context.Background()
			s, err := newSim(ctx, sc, Options{})
			if err != nil {
				t.Fatal(err)
			}
			defer s.close()
			key := s.clients[0].key
			owner := int(s.owner.owners[key])
			// The nodes by role: the owner, then the others in order.
			roles := map[string]int{"owner": owner}
			for n, peer := 0, 1; n < c.Nodes; n++ {
				if n != owner {
					roles["peer-"+string(rune('0'+peer))] = n
					peer++
				}
			}
			// Each burst starts its gap (300ms unless the case says) after
			// the one before; its requests a microsecond apart.
			start := map[int]int64{}
			at := int64(0)
			for b := range gaps[c.Name] {
				gap := gaps[c.Name][b]
				if gap == 0 {
					gap = 300
				}
				if b > 0 {
					at += gap * 1000
				}
				start[b] = at + 1000
			}
			last := -1
			var now int64
			for i, r := range c.Requests {
				if r.Burst != last {
					now, last = start[r.Burst], r.Burst
				} else {
					now++
				}
				for s.queue.len() > 0 && s.queue.items[0].at <= now {
					if err := s.handle(ctx, s.queue.pop()); err != nil {
						t.Fatal(err)
					}
				}
				node, ok := roles[r.Node]
				if !ok {
					t.Fatalf("request %d: no node %q among %d", i, r.Node, c.Nodes)
				}
				p := pending{client: 0, t: now, now: algorithms.Time(now), cost: r.Hits, key: key, server: node, target: node}
				var d store.Decision
				if err := s.takeOwner(ctx, &p, &d); err != nil {
					t.Fatal(err)
				}
				status := "OVER_LIMIT"
				if d.Allowed {
					status = "UNDER_LIMIT"
				}
				if r.Hits > 0 && status != r.Status || d.Remaining != r.Remaining {
					t.Errorf("request %d (burst %d, %s, %d hits): the model says %s, remaining %d; gubernator said %s, remaining %d",
						i, r.Burst, r.Node, r.Hits, status, d.Remaining, r.Status, r.Remaining)
				}
				compared++
			}
		})
	}
	if compared == 0 {
		t.Fatal("no request compared")
	}
	t.Logf("%d requests compared with %s", compared, golden.Library)
}
