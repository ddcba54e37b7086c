package sim

import (
	"context"
	"reflect"
	"testing"
)

// prepare writes every field of a pending one by one (a literal cost a
// copy), so a field it forgets would keep the previous request's value:
// a pending full of another request's values must come out of prepare as
// a zero one does, on a local and a remote topology.
func TestPrepareWritesEveryField(t *testing.T) {
	for _, kind := range []TopologyKind{Local, Shared} {
		t.Run(string(kind), func(t *testing.T) {
			p, err := NewPlayer(context.Background(), hammer(kind, 2, RoundRobin), Options{})
			if err != nil {
				t.Fatal(err)
			}
			defer p.Close()
			s := p.s
			// Every field another request's, none the zero value.
			stale := pending{client: 1, t: 99, cost: 9, attempt: 2, key: 3, now: 99, target: 5, latency: 7,
				seq: 99, service: 8, retrySeq: 99, releaseSeq: 99, server: 6, deferred: true}
			if n := reflect.TypeFor[pending]().NumField(); n != 14 {
				t.Fatalf("pending has %d fields, stale sets 14: set the new ones", n)
			}
			sent, spread := s.sent, s.spread
			if err := s.prepare(&stale, 0, 1000, 1, 0, -1); err != nil {
				t.Fatal(err)
			}
			s.sent, s.spread = sent, spread // the second prepare sees what the first did
			var fresh pending
			if err := s.prepare(&fresh, 0, 1000, 1, 0, -1); err != nil {
				t.Fatal(err)
			}
			if stale != fresh {
				t.Errorf("prepare over a stale pending gives %+v, over a zero one %+v", stale, fresh)
			}
		})
	}
}
