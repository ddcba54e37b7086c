package sim

import (
	"fmt"
	"strconv"
	"time"

	"github.com/ratelim/ratelim/algorithms"
)

// ClockSkew sets Servers' clocks (all of them when it names none) off by
// Offset at Start, drifting by Drift seconds a second from then, until
// End. A store's own clock (ClockSource StoreClock) is not skewed.
const ClockSkew FaultKind = "clock-skew"

// MaxClockOffset bounds a clock skew's offset either way: a clock a day
// off is no longer skewed but wrong.
const MaxClockOffset = 24 * time.Hour

var clockSkewFault = FaultType{
	Kind: ClockSkew,
	Fields: []FaultField{
		{Name: "servers", Empty: "empty (want the servers whose clock is wrong, e.g. [0]; leave it out for all)"},
		{Name: "offset"},
		{Name: "drift"},
	},
	AnyOf:     []string{"offset", "drift"},
	AnyOfWant: "a clock skew needs an offset, a drift or both (want e.g. offset: 2s or drift: 0.01)",
	Shade:     ShadeReddishPurple,
	check:     checkClockSkew,
	span: func(f Fault) string {
		return fmt.Sprintf("servers %v offset %s drift %g", f.Servers, f.Offset, f.Drift)
	},
	log: func(f Fault) string {
		return fmt.Sprintf(": servers %v off by %s, drifting %g s/s", f.Servers, f.Offset, f.Drift)
	},
	banner: clockSkewBanner,
	setup: func(s *sim, f Fault, start, end int64) {
		servers := f.Servers
		if len(servers) == 0 {
			for i := range s.sc.Servers {
				servers = append(servers, i)
			}
		}
		for _, srv := range servers {
			s.faults.skews = append(s.faults.skews, skew{server: srv, start: start, end: end, offset: int64(algorithms.At(f.Offset)), driftPerMicro: f.Drift})
		}
	},
}

// checkClockSkew: servers that exist, each once; an offset of at most a
// day and a drift of at most a second a second, either way.
func checkClockSkew(f Fault, at string, servers int, nodes []string) *FaultError {
	if err := checkServers(f.Servers, at, "servers", servers, map[int]string{}); err != nil {
		return err
	}
	if f.Offset > MaxClockOffset || f.Offset < -MaxClockOffset {
		return &FaultError{Field: "offset", Msg: fmt.Sprintf("%s is more than a day (want at most %s either way)", f.Offset, MaxClockOffset)}
	}
	if !(f.Drift >= -1 && f.Drift <= 1) {
		drift := strconv.FormatFloat(f.Drift, 'g', -1, 64)
		return &FaultError{Field: "drift", Msg: fmt.Sprintf("%s is more than a second per second (want -1 to 1, e.g. 0.01 for 1%% fast)", drift)}
	}
	return nil
}

func clockSkewBanner(sc Scenario, f Fault, _ time.Duration) string {
	text := "CLOCK SKEW: "
	if len(f.Servers) == 0 {
		text += "all servers"
	} else {
		text += serverList(f.Servers)
	}
	if f.Offset != 0 || f.Drift == 0 {
		text += " " + signed(f.Offset)
	}
	if f.Drift != 0 {
		text += fmt.Sprintf(" drifting %+gs/s", f.Drift)
	}
	if sc.Topology.Clock == StoreClock {
		text += " (no effect: the store's clock decides)"
	}
	return text
}

// signed is a duration with its sign: +2s, -1.5s, 0s.
func signed(d time.Duration) string {
	if d > 0 {
		return "+" + d.String()
	}
	return d.String()
}
