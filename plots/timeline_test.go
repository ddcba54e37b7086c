package plots

import (
	"bytes"
	"encoding/xml"
	"errors"
	"fmt"
	"html"
	"image"
	"image/color"
	"image/png"
	"io"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"testing"

	"gonum.org/v1/plot/vg"

	"github.com/ratelim/ratelim/sim"
)

// reviewDir is where the tests leave each figure they draw, for a person
// to look at; set PLOTS_REVIEW= (empty) to skip.
func reviewDir(t *testing.T) string {
	dir, ok := os.LookupEnv("PLOTS_REVIEW")
	if !ok {
		dir = filepath.Join(os.TempDir(), "plots-review")
	}
	if dir == "" {
		return ""
	}
	if err := os.MkdirAll(dir, 0o755); err != nil {
		t.Logf("no review copies: %v", err)
		return ""
	}
	return dir
}

// checkPNG decodes b and checks its size and that something was drawn.
func checkPNG(t *testing.T, name string, b []byte, wantW, wantH int) image.Image {
	t.Helper()
	img, err := png.Decode(bytes.NewReader(b))
	if err != nil {
		t.Fatalf("%s: not a PNG: %v", name, err)
	}
	size := img.Bounds().Size()
	if wantW > 0 && (size.X != wantW || size.Y != wantH) {
		t.Errorf("%s: %d×%d pixels, want %d×%d", name, size.X, size.Y, wantW, wantH)
	}
	colours := map[color.RGBA]bool{}
	inked := 0
	for y := img.Bounds().Min.Y; y < img.Bounds().Max.Y; y++ {
		for x := img.Bounds().Min.X; x < img.Bounds().Max.X; x++ {
			c := color.RGBAModel.Convert(img.At(x, y)).(color.RGBA)
			colours[c] = true
			if c.R < 0xf0 || c.G < 0xf0 || c.B < 0xf0 {
				inked++
			}
		}
	}
	if len(colours) < 50 {
		t.Errorf("%s: %d distinct colours: is it blank?", name, len(colours))
	}
	if frac := float64(inked) / float64(size.X*size.Y); frac < 0.03 {
		t.Errorf("%s: %.1f%% of pixels are not white: is it blank?", name, 100*frac)
	}
	return img
}

// hasColour reports whether img has a pixel within a few levels of c.
func hasColour(img image.Image, c color.NRGBA) bool {
	near := func(a, b uint8) bool { return a+3 >= b && b+3 >= a }
	for y := img.Bounds().Min.Y; y < img.Bounds().Max.Y; y++ {
		for x := img.Bounds().Min.X; x < img.Bounds().Max.X; x++ {
			p := color.NRGBAModel.Convert(img.At(x, y)).(color.NRGBA)
			if near(p.R, c.R) && near(p.G, c.G) && near(p.B, c.B) {
				return true
			}
		}
	}
	return false
}

// checkSVG checks that b is well-formed XML that holds every text in want.
func checkSVG(t *testing.T, name string, b []byte, want []string) {
	t.Helper()
	dec := xml.NewDecoder(bytes.NewReader(b))
	for {
		_, err := dec.Token()
		if errors.Is(err, io.EOF) {
			break
		}
		if err != nil {
			t.Fatalf("%s: SVG is not well-formed: %v", name, err)
		}
	}
	s := string(b)
	for _, w := range want {
		if !strings.Contains(s, html.EscapeString(w)) {
			t.Errorf("%s: SVG has no text %q", name, w)
		}
	}
}

// texts returns what an SVG's <text> elements say.
func texts(b []byte) []string {
	var out []string
	dec := xml.NewDecoder(bytes.NewReader(b))
	in := false
	for {
		tok, err := dec.Token()
		if err != nil {
			return out
		}
		switch tok := tok.(type) {
		case xml.StartElement:
			in = tok.Name.Local == "text"
		case xml.CharData:
			if in {
				out = append(out, string(tok))
			}
		case xml.EndElement:
			in = false
		}
	}
}

func TestTimelineDrawsEveryRun(t *testing.T) {
	review := reviewDir(t)
	for _, tc := range reviewCases() {
		t.Run(tc.name, func(t *testing.T) {
			r := mustRun(t, tc.sc)

			// A requested size is the size of the PNG, at 96 pixels an inch.
			var b bytes.Buffer
			height := 7.0
			if len(r.Clients) > 6 {
				height = 16
			}
			if err := Timeline(&b, r, Options{Width: 9 * vg.Inch, Height: vg.Length(height) * vg.Inch, Format: "png", By: tc.by}); err != nil {
				t.Fatal(err)
			}
			checkPNG(t, tc.name, b.Bytes(), 9*96, int(height*96))

			// The default size: 10 inches wide, as tall as the panels need.
			b.Reset()
			if err := Timeline(&b, r, Options{By: tc.by}); err != nil {
				t.Fatal(err)
			}
			img := checkPNG(t, tc.name, b.Bytes(), 0, 0)
			if w := img.Bounds().Dx(); w != 960 {
				t.Errorf("default width %d pixels, want 960", w)
			}
			if !hasColour(img, colAllowed) {
				t.Errorf("no pixel in the allowed colour %v", colAllowed)
			}
			if review != "" {
				if err := os.WriteFile(filepath.Join(review, tc.name+".png"), b.Bytes(), 0o644); err != nil {
					t.Fatal(err)
				}
			}

			// SVG: every client (or key) and every fault kind is there as text.
			b.Reset()
			if err := Timeline(&b, r, Options{Format: "svg", By: tc.by}); err != nil {
				t.Fatal(err)
			}
			var want []string
			for _, c := range r.Clients {
				want = append(want, c.Name)
				if tc.by == "key" {
					want = append(want, c.Key)
				}
			}
			for _, f := range r.Faults {
				want = append(want, f.Kind)
			}
			want = append(want, r.Scenario, r.Algorithm, r.Topology, "time (s)")
			checkSVG(t, tc.name, b.Bytes(), want)
			all := strings.Join(texts(b.Bytes()), "\n")
			for _, w := range want {
				if !strings.Contains(all, w) {
					t.Errorf("no <text> says %q", w)
				}
			}
			// The lesson is under the title, wrapped over lines.
			if words := strings.Join(strings.Fields(strings.Join(texts(b.Bytes()), " ")), " "); !strings.Contains(words, sim.Headline(r)) {
				t.Errorf("the figure does not say its headline %q", sim.Headline(r))
			}
			if review != "" {
				if err := os.WriteFile(filepath.Join(review, tc.name+".svg"), b.Bytes(), 0o644); err != nil {
					t.Fatal(err)
				}
			}
		})
	}
}

func TestTimelineSaysWhatItLeftOut(t *testing.T) {
	r := mustRun(t, runaway())
	var b bytes.Buffer
	if err := Timeline(&b, r, Options{Format: "svg"}); err != nil {
		t.Fatal(err)
	}
	all := strings.Join(texts(b.Bytes()), "\n")
	// 16 bastions in the same loop, each on its own key, have the same
	// figures step by step: one panel that says so and names them all,
	// beside the scheduler's; and the State panel draws their 16 keys as
	// one line, beside the scheduler's.
	for _, want := range []string{"bastion-1…16 ×16", "16 alike, step by step:", "bastion-16", "each of them:", "scheduler", "alike)"} {
		if !strings.Contains(all, want) {
			t.Errorf("the 17-client figure does not say %q", want)
		}
	}
	if strings.Contains(all, "others:") {
		t.Error("the 17-client figure folds clients: two panels need no fold")
	}
}

func TestTimelineStatePanelShowsBothCopiesOfASplitBrain(t *testing.T) {
	r := mustRun(t, splitBrain())
	var b bytes.Buffer
	if err := Timeline(&b, r, Options{Format: "svg"}); err != nil {
		t.Fatal(err)
	}
	all := strings.Join(texts(b.Bytes()), "\n")
	for _, want := range []string{"primary", "replica", "partition: groups 0,1 | 2,3", "latency: rtt 15ms"} {
		if !strings.Contains(all, want) {
			t.Errorf("split-brain figure does not say %q", want)
		}
	}
}

func TestTimelineLatencyPanelOnlyWhenSomethingWaited(t *testing.T) {
	has := func(r *sim.Result) bool {
		var b bytes.Buffer
		if err := Timeline(&b, r, Options{Format: "svg"}); err != nil {
			t.Fatal(err)
		}
		return strings.Contains(strings.Join(texts(b.Bytes()), "\n"), "latency (ms)")
	}
	if !has(mustRun(t, leaky())) {
		t.Error("a leaky bucket's queueing drew no latency panel")
	}
	r := mustRun(t, localFour())
	for i := range r.Timeline {
		r.Timeline[i].P50Ms, r.Timeline[i].P99Ms = 0, 0
	}
	if has(r) {
		t.Error("a run where nothing waited drew a latency panel")
	}
	// Every request paid the store's round trip and no more: a flat line
	// the subtitle already states.
	if has(builtin(t, "store-outage", nil)) {
		t.Error("a run whose latency is the round trip throughout drew a latency panel")
	}
	if !has(mustRun(t, splitBrain())) {
		t.Error("a latency spike drew no latency panel")
	}
}

func TestTimelineRefusesWhatItCannotDraw(t *testing.T) {
	r := mustRun(t, localFour())
	noStep := *r
	noStep.StepS = 0
	tests := []struct {
		name string
		r    *sim.Result
		opts Options
		want string
	}{
		{"nil result", nil, Options{}, "plots: no result to draw"},
		{"no clients", &sim.Result{StepS: 1, DurationS: 1}, Options{}, "plots: the result has no clients to draw"},
		{"no step", &noStep, Options{}, "plots: the result's step is 0s"},
		{"format", r, Options{Format: "gif"}, `plots: unknown format "gif" (want png or svg)`},
		{"by", r, Options{By: "server"}, `plots: cannot draw a panel per "server" (want client or key)`},
		{"negative size", r, Options{Width: -1}, "plots: figure size"},
		{"huge", r, Options{Width: 1000 * vg.Inch, Height: 10 * vg.Inch}, "too big"},
		{"too short", mustRun(t, runaway()), Options{Height: 1 * vg.Inch}, "plots: a figure 1.0in high has no room for 4 panels"},
	}
	for _, tt := range tests {
		err := Timeline(io.Discard, tt.r, tt.opts)
		if err == nil || !strings.Contains(err.Error(), tt.want) || !strings.HasPrefix(err.Error(), "plots: ") {
			t.Errorf("%s: err = %v, want it to say %q", tt.name, err, tt.want)
		}
	}
}

func TestTimelineWithHundredsOfClientsStaysReadable(t *testing.T) {
	r := &sim.Result{Scenario: "crowd", Algorithm: "gcra", Topology: "shared", Store: "memory", Servers: 1, DurationS: 10, StepS: 1,
		Limit: sim.LimitResult{RatePerS: 5, Burst: 5}}
	// Every device sends a different number of requests, so no two are
	// alike; their states are of 20 kinds.
	for i := range 300 {
		name := fmt.Sprintf("device-%03d", i)
		sent := int64(50 + i)
		r.Clients = append(r.Clients, sim.ClientResult{Name: name, Key: name, Counts: sim.Counts{Sent: sent, Allowed: 50}})
		r.Keys = append(r.Keys, sim.KeyResult{Key: name, Counts: sim.Counts{Sent: sent, Allowed: 50}})
		for s := range 10 {
			row := sim.TimelineRow{TS: float64(s), Client: name, Counts: sim.Counts{Sent: 5, Allowed: 5}}
			if s == 9 {
				row.Sent += int64(i)
				row.Rejected = int64(i)
			}
			r.Timeline = append(r.Timeline, row)
		}
		r.State = append(r.State, sim.StateSeries{Key: name, Copy: "shared", TS: []float64{1, 2}, Remaining: []int64{int64(i % 20), 0}})
	}
	var b bytes.Buffer
	if err := Timeline(&b, r, Options{Format: "svg"}); err != nil {
		t.Fatal(err)
	}
	all := strings.Join(texts(b.Bytes()), "\n")
	for _, want := range []string{"others: 289 clients", "more", "5 busiest, 3 least busy of 300 keys"} {
		if !strings.Contains(all, want) {
			t.Errorf("the 300-client figure does not say %q", want)
		}
	}
	b.Reset()
	if err := Timeline(&b, r, Options{}); err != nil {
		t.Fatal(err)
	}
	img := checkPNG(t, "crowd", b.Bytes(), 0, 0)
	if dir := reviewDir(t); dir != "" {
		os.WriteFile(filepath.Join(dir, "crowd-300-clients.png"), b.Bytes(), 0o644)
	}
	if h := img.Bounds().Dy(); h > 30*96 {
		t.Errorf("the 300-client figure is %d pixels high", h)
	}
}

// With a Layout, a run cut short (an animation's frame) is drawn as the
// whole run is: at 2 s every bastion and the scheduler are still at zero,
// alike, yet they keep the panels of the whole run, and the same axes.
func TestTimelineLayoutKeepsTheWholeRunsPanels(t *testing.T) {
	full := builtin(t, "runaway-healthcheck", nil)
	cut := *full
	cut.Timeline = nil
	for _, row := range full.Timeline {
		if row.TS < 2 {
			cut.Timeline = append(cut.Timeline, row)
		}
	}
	cut.Clients = slices.Clone(full.Clients)
	for i := range cut.Clients {
		c := &cut.Clients[i]
		c.Sent, c.Allowed, c.Rejected, c.MaxAllowed1s, c.IdealAllowed, c.IdealMaxAllowed1s = 0, 0, 0, 0, 0, 0
		if c.Name == "dashboard" {
			c.Sent, c.Allowed = 4, 4
		}
	}
	panelsOf := func(r *sim.Result, layout *sim.Result) []string {
		d, err := newTimelineData(r, "client")
		if err != nil {
			t.Fatal(err)
		}
		if _, err := layOut(d, layout, "client"); err != nil {
			t.Fatal(err)
		}
		var names []string
		for _, p := range d.panels {
			names = append(names, p.name)
		}
		return names
	}
	want := panelsOf(full, nil)
	if got := panelsOf(&cut, nil); slices.Equal(got, want) {
		t.Fatalf("on its own the cut run draws %v too: the test shows nothing", got)
	}
	if got := panelsOf(&cut, full); !slices.Equal(got, want) {
		t.Errorf("the cut run laid out as the whole run draws %v, want %v", got, want)
	}
	var a, b bytes.Buffer
	if err := Timeline(&a, full, Options{}); err != nil {
		t.Fatal(err)
	}
	if err := Timeline(&b, &cut, Options{Layout: full}); err != nil {
		t.Fatal(err)
	}
	ia, ib := checkPNG(t, "full", a.Bytes(), 0, 0), checkPNG(t, "cut", b.Bytes(), 0, 0)
	if ia.Bounds() != ib.Bounds() {
		t.Errorf("the cut run is %v, the whole run %v: a frame would jump", ib.Bounds(), ia.Bounds())
	}
}
