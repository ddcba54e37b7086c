package replay

import (
	"encoding/csv"
	"encoding/json"
	"fmt"
	"io"
	"strconv"
	"time"

	"github.com/ratelim/ratelim/algorithms"
	"github.com/ratelim/ratelim/internal/escape"
	"github.com/ratelim/ratelim/internal/words"
	"github.com/ratelim/ratelim/routecost"
	"github.com/ratelim/ratelim/sim"
	"github.com/ratelim/ratelim/trace"
)

// Schema names the JSON a replay writes. v2 (from v1): the old
// "suggestions" are gone for "frontier"; a run's peak_window_s is absent
// when no peak was measured; the frontier's rows name the key setting
// their need and whether they are below the bulk's busiest mean rate;
// the outlier rule's keys close to it are listed; the log says when
// --spread left it as logged.
const Schema = "ratelim.replay/v2"

// Report is a replay: the log, the runs (one, or two with --vs side by
// side), and the suggested limits when asked for.
type Report struct {
	Log  *Log
	Runs []*Run
	// Frontier, when set, is the suggested limits (replay --suggest).
	Frontier *Frontier
}

// LimitText describes a run's limit: "token-bucket 100/m burst 20".
func LimitText(l sim.Limit) string {
	p := l.Params
	s := l.Algorithm + " " + p.Rate.String()
	for _, name := range paramsOf(l.Algorithm) {
		switch name {
		case "burst":
			s += fmt.Sprintf(" burst %d", p.Burst)
		case "window":
			s += " window " + words.Duration(p.Window)
		}
	}
	return s
}

// paramsOf are the parameters the named algorithm reads.
func paramsOf(algorithm string) []string {
	for _, info := range algorithms.Catalog() {
		if info.Name == algorithm {
			return info.Params
		}
	}
	return nil
}

// TopologyText describes where a run's counter lives: "shared memory, 1
// server".
func TopologyText(sc sim.Scenario) string {
	storeName := sc.Topology.StoreLabel()
	if storeName == "" {
		storeName = "memory"
	}
	servers := "1 server"
	if sc.Servers != 1 {
		servers = fmt.Sprintf("%d servers", sc.Servers)
	}
	return fmt.Sprintf("%s %s, %s", sc.Topology.Kind, storeName, servers)
}

// The JSON document, ratelim.replay/v2.
type (
	jsonReport struct {
		Schema string    `json:"schema"`
		Log    jsonLog   `json:"log"`
		Runs   []jsonRun `json:"runs"`
		// Frontier is replay --suggest's.
		Frontier *jsonFrontier `json:"frontier,omitempty"`
	}
	jsonFrontier struct {
		Rule     string        `json:"rule"`
		Headroom float64       `json:"headroom"`
		Quantile float64       `json:"quantile,omitempty"`
		Windows  []jsonSpread  `json:"windows"`
		Outliers []jsonOutlier `json:"outliers"`
		// Near are the keys of the bulk close to the rule (z over NearZ).
		Near []jsonOutlier `json:"near_outliers"`
		// TooFewKeys says the log had too few keys for the outlier rule.
		TooFewKeys bool `json:"too_few_keys,omitempty"`
		// MeanFloor is the lowest rate, in requests a second, a row may be
		// recommended at: the bulk's busiest mean rate (of MeanFloorKey)
		// × (1 + headroom).
		MeanFloor    float64           `json:"mean_floor_per_s"`
		MeanFloorKey string            `json:"mean_floor_key,omitempty"`
		Rows         []jsonFrontierRow `json:"rows"`
		Recommended  int               `json:"recommended"` // index into rows, -1 for none
	}
	jsonSpread struct {
		WindowS float64 `json:"window_s"`
		Median  float64 `json:"median"`
		BulkMax int     `json:"bulk_max"`
		MAD     float64 `json:"mad"`
	}
	jsonOutlier struct {
		Key      string    `json:"key"`
		Requests int       `json:"requests"`
		Busiest  []int     `json:"busiest"` // per window, as windows
		Z        []float64 `json:"z"`
	}
	jsonFrontierRow struct {
		Limit              jsonLimit   `json:"limit"`
		Need               int64       `json:"need"`
		SparedKeys         int         `json:"spared_keys"`
		Totals             jsonTotal   `json:"totals"`
		Throttled          []jsonKeyRj `json:"throttled"`
		PredictedThrottled int         `json:"predicted_throttled_keys"`
		OutliersThrottled  int         `json:"outliers_throttled"`
		SetBy              string      `json:"need_set_by,omitempty"`
		BelowBulkMean      bool        `json:"below_mean_floor,omitempty"`
	}
	jsonKeyRj struct {
		Key      string `json:"key"`
		Rejected int64  `json:"rejected"`
	}
	jsonLog struct {
		File         string  `json:"file"`
		Format       string  `json:"format"`
		Key          string  `json:"key"`
		First        string  `json:"first"`
		Last         string  `json:"last"`
		Speed        float64 `json:"speed"`
		Lines        int     `json:"lines"`
		Requests     int64   `json:"requests"`
		Keys         int     `json:"keys"`
		Keyless      int     `json:"keyless"`
		Filtered     int     `json:"filtered"`
		SkippedLines int     `json:"skipped_lines"`
		// Costs are the --cost rules requests were priced by, as given;
		// absent when every request cost 1. Added to v1.
		Costs []string `json:"costs,omitempty"`
		// ResolutionS is the tick every time of the log falls on (1 for
		// whole seconds), SpreadS the tick its requests were spread over
		// (absent when replayed as logged). Added to v1.
		ResolutionS   float64 `json:"resolution_s,omitempty"`
		SpreadS       float64 `json:"spread_s,omitempty"`
		SpreadSkipped bool    `json:"spread_skipped,omitempty"`
	}
	jsonLimit struct {
		Algorithm string  `json:"algorithm"`
		Rate      string  `json:"rate"`
		Burst     int64   `json:"burst,omitempty"`
		WindowS   float64 `json:"window_s,omitempty"`
	}
	jsonRun struct {
		Label       string    `json:"label"`
		Limit       jsonLimit `json:"limit"`
		Topology    string    `json:"topology"`
		Store       string    `json:"store"`
		Servers     int       `json:"servers"`
		PeakWindowS float64   `json:"peak_window_s,omitempty"` // absent without peaks
		Totals      jsonTotal `json:"totals"`
		Keys        []jsonKey `json:"keys,omitempty"`
	}
	jsonTotal struct {
		Keys          int   `json:"keys"`
		ThrottledKeys int   `json:"throttled_keys"`
		Requests      int64 `json:"requests"`
		Rejected      int64 `json:"rejected"`
	}
	jsonKey struct {
		Key                 string `json:"key"`
		Requests            int64  `json:"requests"`
		Rejected            int64  `json:"rejected"`
		FirstRejected       string `json:"first_rejected,omitempty"`
		WorstMinute         string `json:"worst_minute,omitempty"`
		WorstMinuteRejected int64  `json:"worst_minute_rejected,omitempty"`
		Peak                int    `json:"peak,omitempty"`
		BurstNeeded         int64  `json:"burst_needed,omitempty"`
	}
)

func limitJSON(l sim.Limit) jsonLimit {
	j := jsonLimit{Algorithm: l.Algorithm, Rate: l.Params.Rate.String()}
	for _, name := range paramsOf(l.Algorithm) {
		switch name {
		case "burst":
			j.Burst = l.Params.Burst
		case "window":
			j.WindowS = l.Params.Window.Seconds()
		}
	}
	return j
}

func totalsJSON(t Totals) jsonTotal {
	return jsonTotal{Keys: t.Keys, ThrottledKeys: t.Throttled, Requests: t.Requests, Rejected: t.Rejected}
}

func stamp(t time.Time) string {
	if t.IsZero() {
		return ""
	}
	return t.UTC().Format(time.RFC3339Nano)
}

// WriteJSON writes rep as one ratelim.replay/v2 object.
func WriteJSON(w io.Writer, rep *Report) error {
	l := rep.Log
	doc := jsonReport{Schema: Schema, Log: jsonLog{
		File: name(l.Path), Format: l.Trace.Format.String(), Key: keySpec(l),
		First: stamp(l.First), Last: stamp(l.Last), Speed: l.Speed,
		Lines: l.Stats.Lines, Requests: l.Requests, Keys: len(l.Keys), Keyless: l.Stats.Keyless,
		Filtered: l.Stats.Filtered, SkippedLines: l.Stats.Bad, Costs: costTexts(l.Costs),
		ResolutionS: l.Stats.Resolution.Seconds(), SpreadS: l.Trace.Spread.Seconds(), SpreadSkipped: l.SpreadSkipped,
	}}
	for _, run := range rep.Runs {
		sc := run.Scenario
		jr := jsonRun{Label: run.Label, Limit: limitJSON(sc.Limit), Topology: string(sc.Topology.Kind),
			Store: sc.Topology.StoreLabel(), Servers: sc.Servers, Totals: totalsJSON(run.Totals)}
		if len(l.Peaks) > 0 {
			jr.PeakWindowS = run.PeakWindow.Seconds()
		}
		if jr.Store == "" {
			jr.Store = "memory"
		}
		jr.Keys = make([]jsonKey, len(run.Keys))
		for i, k := range run.Keys {
			jr.Keys[i] = jsonKey{Key: escape.Data(k.Key), Requests: k.Requests, Rejected: k.Rejected, FirstRejected: stamp(k.FirstRejected),
				WorstMinute: stamp(k.WorstMinute), WorstMinuteRejected: k.WorstMinuteRejected, Peak: k.Peak, BurstNeeded: k.Burst}
		}
		doc.Runs = append(doc.Runs, jr)
	}
	if rep.Frontier != nil {
		doc.Frontier = frontierJSON(rep)
	}
	enc := json.NewEncoder(w)
	enc.SetIndent("", "  ")
	enc.SetEscapeHTML(false)
	return enc.Encode(doc)
}

// CSVHeader is the header of WriteCSV's rows.
var CSVHeader = []string{"run", "key", "requests", "rejected", "first_rejected", "worst_minute", "worst_minute_rejected", "peak", "burst_needed"}

// WriteCSV writes a row per key and run, under one header; peak and
// burst_needed are empty when no peak was measured. (The frontier of
// --suggest is in the JSON alone.)
func WriteCSV(w io.Writer, rep *Report) error {
	cw := csv.NewWriter(w)
	cw.Write(CSVHeader)
	peaks := len(rep.Log.Peaks) > 0
	for _, run := range rep.Runs {
		for _, k := range run.Keys {
			peak, burst := "", ""
			if peaks {
				peak, burst = itoa(int64(k.Peak)), itoa(k.Burst)
			}
			cw.Write([]string{run.Label, escape.Data(k.Key), itoa(k.Requests), itoa(k.Rejected), stamp(k.FirstRejected), stamp(k.WorstMinute),
				itoa(k.WorstMinuteRejected), peak, burst})
		}
	}
	cw.Flush()
	return cw.Error()
}

func itoa(n int64) string { return strconv.FormatInt(n, 10) }

// costTexts are rules as people write them: "GET /search*=5".
func costTexts(rules []routecost.Rule) []string {
	var out []string
	for _, r := range rules {
		out = append(out, r.String())
	}
	return out
}

// OutlierRule states the rule FindOutliers applies, for the JSON.
var OutlierRule = fmt.Sprintf("a key is an outlier when, in any window of 1s, 10s, 1m and 10m up to the log's span, (ln busiest - median ln busiest) / (1.4826 * MAD of ln busiest) > %g, the MAD at least ln 1.5", trace.OutlierZ)

func frontierJSON(rep *Report) *jsonFrontier {
	f := rep.Frontier
	names := f.Scenario.Clients
	lim := f.Scenario.Limit
	j := &jsonFrontier{Rule: OutlierRule, Headroom: f.Headroom, Quantile: f.Quantile, Recommended: f.Recommended,
		Windows: []jsonSpread{}, Outliers: []jsonOutlier{}, Near: []jsonOutlier{}, Rows: []jsonFrontierRow{}, MeanFloor: f.MeanFloor, TooFewKeys: f.Outliers.TooFew}
	if f.MeanFloorKey >= 0 {
		j.MeanFloorKey = escape.Data(names[f.MeanFloorKey].Name)
	}
	for _, ws := range f.Outliers.Windows {
		j.Windows = append(j.Windows, jsonSpread{WindowS: ws.Window.Seconds(), Median: ws.Median, BulkMax: ws.BulkMax, MAD: ws.MAD})
	}
	for i, k := range f.Keys {
		o := jsonOutlier{Key: escape.Data(names[i].Name), Requests: k.Requests, Busiest: k.Busiest[:len(f.Outliers.Windows)], Z: f.Outliers.Z[i]}
		switch {
		case f.Outliers.Is[i]:
			j.Outliers = append(j.Outliers, o)
		case f.Outliers.Near[i]:
			j.Near = append(j.Near, o)
		}
	}
	for _, row := range f.Rows {
		l := lim
		l.Params = row.Params
		jr := jsonFrontierRow{Limit: limitJSON(l), Need: row.Need, SparedKeys: row.Spared(), Totals: totalsJSON(row.Totals),
			Throttled: []jsonKeyRj{}, PredictedThrottled: len(row.Predicted), OutliersThrottled: row.OutliersThrottled, BelowBulkMean: row.BelowBulkMean}
		if row.SetBy >= 0 {
			jr.SetBy = escape.Data(names[row.SetBy].Name)
		}
		for _, k := range row.Throttled {
			jr.Throttled = append(jr.Throttled, jsonKeyRj{Key: escape.Data(k.Key), Rejected: k.Rejected})
		}
		j.Rows = append(j.Rows, jr)
	}
	return j
}
