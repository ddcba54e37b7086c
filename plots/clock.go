package plots

import (
	"fmt"
	"math"
	"strings"
	"time"

	"gonum.org/v1/plot"

	"github.com/ratelim/ratelim/internal/words"
	"github.com/ratelim/ratelim/sim"
)

// Caption is what the title and subtitle of a replay's timeline say in
// place of the simulator's settings, which a replay of a log did not
// choose: each a short text as the user gave it or would read it; empty
// fields are left out.
type Caption struct {
	// Limit is the limit as given: "60/m burst 60".
	Limit string
	// Key is what the log was keyed by: "ip", "header X-User".
	Key string
	// Log names the log and how its times were read: "access.log,
	// whole-second times".
	Log string
	// Window is the stretch of the log replayed, in its clock:
	// "10:00–10:09".
	Window string
}

// timeAxis is how a timeline's shared x axis is marked and titled: in
// seconds from the run's start, or, with Options.Clock, in the wall clock
// of the log it replays.
type timeAxis struct {
	ticks plot.Ticker
	label string
}

// secondsAxis is the simulator's time axis: seconds from 0.
var secondsAxis = timeAxis{ticks: timeTicks{}, label: "time (s)"}

// axisFor returns the time axis opts ask for r: seconds, or, with a
// Clock, wall-clock times from r's WallClock in that location.
func axisFor(r *sim.Result, opts Options) (timeAxis, error) {
	if opts.Clock == nil {
		return secondsAxis, nil
	}
	if r.WallClock == "" {
		return timeAxis{}, fmt.Errorf("plots: a clock axis (in %s) needs the run's wall clock, and the result has none (want Result.WallClock, the instant time 0 stood for)", opts.Clock)
	}
	origin, err := time.Parse(time.RFC3339Nano, r.WallClock)
	if err != nil {
		return timeAxis{}, fmt.Errorf("plots: the result's wall clock %q is not an RFC 3339 time (want e.g. 2026-12-01T10:00:00Z)", r.WallClock)
	}
	return timeAxis{ticks: wallTicks{origin: origin, loc: opts.Clock}, label: "time (" + zoneName(opts.Clock, origin) + ")"}, nil
}

// zoneName names loc for an axis title: its name ("UTC",
// "Europe/Paris"), or, where that says nothing of the clock (time.Local's
// "Local", a fixed zone's ""), the zone's abbreviation at the instant at
// ("CET"), or else its offset ("UTC+05:30").
func zoneName(loc *time.Location, at time.Time) string {
	if name := loc.String(); name != "" && name != "Local" {
		return name
	}
	abbr, offset := at.In(loc).Zone()
	if abbr != "" && abbr[0] != '+' && abbr[0] != '-' {
		return abbr
	}
	if offset == 0 {
		return "UTC"
	}
	sign := "+"
	if offset < 0 {
		sign, offset = "-", -offset
	}
	return fmt.Sprintf("UTC%s%02d:%02d", sign, offset/3600, offset%3600/60)
}

// wallSteps are the spacings a clock axis is marked at: round tenths of a
// second, seconds, minutes and hours, as a clock is read.
var wallSteps = []time.Duration{
	100 * time.Millisecond, 200 * time.Millisecond, 500 * time.Millisecond,
	time.Second, 2 * time.Second, 5 * time.Second, 10 * time.Second, 15 * time.Second, 30 * time.Second,
	time.Minute, 2 * time.Minute, 5 * time.Minute, 10 * time.Minute, 15 * time.Minute, 30 * time.Minute,
	time.Hour, 2 * time.Hour, 3 * time.Hour, 6 * time.Hour, 12 * time.Hour,
}

// wallDays are the spacings, in days, of an axis too long for 12-hour
// marks; past the last, it doubles.
var wallDays = []int{1, 2, 7, 14, 30}

// maxWallSpanS is the longest span a clock axis is marked over (two
// centuries): past it the instants leave time.Duration's range.
const maxWallSpanS = 200 * 365 * 86400

// wallTicks marks a time axis (seconds from origin) at round instants of
// loc's clock: the first spacing of wallSteps that gives at most 8 labels,
// each labelled as a clock reads ("10:05"; "10:05:30" when the marks are
// seconds apart, "10:05:30.2" when tenths), with a minor mark between. The
// marks are built from the clock's own fields (10:00, 10:15 on the day's
// clock), never by adding fixed durations, so that across a change of
// daylight saving time they still fall on, and are labelled with, round
// times of the clock. The date is written on the first label where the
// axis crosses midnight, and on every label whose day differs from the
// label before ("Dec 2 00:00"; "Sep 6 01:00" where a day starts at 01:00).
// An axis days long is marked by dayTicks.
type wallTicks struct {
	origin time.Time
	loc    *time.Location
}

// maxWallTicks bounds the marks of one axis, whatever its span.
const maxWallTicks = 1000

// Ticks implements plot.Ticker.
func (w wallTicks) Ticks(lo, hi float64) []plot.Tick {
	if !(hi > lo) || !(math.Abs(lo) <= maxWallSpanS) || !(math.Abs(hi) <= maxWallSpanS) {
		return nil
	}
	span := time.Duration((hi - lo) * float64(time.Second))
	start := w.origin.Add(time.Duration(lo * float64(time.Second))).In(w.loc)
	end := w.origin.Add(time.Duration(hi * float64(time.Second))).In(w.loc)
	step := time.Duration(0)
	for _, s := range wallSteps {
		if span/s <= 8 {
			step = s
			break
		}
	}
	if step == 0 {
		return w.dayTicks(start, end, span)
	}
	// The marks are the clock's times k half-steps into start's day, on
	// the clock: the first the one at or after start, found directly.
	y, m, d := start.Date()
	half := step / 2
	into := time.Duration(start.Hour())*time.Hour + time.Duration(start.Minute())*time.Minute +
		time.Duration(start.Second())*time.Second + time.Duration(start.Nanosecond())
	k := int64(into / half)
	layout := "15:04"
	switch {
	case step < time.Second:
		layout = "15:04:05.0"
	case step < time.Minute:
		layout = "15:04:05"
	}
	crossesDays := start.YearDay() != end.YearDay() || start.Year() != end.Year()
	var out []plot.Tick
	var prev, labelled time.Time // the last mark, and the last labelled one
	for ; len(out) < maxWallTicks; k++ {
		t := time.Date(y, m, d, 0, 0, 0, int(k*int64(half)), w.loc) // normalised on the clock
		if t.After(end) {
			break
		}
		// A clock time skipped by a change of daylight saving time lands on
		// one already marked: one mark each.
		if t.Before(start) || (!prev.IsZero() && !t.After(prev)) {
			continue
		}
		prev = t
		v := t.Sub(w.origin).Seconds()
		of := time.Duration(t.Hour())*time.Hour + time.Duration(t.Minute())*time.Minute +
			time.Duration(t.Second())*time.Second + time.Duration(t.Nanosecond())
		if of%step != 0 {
			out = append(out, plot.Tick{Value: v})
			continue
		}
		label := t.Format(layout)
		newDay := labelled.IsZero() || t.YearDay() != labelled.YearDay() || t.Year() != labelled.Year()
		if crossesDays && newDay {
			label = t.Format("Jan 2 ") + label
		}
		labelled = t
		out = append(out, plot.Tick{Value: v, Label: label})
	}
	return out
}

// dayTicks marks an axis days long at local midnights, n days apart
// (the first of wallDays, doubling past it, that gives at most 8 labels),
// each labelled with its date ("Dec 2"), with a minor mark each day (each
// week for 14-day labels, none further apart). Marks fall on the days
// whose number since 1970 is a multiple of their spacing, so that they are
// evenly spaced across months.
func (w wallTicks) dayTicks(start, end time.Time, span time.Duration) []plot.Tick {
	days := span.Hours() / 24
	n := wallDays[len(wallDays)-1]
	for _, s := range wallDays {
		if days/float64(s) <= 8 {
			n = s
			break
		}
	}
	for days/float64(n) > 8 {
		n *= 2
	}
	minor := 1
	switch {
	case n == 14:
		minor = 7
	case n > 14:
		minor = n
	}
	dayNumber := func(y int, m time.Month, d int) int {
		return int(time.Date(y, m, d, 0, 0, 0, 0, time.UTC).Unix() / 86400)
	}
	y, m, d := start.Date()
	first := dayNumber(y, m, d)
	k := (first + minor - 1) / minor * minor // the first marked day number, at or after start's
	year := start.Year() != end.Year()
	var out []plot.Tick
	for ; len(out) < maxWallTicks; k += minor {
		t := time.Date(y, m, d+k-first, 0, 0, 0, 0, w.loc)
		if t.After(end) {
			break
		}
		if t.Before(start) {
			continue
		}
		tick := plot.Tick{Value: t.Sub(w.origin).Seconds()}
		if k%n == 0 {
			tick.Label = t.Format("Jan 2")
			if year {
				tick.Label = t.Format("Jan 2 2006")
			}
		}
		out = append(out, tick)
	}
	return out
}

// captionTitle is a replay's title: the run (the log replayed), the
// algorithm and the limit, and the topology only where it is not a
// replay's own (one server on a shared store).
func captionTitle(d *timelineData, c *Caption) string {
	r := d.r
	parts := []string{or(r.Scenario, "unnamed replay"), r.Algorithm, "limit " + or(c.Limit, limitText(d))}
	if r.Topology != string(sim.Shared) || r.Servers != 1 || r.Store != "memory" {
		parts = append(parts, fmt.Sprintf("%s on %s · %d %s", r.Topology, r.Store, r.Servers, words.Plural(r.Servers, "server", "servers")))
	}
	return strings.Join(parts, " · ")
}

// captionSubtitle is a replay's settings line: the key, the log, the
// window, the step the counts are per, and the scale.
func captionSubtitle(d *timelineData, c *Caption, logScale bool) string {
	var parts []string
	if c.Key != "" {
		parts = append(parts, "key "+c.Key)
	}
	if c.Log != "" {
		parts = append(parts, c.Log)
	}
	if c.Window != "" {
		parts = append(parts, c.Window)
	}
	parts = append(parts, "step "+trimFloat(d.stepS)+"s", countsScale(logScale))
	return strings.Join(parts, " · ")
}
