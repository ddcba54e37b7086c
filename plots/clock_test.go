package plots

import (
	"bytes"
	"slices"
	"strings"
	"testing"
	"time"

	"gonum.org/v1/plot/vg"

	"github.com/ratelim/ratelim/sim"
)

// replayResult is a replay of ten minutes of an access log written out by
// hand: a stuffer refused most of the time and an ordinary key never,
// 10 s steps, the log starting at 10:00:00 UTC.
func replayResult() *sim.Result {
	r := &sim.Result{
		Schema: sim.Schema, Scenario: "replay of access.log", Algorithm: "token-bucket", Topology: "shared",
		Store: "memory", Servers: 1, Seed: 1, DurationS: 600, StepS: 10,
		Limit:    sim.LimitResult{RatePerS: 1, Burst: 60, Key: "auto"},
		Balancer: "round-robin", OnError: "fail-open", Clock: "server",
		WallClock: "2026-12-01T10:00:00Z",
	}
	var sent, ok [2]int64
	for i := range 60 {
		ts := float64(i) * 10
		stuff := int64(0)
		if i >= 12 && i < 24 {
			stuff = 200 // 20/s for two minutes
		}
		stuffOK := min(stuff, 10)
		if i == 12 {
			stuffOK = 70 // the burst, then the rate
		}
		r.Timeline = append(r.Timeline,
			sim.TimelineRow{TS: ts, Client: "203.0.113.9", Counts: sim.Counts{Sent: stuff, Allowed: stuffOK, Rejected: stuff - stuffOK}},
			sim.TimelineRow{TS: ts, Client: "10.0.0.4", Counts: sim.Counts{Sent: 2, Allowed: 2}})
		sent[0], ok[0] = sent[0]+stuff, ok[0]+stuffOK
		sent[1], ok[1] = sent[1]+2, ok[1]+2
	}
	r.Clients = []sim.ClientResult{
		{Name: "203.0.113.9", Key: "203.0.113.9", Counts: sim.Counts{Sent: sent[0], Allowed: ok[0], Rejected: sent[0] - ok[0]}, MaxAllowed1s: 60},
		{Name: "10.0.0.4", Key: "10.0.0.4", Counts: sim.Counts{Sent: sent[1], Allowed: ok[1]}, MaxAllowed1s: 1},
	}
	return r
}

func replayCaption() *Caption {
	return &Caption{Limit: "60/m burst 60", Key: "ip", Log: "access.log, whole-second times", Window: "10:00–10:10 UTC"}
}

func TestTimelineClockGolden(t *testing.T) {
	var b bytes.Buffer
	if err := Timeline(&b, replayResult(), Options{Format: "svg", Width: 8 * vg.Inch, Clock: time.UTC, Caption: replayCaption()}); err != nil {
		t.Fatal(err)
	}
	wantGolden(t, "timeline-clock.golden.svg", b.Bytes())
	got := texts(b.Bytes())
	all := strings.Join(got, "\n")
	// The clock on the axis, the caption in the title and subtitle, and
	// none of the simulator's settings a replay did not choose.
	for _, want := range []string{"10:00", "10:02", "10:10", "time (UTC)"} {
		if !slices.Contains(got, want) {
			t.Errorf("the SVG has no text %q", want)
		}
	}
	for _, want := range []string{"limit 60/m burst 60", "key ip", "access.log, whole-second times", "10:00–10:10 UTC", "replay of access.log · token-bucket"} {
		if !strings.Contains(all, want) {
			t.Errorf("the caption has no %q:\n%s", want, all)
		}
	}
	for _, not := range []string{"seed", "balancer", "on error", "clock server", "key auto", "shared on memory", "1 server", "time (s)", "limit 1/s"} {
		if strings.Contains(all, not) {
			t.Errorf("the captioned timeline still says %q", not)
		}
	}
	var p bytes.Buffer
	if err := Timeline(&p, replayResult(), Options{Clock: time.UTC, Caption: replayCaption()}); err != nil {
		t.Fatal(err)
	}
	checkPNG(t, "clock", p.Bytes(), 0, 0)
	review(t, "timeline-clock.png", p.Bytes())

	// Another zone: the same instants on Paris's clock, an hour ahead.
	paris, err := time.LoadLocation("Europe/Paris")
	if err != nil {
		t.Skip(err)
	}
	b.Reset()
	if err := Timeline(&b, replayResult(), Options{Format: "svg", Clock: paris}); err != nil {
		t.Fatal(err)
	}
	if got := texts(b.Bytes()); !slices.Contains(got, "11:00") || !slices.Contains(got, "time (Europe/Paris)") || slices.Contains(got, "10:00") {
		t.Errorf("Paris's clock: %q", got)
	}
}

// A topology that is not a replay's own is still said; a caption with
// no limit says the result's.
func TestCaptionKeepsWhatIsNotTheReplayDefault(t *testing.T) {
	r := replayResult()
	r.Topology, r.Servers = "local", 4
	c := replayCaption()
	c.Limit = ""
	var b bytes.Buffer
	if err := Timeline(&b, r, Options{Format: "svg", Caption: c}); err != nil {
		t.Fatal(err)
	}
	all := strings.Join(texts(b.Bytes()), " ")
	for _, want := range []string{"local on memory · 4 servers", "limit 1/s, burst 60", "time (s)"} {
		if !strings.Contains(all, want) {
			t.Errorf("no %q in %s", want, all)
		}
	}
}

func TestTimelineVsClockAndCaption(t *testing.T) {
	a, b := replayResult(), replayResult()
	b.Limit.Burst = 120
	var buf bytes.Buffer
	if err := TimelineVs(&buf, a, b, "burst 60", "burst 120", Options{Format: "svg", Clock: time.UTC, Caption: replayCaption()}); err != nil {
		t.Fatal(err)
	}
	got := texts(buf.Bytes())
	all := strings.Join(got, " ")
	if n := strings.Count(strings.Join(got, "\n")+"\n", "time (UTC)\n"); n != 2 {
		t.Errorf("%d columns have a clock axis, want 2", n)
	}
	// The limits differ, so the shared subtitle does not state one.
	for _, not := range []string{"60/m burst 60", "seed", "balancer"} {
		if strings.Contains(all, not) {
			t.Errorf("the pair's subtitle says %q", not)
		}
	}
	if !strings.Contains(all, "key ip") || !slices.Contains(got, "10:04") {
		t.Errorf("the pair lacks its caption or clock: %s", all)
	}
	var p bytes.Buffer
	if err := TimelineVs(&p, a, b, "burst 60", "burst 120", Options{Clock: time.UTC, Caption: replayCaption()}); err != nil {
		t.Fatal(err)
	}
	review(t, "timeline-vs-clock.png", p.Bytes())
}

func TestClockNeedsAWallClock(t *testing.T) {
	for _, tt := range []struct{ wall, msg string }{
		{"", "needs the run's wall clock"},
		{"yesterday", `wall clock "yesterday" is not an RFC 3339 time`},
	} {
		r := replayResult()
		r.WallClock = tt.wall
		err := Timeline(&bytes.Buffer{}, r, Options{Clock: time.UTC})
		if err == nil || !strings.HasPrefix(err.Error(), "plots: ") || !strings.Contains(err.Error(), tt.msg) {
			t.Errorf("wall clock %q: %v, want %q", tt.wall, err, tt.msg)
		}
		err = TimelineVs(&bytes.Buffer{}, r, r, "a", "b", Options{Clock: time.UTC})
		if err == nil || !strings.Contains(err.Error(), tt.msg) {
			t.Errorf("vs, wall clock %q: %v, want %q", tt.wall, err, tt.msg)
		}
	}
}

func TestWallTicks(t *testing.T) {
	kolkata, err := time.LoadLocation("Asia/Kolkata")
	if err != nil {
		t.Skip(err)
	}
	zone := func(name string) *time.Location {
		loc, err := time.LoadLocation(name)
		if err != nil {
			t.Skip(err)
		}
		return loc
	}
	paris, lordHowe, santiago := zone("Europe/Paris"), zone("Australia/Lord_Howe"), zone("America/Santiago")
	for _, tt := range []struct {
		name     string
		origin   string
		loc      *time.Location
		lo, hi   float64
		labels   []string
		firstAtS float64 // where the first labelled tick is, in seconds
	}{
		{"ten minutes", "2026-12-01T10:00:00Z", time.UTC, 0, 600, []string{"10:00", "10:02", "10:04", "10:06", "10:08", "10:10"}, 0},
		{"half a minute, off the second", "2026-12-01T10:00:07.5Z", time.UTC, 0, 30, []string{"10:00:10", "10:00:15", "10:00:20", "10:00:25", "10:00:30", "10:00:35"}, 2.5},
		{"two hours in +05:30", "2026-12-01T10:05:00Z", kolkata, 0, 7200, []string{"15:45", "16:00", "16:15", "16:30", "16:45", "17:00", "17:15", "17:30"}, 600},
		{"past midnight", "2026-12-01T23:30:00Z", time.UTC, 0, 3600, []string{"Dec 1 23:30", "23:40", "23:50", "Dec 2 00:00", "00:10", "00:20", "00:30"}, 0},
		{"three days", "2026-12-01T00:00:00Z", time.UTC, 0, 3 * 86400, []string{"Dec 1 00:00", "12:00", "Dec 2 00:00", "12:00", "Dec 3 00:00", "12:00", "Dec 4 00:00"}, 0},
		// Across a change of daylight saving time the marks stay on the
		// clock's round hours, every one labelled: the clocks go forward
		// at 02:00 in Paris on Mar 29, at 02:00 to 02:30 on Lord Howe on
		// Oct 4, and at midnight in Santiago on Sep 6 (the day starts at
		// 01:00, still dated).
		{"three days over Paris's spring forward", "2026-03-28T00:00:00Z", paris, 0, 3 * 86400, []string{"Mar 28 12:00", "Mar 29 00:00", "12:00", "Mar 30 00:00", "12:00", "Mar 31 00:00"}, 39600},
		{"16 hours over Paris's spring forward", "2026-03-28T22:00:00Z", paris, 0, 16 * 3600, []string{"Mar 29 00:00", "04:00", "06:00", "08:00", "10:00", "12:00", "14:00", "16:00"}, 3600},
		{"Lord Howe's half hour", "2026-10-03T14:00:00Z", lordHowe, 0, 6 * 3600, []string{"01:00", "03:00", "04:00", "05:00", "06:00", "07:00"}, 1800},
		{"Santiago's missing midnight", "2026-09-06T02:00:00Z", santiago, 0, 6 * 3600, []string{"Sep 5 22:00", "23:00", "Sep 6 01:00", "02:00", "03:00", "04:00", "05:00"}, 0},
		// Days long: a label every few days, each its date alone, the
		// same across Paris's spring forward.
		{"thirty days", "2026-12-01T00:00:00Z", time.UTC, 0, 30 * 86400, []string{"Dec 3", "Dec 10", "Dec 17", "Dec 24", "Dec 31"}, 2 * 86400},
		{"ten days over Paris's spring forward", "2026-03-25T00:00:00Z", paris, 0, 10 * 86400, []string{"Mar 26", "Mar 28", "Mar 30", "Apr 1", "Apr 3"}, 82800},
		// A year, into the next: the year said too
		{"a year", "2026-01-01T00:00:00Z", time.UTC, 0, 365 * 86400, []string{"Jan 7 2026", "Mar 8 2026", "May 7 2026", "Jul 6 2026", "Sep 4 2026", "Nov 3 2026"}, 6 * 86400},
		// Under a second: tenths.
		{"half a second", "2026-12-01T10:00:00.2Z", time.UTC, 0, 0.5, []string{"10:00:00.2", "10:00:00.3", "10:00:00.4", "10:00:00.5", "10:00:00.6", "10:00:00.7"}, 0},
		{"under two seconds", "2026-12-01T10:00:00.05Z", time.UTC, 0, 1.5, []string{"10:00:00.2", "10:00:00.4", "10:00:00.6", "10:00:00.8", "10:00:01.0", "10:00:01.2", "10:00:01.4"}, 0.15},
		// Starting between marks, the first label still has its date.
		{"from 23:31", "2026-12-01T23:31:00Z", time.UTC, 0, 3600, []string{"Dec 1 23:40", "23:50", "Dec 2 00:00", "00:10", "00:20", "00:30"}, 540},
	} {
		origin, err := time.Parse(time.RFC3339Nano, tt.origin)
		if err != nil {
			t.Fatal(err)
		}
		var labels []string
		first := -1.0
		for _, tk := range (wallTicks{origin: origin, loc: tt.loc}).Ticks(tt.lo, tt.hi) {
			if tk.Label != "" {
				labels = append(labels, tk.Label)
				if first < 0 {
					first = tk.Value
				}
			}
		}
		if !slices.Equal(labels, tt.labels) || first != tt.firstAtS {
			t.Errorf("%s: labels %q from %gs, want %q from %gs", tt.name, labels, first, tt.labels, tt.firstAtS)
		}
	}
	if got := (wallTicks{origin: time.Unix(0, 0), loc: time.UTC}).Ticks(5, 5); got != nil {
		t.Errorf("an empty span has ticks %v", got)
	}
}

// The axis is titled with a name that says which clock it is: never
// time.Local's "Local" nor an unnamed zone's "".
func TestClockAxisNamesItsZone(t *testing.T) {
	at := time.Date(2026, 12, 1, 10, 0, 0, 0, time.UTC)
	for _, tt := range []struct {
		loc  *time.Location
		want string
	}{
		{time.UTC, "UTC"},
		{time.FixedZone("", 19800), "UTC+05:30"},
		{time.FixedZone("", -9000), "UTC-02:30"},
		{time.FixedZone("", 0), "UTC"},
		{time.FixedZone("IST", 19800), "IST"},
	} {
		if got := zoneName(tt.loc, at); got != tt.want {
			t.Errorf("%v: %q, want %q", tt.loc, got, tt.want)
		}
	}
	if got := zoneName(time.Local, at); got == "Local" || got == "" {
		t.Errorf("time.Local is named %q", got)
	}
	var b bytes.Buffer
	if err := Timeline(&b, replayResult(), Options{Format: "svg", Clock: time.FixedZone("", 19800)}); err != nil {
		t.Fatal(err)
	}
	if got := texts(b.Bytes()); !slices.Contains(got, "time (UTC+05:30)") || !slices.Contains(got, "15:30") {
		t.Errorf("an unnamed +05:30 zone's axis: %q", got)
	}
}

// BenchmarkWallTicks marks 5 s just before midnight in 1 s steps: the
// first mark is found from the clock, not walked to from midnight.
func BenchmarkWallTicks(b *testing.B) {
	w := wallTicks{origin: time.Date(2026, 12, 1, 23, 59, 50, 0, time.UTC), loc: time.UTC}
	for b.Loop() {
		w.Ticks(0, 5)
	}
}
