package trace

import (
	"errors"
	"fmt"
	"math"
	"slices"
	"strings"
	"time"

	"github.com/ratelim/ratelim/algorithms"
)

// Rate is a limit's rate as algorithms writes it: N a Per. A profile
// measures bursts at the rates a limit would be chosen among.
type Rate = algorithms.Rate

// GridRates are the rates a limit is usually chosen among, on a 1-2-5
// grid from 0.01/s to 10,000/s, each in the unit that writes it whole:
// 36/h, 72/h, 3/m, 6/m, 12/m, 30/m, 1/s, 2/s, 5/s, ... 10000/s.
func GridRates() []Rate {
	var out []Rate
	for _, perHour := range []int64{36, 72, 180, 360, 720, 1800} { // 0.01/s to 0.5/s
		r := Rate{N: perHour, Per: time.Hour}
		if perHour%60 == 0 {
			r = Rate{N: perHour / 60, Per: time.Minute}
		}
		out = append(out, r)
	}
	for _, n := range []int64{1, 2, 5, 10, 20, 50, 100, 200, 500, 1000, 2000, 5000, 10000} {
		out = append(out, Rate{N: n, Per: time.Second})
	}
	return out
}

// ProfileWindows are the windows a Profile counts each key's busiest
// stretch in: a second, ten, a minute and ten.
var ProfileWindows = []time.Duration{time.Second, 10 * time.Second, time.Minute, 10 * time.Minute}

// Profile measures, for each key of a stream of requests, what choosing a
// limit needs to know of it: its requests and span, its busiest stretch
// in each of ProfileWindows (as Peaks' InWindow, over every placement of
// the window), and the smallest token-bucket burst that admits all its
// requests at each of a set of rates (as Peaks' Burst, exactly). Requests
// must come in time order per key, as a Reader returns them; a key ""
// is exempt and not counted.
//
// Memory is, per key, BytesPerKey (about 880 bytes at the 19 rates of
// GridRates) plus 8 bytes for each of its requests within the longest
// window (ten minutes, or a longer one asked for): a key steady at 100/s
// holds 60,000 times, 480 KB. That part is bounded by the log's requests,
// not by its keys.
type Profile struct {
	rates   []Rate
	windows []time.Duration // ProfileWindows, then any others asked for
	keys    map[string]*keyProfile
}

type keyProfile struct {
	requests    int
	first, last int64
	recent      []int64 // times within the longest window
	heads       []int   // per window: recent[heads[w]:] are within it
	busiest     []int
	levels      []level
}

// KeyProfile is what a Profile found for one key.
type KeyProfile struct {
	Key         string
	Requests    int
	First, Last time.Time
	// Busiest[w] is the most requests in any window Windows()[w].
	Busiest []int
	// Bursts[r] is the smallest burst that admits every request at the
	// Profile's rate r.
	Bursts []int64
}

// MeanRate is the key's requests a second over span (at least a second).
func (k KeyProfile) MeanRate(span time.Duration) float64 {
	return float64(k.Requests) / max(span, time.Second).Seconds()
}

// NewProfile measures bursts at each of rates, and the busiest stretches
// in ProfileWindows and in each of windows more.
func NewProfile(rates []Rate, windows ...time.Duration) (*Profile, error) {
	for _, r := range rates {
		if r.N < 1 || r.Per <= 0 {
			return nil, fmt.Errorf("trace: rate %v is not positive", r)
		}
	}
	all := slices.Clone(ProfileWindows)
	for _, w := range windows {
		if w <= 0 {
			return nil, fmt.Errorf("trace: window %v is not positive", w)
		}
		if !slices.Contains(all, w) {
			all = append(all, w)
		}
	}
	return &Profile{rates: slices.Clone(rates), windows: all, keys: map[string]*keyProfile{}}, nil
}

// BytesPerKey is about what the Profile holds for each key besides the
// times of its recent requests: 208 bytes of map entry and fields, 32 a
// rate and 16 a window (730 measured at 16 rates and 4 windows, heap
// after GC over 100,000 keys).
func (p *Profile) BytesPerKey() int64 {
	return 208 + 32*int64(len(p.rates)) + 16*int64(len(p.windows))
}

// Rates are the rates the Profile measures bursts at.
func (p *Profile) Rates() []Rate { return p.rates }

// Windows are the windows the Profile measures the busiest stretch in:
// ProfileWindows first.
func (p *Profile) Windows() []time.Duration { return p.windows }

// Add counts a request of key at at.
func (p *Profile) Add(key string, at time.Time) {
	if key == "" {
		return
	}
	ns := clampNanos(at)
	kp := p.keys[key]
	if kp == nil {
		kp = &keyProfile{first: ns, last: ns, heads: make([]int, len(p.windows)),
			busiest: make([]int, len(p.windows)), levels: make([]level, len(p.rates))}
		p.keys[key] = kp
	}
	ns = max(ns, kp.last)
	dt := uint64(ns - kp.last)
	kp.recent = append(kp.recent, ns)
	for w, win := range p.windows {
		h := kp.heads[w]
		for h < len(kp.recent) {
			if d := ns - kp.recent[h]; d >= 0 && d < int64(win) {
				break
			}
			h++
		}
		kp.heads[w] = h
		kp.busiest[w] = max(kp.busiest[w], len(kp.recent)-h)
	}
	// The longest window's head is the earliest: slide the times down
	// when it has passed half of them.
	if h := slices.Min(kp.heads); h > 32 && h*2 >= len(kp.recent) {
		n := copy(kp.recent, kp.recent[h:])
		kp.recent = kp.recent[:n]
		for w := range kp.heads {
			kp.heads[w] -= h
		}
	}
	for i, r := range p.rates {
		kp.levels[i].add(uint64(r.N), uint64(r.Per), dt, kp.requests == 0)
	}
	kp.requests++
	kp.last = ns
}

// Keys returns every key's profile, sorted by key.
func (p *Profile) Keys() []KeyProfile {
	out := make([]KeyProfile, 0, len(p.keys))
	for key, kp := range p.keys {
		k := KeyProfile{Key: key, Requests: kp.requests, First: time.Unix(0, kp.first).UTC(), Last: time.Unix(0, kp.last).UTC(),
			Busiest: slices.Clone(kp.busiest), Bursts: make([]int64, len(kp.levels))}
		for i := range kp.levels {
			k.Bursts[i] = kp.levels[i].burst()
		}
		out = append(out, k)
	}
	slices.SortFunc(out, func(a, b KeyProfile) int { return strings.Compare(a.Key, b.Key) })
	return out
}

// The outlier rule's constants: Iglewicz and Hoaglin's modified z-score.
const (
	// OutlierZ is the robust z-score above which a key is an outlier.
	OutlierZ = 3.5
	// NearZ is the robust z-score above which a key of the bulk is close
	// to the rule: shown beside the outliers, so that the judgement call
	// is seen (a steady scraper can sit just under OutlierZ and set every
	// burst).
	NearZ = 2.5
	// madScale makes the MAD of a normal sample its standard deviation.
	madScale = 1.4826
)

// MinMAD is the floor of the MAD of ln(busiest): ln 1.5, so that a log
// where most keys peak alike (a MAD of 0) does not make every key a
// little busier an outlier.
var MinMAD = math.Log(1.5)

// WindowSpread is how the keys' busiest stretches in one window spread.
type WindowSpread struct {
	Window time.Duration
	// Median is the median of every key's busiest count; BulkMax the
	// highest of the keys that are not outliers.
	Median  float64
	BulkMax int
	// MAD is the median absolute deviation of ln(busiest), at least
	// MinMAD.
	MAD float64
}

// Outliers are the keys far busier than the bulk, and the figures that
// say so.
type Outliers struct {
	// Windows are the windows the rule looked at: those of
	// ProfileWindows no longer than the log's span (the first always).
	Windows []WindowSpread
	// Z[k][w] is key k's robust z-score in Windows[w]:
	// (ln busiest − median ln busiest) / (1.4826 · MAD).
	Z [][]float64
	// Is[k] says key k is an outlier: its highest z above OutlierZ.
	Is []bool
	// Near[k] says key k is not an outlier but close: its highest z above
	// NearZ.
	Near []bool
	// TooFew says there were fewer than MinOutlierKeys keys: the rule
	// was not applied, and no key is an outlier.
	TooFew bool
}

// MinOutlierKeys is the fewest keys the outlier rule is applied to: of
// two, neither can be more than 0.67 robust deviations from their median.
const MinOutlierKeys = 3

// MaxZ is key k's highest z over the windows.
func (o Outliers) MaxZ(k int) float64 {
	z := math.Inf(-1)
	for _, v := range o.Z[k] {
		z = max(z, v)
	}
	return z
}

// Count is how many keys are outliers.
func (o Outliers) Count() int {
	n := 0
	for _, b := range o.Is {
		if b {
			n++
		}
	}
	return n
}

// FindOutliers applies the outlier rule to keys over a log of span: a key
// is an outlier when, in any of ProfileWindows up to span, ln of its
// busiest count is more than OutlierZ robust deviations above the median
// (1.4826 × the MAD of ln busiest, the MAD floored at MinMAD). It is one
// sided: only keys above the bulk are outliers. Of fewer than
// MinOutlierKeys keys, none is (Outliers.TooFew). Several windows, because
// one is not enough: a scraper steady at 10/s peaks in a second no
// higher than a page load does, and far higher in a minute.
func FindOutliers(keys []KeyProfile, span time.Duration) (Outliers, error) {
	if len(keys) == 0 {
		return Outliers{}, errors.New("trace: no keys to find outliers among")
	}
	var o Outliers
	o.Z = make([][]float64, len(keys))
	o.Is = make([]bool, len(keys))
	if len(keys) < MinOutlierKeys {
		o.TooFew = true
		o.Near = make([]bool, len(keys))
		return o, nil
	}
	for w, win := range ProfileWindows {
		if w > 0 && win > span {
			break
		}
		logs := make([]float64, len(keys))
		counts := make([]float64, len(keys))
		for i, k := range keys {
			counts[i] = float64(k.Busiest[w])
			logs[i] = math.Log(counts[i])
		}
		med := Median(logs)
		dev := make([]float64, len(keys))
		for i, x := range logs {
			dev[i] = math.Abs(x - med)
		}
		mad := max(Median(dev), MinMAD)
		for i, x := range logs {
			z := (x - med) / (madScale * mad)
			o.Z[i] = append(o.Z[i], z)
			if z > OutlierZ {
				o.Is[i] = true
			}
		}
		o.Windows = append(o.Windows, WindowSpread{Window: win, Median: Median(counts), MAD: mad})
	}
	o.Near = make([]bool, len(keys))
	for i := range keys {
		o.Near[i] = !o.Is[i] && o.MaxZ(i) > NearZ
	}
	for w := range o.Windows {
		for i, k := range keys {
			if !o.Is[i] {
				o.Windows[w].BulkMax = max(o.Windows[w].BulkMax, k.Busiest[w])
			}
		}
	}
	return o, nil
}

// Median is the middle of xs (left as it is: a sorted copy is read), the
// mean of the middle two for an even count; the outlier rule's centre, and
// replay's for the bulk's mean rates.
func Median(xs []float64) float64 {
	s := slices.Clone(xs)
	slices.Sort(s)
	n := len(s)
	if n%2 == 1 {
		return s[n/2]
	}
	return (s[n/2-1] + s[n/2]) / 2
}
