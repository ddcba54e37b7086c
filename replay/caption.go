package replay

import (
	"strings"
	"time"

	"github.com/ratelim/ratelim/internal/escape"
	"github.com/ratelim/ratelim/sim"
)

// Caption is what a replay's plot says of it, in place of the settings a
// simulated scenario has and a log does not (a seed, a balancer, what a
// store's failure does): the fields of plots.Caption.
type Caption struct {
	// Limit is the limit as given, "60/m burst 60", "100/m window 1m"
	// (the plot adds the topology when it is not a replay's own).
	Limit string
	// Key is what the log is keyed by: "ip", "query:api_key".
	Key string
	// Log names the log and how fine its times are: "access.log,
	// whole-second times".
	Log string
	// Window is the span of the log, in loc: "10:00–10:09 UTC",
	// "11-30 23:58–12-01 00:07 Europe/Paris" over midnight.
	Window string
}

// CaptionOf is the caption of a replay of l in sc, with times in loc (UTC
// when nil).
func CaptionOf(l *Log, sc sim.Scenario, loc *time.Location) Caption {
	if loc == nil {
		loc = time.UTC
	}
	limit := strings.TrimPrefix(LimitText(sc.Limit), sc.Limit.Algorithm+" ")
	logText := escape.Text(name(l.Path))
	if i := strings.LastIndexByte(logText, '/'); i >= 0 {
		logText = logText[i+1:]
	}
	if res := ResolutionText(l); res != "" {
		logText += ", " + res
	}
	first, last := l.First.In(loc), l.Last.In(loc)
	layout := "15:04"
	if first.Format(time.DateOnly) != last.Format(time.DateOnly) {
		layout = "01-02 15:04"
	}
	if last.Sub(first) < 10*time.Minute {
		layout += ":05"
	}
	if OffsetChanges(first, last, loc) {
		layout += " MST"
	}
	return Caption{Limit: limit, Key: keySpec(l), Log: logText,
		Window: first.Format(layout) + "–" + last.Format(layout) + " " + loc.String()}
}
