package sim

import (
	"slices"
	"strings"
	"testing"
)

// result builds a Result from clients alone: each client's key totals are
// added up into Keys, as the recorder does.
func result(topology TopologyKind, servers int, clients ...ClientResult) *Result {
	r := &Result{Scenario: "t", Algorithm: "token-bucket", Topology: string(topology), Servers: servers, DurationS: 10,
		Limit: LimitResult{RatePerS: 10, Burst: 20, Key: "api-key"}, Clients: clients}
	for _, c := range clients {
		i := slices.IndexFunc(r.Keys, func(k KeyResult) bool { return k.Key == c.Key })
		if i < 0 {
			r.Keys = append(r.Keys, KeyResult{Key: c.Key})
			i = len(r.Keys) - 1
		}
		k := &r.Keys[i]
		k.Clients++
		k.Sent += c.Sent
		k.Allowed += c.Allowed
		k.Rejected += c.Rejected
		k.FailedOpen += c.FailedOpen
		k.FailedClosed += c.FailedClosed
		k.IdealAllowed += c.IdealAllowed
		k.MaxAllowed1s = max(k.MaxAllowed1s, c.MaxAllowed1s)
		k.IdealMaxAllowed1s = max(k.IdealMaxAllowed1s, c.IdealMaxAllowed1s)
	}
	return r
}

func kinds(fs []Finding) []FindingKind {
	var out []FindingKind
	for _, f := range fs {
		out = append(out, f.Kind)
	}
	return out
}

func TestFindings(t *testing.T) {
	tests := []struct {
		name string
		r    *Result
		want []FindingKind
		// text is in the first finding's text.
		text string
	}{
		{
			name: "exact when nothing stands out",
			r:    result(Shared, 1, ClientResult{Name: "a", Key: "a", Counts: Counts{Sent: 50, Allowed: 50}, IdealAllowed: 50, MaxAllowed1s: 20, IdealMaxAllowed1s: 20}),
			want: []FindingKind{FindingExact},
			text: "admitted 1.00× what one exact limiter would",
		},
		{
			name: "jars per server over-admit, and the topology is the reason",
			r:    result(Local, 4, ClientResult{Name: "a", Key: "a", Counts: Counts{Sent: 1000, Allowed: 400, Rejected: 600}, IdealAllowed: 100, MaxAllowed1s: 80, IdealMaxAllowed1s: 20}),
			want: []FindingKind{FindingOverAdmitted, FindingWorstWindow},
			text: "4.00× what one exact limiter would on the same arrivals: 4 servers, each with its own jar",
		},
		{
			name: "4% over is noise",
			r:    result(Local, 4, ClientResult{Name: "a", Key: "a", Counts: Counts{Sent: 104, Allowed: 104}, IdealAllowed: 100, MaxAllowed1s: 21, IdealMaxAllowed1s: 20}),
			want: []FindingKind{FindingExact},
		},
		{
			name: "a fixed window's boundary leads even when the total is as over",
			r: func() *Result {
				r := result(Shared, 1, ClientResult{Name: "b", Key: "b", Counts: Counts{Sent: 200, Allowed: 200}, IdealAllowed: 100, MaxAllowed1s: 200, IdealMaxAllowed1s: 100})
				r.Algorithm = "fixed-window"
				return r
			}(),
			want: []FindingKind{FindingWorstWindow, FindingOverAdmitted},
			text: "b got 200 admitted within 1 s, 2.00× an exact limiter's worst second (100): a fixed window",
		},
		{
			name: "failed open leads, and the worst second it explains is not repeated",
			r: func() *Result {
				r := result(Shared, 2,
					ClientResult{Name: "scraper", Key: "s", Counts: Counts{Sent: 3000, Allowed: 1200, Rejected: 1800, FailedOpen: 1000}, IdealAllowed: 300, MaxAllowed1s: 100, IdealMaxAllowed1s: 30},
					ClientResult{Name: "mobile", Key: "m", Counts: Counts{Sent: 150, Allowed: 150, FailedOpen: 50}, IdealAllowed: 150, MaxAllowed1s: 5, IdealMaxAllowed1s: 5})
				r.Faults = []FaultSpan{{Kind: string(Outage), StartS: 10, EndS: 20}}
				return r
			}(),
			want: []FindingKind{FindingFailedOpen, FindingOverAdmitted, FindingIsolated},
			text: "1,050 requests failed open, admitted unchecked while the store was unreachable (10–20s); 1,000 were scraper's",
		},
		{
			name: "failed closed names who was under its limit",
			r: func() *Result {
				r := result(Shared, 2,
					ClientResult{Name: "scraper", Key: "s", Counts: Counts{Sent: 3000, Allowed: 200, Rejected: 2800, FailedClosed: 1000}, IdealAllowed: 300, MaxAllowed1s: 30, IdealMaxAllowed1s: 30},
					ClientResult{Name: "mobile", Key: "m", Counts: Counts{Sent: 150, Allowed: 100, Rejected: 50, FailedClosed: 50}, IdealAllowed: 150, MaxAllowed1s: 5, IdealMaxAllowed1s: 5})
				r.Faults = []FaultSpan{{Kind: string(Outage), StartS: 10, EndS: 20}}
				return r
			}(),
			// mobile lost requests too, so nothing was isolated.
			want: []FindingKind{FindingFailedClosed},
			text: "1,050 requests failed closed while the store was unreachable (10–20s): mobile, under its limit, lost 50",
		},
		{
			name: "a neighbour on a shared key takes the quota",
			r: result(Shared, 1,
				ClientResult{Name: "office-1", Key: "nat", Counts: Counts{Sent: 10, Allowed: 8, Rejected: 2}, IdealAllowed: 8, MaxAllowed1s: 2, IdealMaxAllowed1s: 2},
				ClientResult{Name: "office-2", Key: "nat", Counts: Counts{Sent: 10, Allowed: 7, Rejected: 3}, IdealAllowed: 7, MaxAllowed1s: 2, IdealMaxAllowed1s: 2},
				ClientResult{Name: "office-3", Key: "nat", Counts: Counts{Sent: 10, Allowed: 9, Rejected: 1}, IdealAllowed: 9, MaxAllowed1s: 2, IdealMaxAllowed1s: 2},
				ClientResult{Name: "sync", Key: "nat", Counts: Counts{Sent: 500, Allowed: 70, Rejected: 430}, IdealAllowed: 70, MaxAllowed1s: 10, IdealMaxAllowed1s: 10}),
			want: []FindingKind{FindingLostUnderShare},
			text: "office-1…3 had 6 requests refused sending under their share of key nat (10/s ÷ 4 clients); sync took 70 of the key's 94 admitted",
		},
		{
			name: "a client alone on its key has no share to lose",
			r:    result(Shared, 1, ClientResult{Name: "a", Key: "a", Counts: Counts{Sent: 10, Allowed: 8, Rejected: 2}, IdealAllowed: 8, MaxAllowed1s: 8, IdealMaxAllowed1s: 8}),
			want: []FindingKind{FindingExact},
		},
		{
			name: "retries that win nothing, against the retrier that did best",
			r: result(Shared, 1,
				ClientResult{Name: "eager", Key: "e", Counts: Counts{Sent: 300, Allowed: 80, Rejected: 220}, Retries: 200, RetriesAllowed: 1, IdealAllowed: 80, MaxAllowed1s: 10, IdealMaxAllowed1s: 10},
				ClientResult{Name: "patient", Key: "p", Counts: Counts{Sent: 150, Allowed: 100, Rejected: 50}, Retries: 50, RetriesAllowed: 40, IdealAllowed: 100, MaxAllowed1s: 10, IdealMaxAllowed1s: 10}),
			want: []FindingKind{FindingRetriesWasted},
			text: "eager sent 200 retries and 1 was admitted: retrying won almost nothing (patient got 40 of its 50 retries admitted)",
		},
		{
			name: "nine retries are too few to judge",
			r:    result(Shared, 1, ClientResult{Name: "eager", Key: "e", Counts: Counts{Sent: 20, Allowed: 11, Rejected: 9}, Retries: 9, IdealAllowed: 11, MaxAllowed1s: 10, IdealMaxAllowed1s: 10}),
			want: []FindingKind{FindingExact},
		},
		{
			name: "a leaky bucket's queue",
			r: func() *Result {
				r := result(Shared, 1, ClientResult{Name: "rack", Key: "r", Counts: Counts{Sent: 40, Allowed: 40}, IdealAllowed: 40, MaxAllowed1s: 40, IdealMaxAllowed1s: 40, LatencyMs: LatencySummary{P50: 4000.5, P99: 7800.5}})
				r.Algorithm, r.RTTMs = "leaky-bucket", 0.5
				return r
			}(),
			want: []FindingKind{FindingQueued},
			text: "rack's admitted requests waited up to 7.8 s in the queue (p99)",
		},
		{
			name: "a token bucket's round trip is no queue",
			r: func() *Result {
				r := result(Shared, 1, ClientResult{Name: "rack", Key: "r", Counts: Counts{Sent: 40, Allowed: 40}, IdealAllowed: 40, MaxAllowed1s: 40, IdealMaxAllowed1s: 40, LatencyMs: LatencySummary{P50: 0.5, P99: 50}})
				r.RTTMs = 0.5
				return r
			}(),
			want: []FindingKind{FindingExact},
		},
		{
			name: "a race needs two servers: on one, a fixed window's boundary is the cause",
			r: func() *Result {
				r := result(Racy, 1, ClientResult{Name: "b", Key: "b", Counts: Counts{Sent: 200, Allowed: 200}, IdealAllowed: 100, MaxAllowed1s: 200, IdealMaxAllowed1s: 100})
				r.Algorithm = "fixed-window"
				return r
			}(),
			want: []FindingKind{FindingWorstWindow, FindingOverAdmitted},
			text: "a fixed window lets a second burst through",
		},
		{
			name: "requests failed open explain the excess, whatever the topology",
			r: func() *Result {
				r := result(Racy, 2, ClientResult{Name: "s", Key: "s", Counts: Counts{Sent: 3000, Allowed: 1200, Rejected: 1800, FailedOpen: 1000}, IdealAllowed: 300, MaxAllowed1s: 100, IdealMaxAllowed1s: 30})
				r.Faults = []FaultSpan{{Kind: string(Outage), StartS: 10, EndS: 20}}
				r.Findings = nil
				return r
			}(),
			want: []FindingKind{FindingFailedOpen, FindingOverAdmitted},
		},
		{
			name: "clients held to different degrees are given as a range",
			r: result(Shared, 1,
				ClientResult{Name: "bastion", Key: "b", Counts: Counts{Sent: 1000, Allowed: 10, Rejected: 990}, IdealAllowed: 10, MaxAllowed1s: 5, IdealMaxAllowed1s: 5},
				ClientResult{Name: "cron", Key: "c", Counts: Counts{Sent: 42, Allowed: 10, Rejected: 32}, IdealAllowed: 10, MaxAllowed1s: 10, IdealMaxAllowed1s: 10},
				ClientResult{Name: "web", Key: "w", Counts: Counts{Sent: 50, Allowed: 50}, IdealAllowed: 50, MaxAllowed1s: 5, IdealMaxAllowed1s: 5}),
			want: []FindingKind{FindingIsolated},
			text: "bastion and cron had 76–99% of their requests refused; web, on other keys, lost none",
		},
		{
			name: "no isolation where neighbours on the held key lost too",
			r: result(Shared, 1,
				ClientResult{Name: "office", Key: "nat", Counts: Counts{Sent: 10, Allowed: 8, Rejected: 2}, IdealAllowed: 8, MaxAllowed1s: 2, IdealMaxAllowed1s: 2},
				ClientResult{Name: "sync", Key: "nat", Counts: Counts{Sent: 500, Allowed: 70, Rejected: 430}, IdealAllowed: 70, MaxAllowed1s: 10, IdealMaxAllowed1s: 10},
				ClientResult{Name: "home", Key: "home", Counts: Counts{Sent: 30, Allowed: 30}, IdealAllowed: 30, MaxAllowed1s: 3, IdealMaxAllowed1s: 3}),
			want: []FindingKind{FindingLostUnderShare},
		},
		{
			name: "a runaway held while the others lose nothing",
			r: result(Shared, 4,
				ClientResult{Name: "bastion-1", Key: "b1", Counts: Counts{Sent: 20000, Allowed: 250, Rejected: 19750}, IdealAllowed: 250, MaxAllowed1s: 60, IdealMaxAllowed1s: 60},
				ClientResult{Name: "bastion-2", Key: "b2", Counts: Counts{Sent: 20000, Allowed: 250, Rejected: 19750}, IdealAllowed: 250, MaxAllowed1s: 60, IdealMaxAllowed1s: 60},
				ClientResult{Name: "scheduler", Key: "s", Counts: Counts{Sent: 42, Allowed: 42}, IdealAllowed: 42, MaxAllowed1s: 42, IdealMaxAllowed1s: 42}),
			want: []FindingKind{FindingIsolated},
			text: "bastion-1 and bastion-2 had 99% of their requests refused; scheduler, on other keys, lost none",
		},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			got := Findings(tt.r)
			if !slices.Equal(kinds(got), tt.want) {
				t.Fatalf("kinds %v, want %v:\n%+v", kinds(got), tt.want, got)
			}
			if tt.text != "" && !strings.Contains(got[0].Text, tt.text) {
				t.Errorf("first finding %q, want it to contain %q", got[0].Text, tt.text)
			}
		})
	}
}

func TestCopiesDiverged(t *testing.T) {
	r := result(SplitBrain, 4, ClientResult{Name: "a", Key: "a", Counts: Counts{Sent: 100, Allowed: 50, Rejected: 50}, IdealAllowed: 50, MaxAllowed1s: 10, IdealMaxAllowed1s: 10})
	from := func(s float64) *float64 { return &s }
	r.State = []StateSeries{
		{Key: "a", Copy: "primary", TS: []float64{1, 2, 3}, Remaining: []int64{20, 5, 0}, DecidedFromS: from(0)},
		{Key: "a", Copy: "replica", TS: []float64{1, 2, 3}, Remaining: []int64{20, 15, -1}, DecidedFromS: from(1.5)}, // -1: unreadable, not a gap
	}
	// Issue 30: a replica that never took a write of its own (promoted
	// never, or never reached) trails its primary; it did not count apart.
	r.State[1].DecidedFromS = nil
	if got := Findings(r); got[0].Kind != FindingExact {
		t.Errorf("findings %+v, want exact while the replica only followed", got)
	}
	r.State[1].DecidedFromS = from(2)
	if got := Findings(r); got[0].Kind != FindingExact {
		t.Errorf("findings %+v, want exact: the replica decided from 2s, its point at 2s is what it followed", got)
	}
	r.State[1].DecidedFromS = from(1.5)
	got := Findings(r)
	if len(got) != 1 || got[0].Kind != FindingCopiesDiverged || got[0].Value != 10 || !strings.Contains(got[0].Text, "key a: its 2 copies disagreed by up to 10 requests at 2s") {
		t.Errorf("findings %+v, want copies-diverged by 10 at 2s", got)
	}
	// A gap of 1 on a burst of 20 is rounding, not a split.
	r.State[1].Remaining = []int64{20, 6, 0}
	if got := Findings(r); got[0].Kind != FindingExact {
		t.Errorf("findings %+v, want exact for a gap of 1", got)
	}
}

func TestFindingsWords(t *testing.T) {
	for _, tt := range []struct {
		names []string
		want  string
	}{
		{[]string{"a"}, "a"},
		{[]string{"a", "b"}, "a and b"},
		{[]string{"a", "b", "c"}, "a, b and c"},
		{[]string{"a", "b", "c", "d", "e"}, "a, b, c and 2 others"},
		{[]string{"office-1", "office-2", "office-3"}, "office-1…3"},
		{[]string{"office-1", "office-3", "office-4"}, "office-1, office-3 and office-4"}, // not a run
		{[]string{"x1", "y2", "y3"}, "x1, y2 and y3"},
	} {
		if got := nameList(tt.names); got != tt.want {
			t.Errorf("nameList(%q) = %q, want %q", tt.names, got, tt.want)
		}
	}
	for _, tt := range []struct {
		part, whole int64
		want        string
	}{{0, 0, "0%"}, {0, 10, "0%"}, {1, 1000, "<1%"}, {999, 1000, ">99%"}, {1000, 1000, "100%"}, {1, 2, "50%"}} {
		if got := percent(tt.part, tt.whole); got != tt.want {
			t.Errorf("percent(%d, %d) = %q, want %q", tt.part, tt.whole, got, tt.want)
		}
	}
}
