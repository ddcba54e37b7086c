package plots

import (
	"bytes"
	"io"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"testing"

	"gonum.org/v1/plot/vg"

	"github.com/ratelim/ratelim/sim"
	"github.com/ratelim/ratelim/store"
)

// store-outage, fail-open against fail-closed: both columns titled, both
// lessons said, the clients paired row by row, and the mobile app's row
// showing what each policy did to it.
func TestTimelineVsStoreOutage(t *testing.T) {
	open := builtin(t, "store-outage", nil)
	closed := builtin(t, "store-outage", func(sc *sim.Scenario) { sc.Topology.OnError = store.FailClosed })
	var b bytes.Buffer
	if err := TimelineVs(&b, open, closed, "on-error=fail-open", "on-error=fail-closed", Options{Format: "svg"}); err != nil {
		t.Fatal(err)
	}
	all := strings.Join(texts(b.Bytes()), "\n")
	words := strings.Join(strings.Fields(strings.Join(texts(b.Bytes()), " ")), " ")
	for _, want := range []string{"left: on-error=fail-open", "right: on-error=fail-closed", sim.Headline(open), sim.Headline(closed),
		"failed open 50", "failed closed 50", "left and right share each row's y axis"} {
		if !strings.Contains(words, want) {
			t.Errorf("the side-by-side figure does not say %q", want)
		}
	}
	// The settings that differ are the labels' business, not the subtitle's.
	if strings.Contains(all, "on error fail-open") || strings.Contains(all, "on error fail-closed") {
		t.Error("the subtitle names one run's on_error as if both had it")
	}

	da, _ := newTimelineData(open, "client")
	db, _ := newTimelineData(closed, "client")
	pairSignatures(da, db)
	rows := pairRows(da, db)
	if !slices.Equal(rows, []string{"scraper", "mobile"}) {
		t.Errorf("rows %v, want scraper, mobile", rows)
	}

	var p bytes.Buffer
	if err := TimelineVs(&p, open, closed, "on-error=fail-open", "on-error=fail-closed", Options{}); err != nil {
		t.Fatal(err)
	}
	img := checkPNG(t, "vs", p.Bytes(), 0, 0)
	if w := img.Bounds().Dx(); w != 14*96 {
		t.Errorf("default width %d pixels, want %d", w, 14*96)
	}
	if !hasColour(img, colFailedOpen) || !hasColour(img, colFailedClosed) {
		t.Error("the pair does not draw both fail policies' hatching")
	}
	if dir := reviewDir(t); dir != "" {
		os.WriteFile(filepath.Join(dir, "vs-store-outage.png"), p.Bytes(), 0o644)
	}
}

// Clients alike in one run and not in the other are not put in one
// panel, so the rows still pair; a client only one run has gets an empty
// place that says so.
func TestTimelineVsPairsRows(t *testing.T) {
	a := goldenResult()
	b := goldenResult()
	// In b, mobile behaves as web does: alike in b, not in a.
	b.Clients[1] = b.Clients[0]
	b.Clients[1].Name = "mobile"
	for i := range b.Timeline {
		if b.Timeline[i].Client == "mobile" {
			row := b.Timeline[i-1]
			row.Client = "mobile"
			b.Timeline[i] = row
		}
	}
	b.Clients = append(b.Clients, sim.ClientResult{Name: "batch", Key: "batch"})
	da, _ := newTimelineData(a, "client")
	db, _ := newTimelineData(b, "client")
	pairSignatures(da, db)
	if rows := pairRows(da, db); !slices.Equal(rows, []string{"web", "mobile", "batch"}) {
		t.Errorf("rows %v, want web, mobile, batch", rows)
	}
	var out bytes.Buffer
	if err := TimelineVs(&out, a, b, "before", "after", Options{Format: "svg"}); err != nil {
		t.Fatal(err)
	}
	if all := strings.Join(texts(out.Bytes()), "\n"); !strings.Contains(all, "not in this run") {
		t.Error("the run without batch does not say so in its place")
	}
}

func TestTimelineVsRefusesWhatItCannotDraw(t *testing.T) {
	r := goldenResult()
	tests := []struct {
		name string
		a, b *sim.Result
		opts Options
		want string
	}{
		{"nil", r, nil, Options{}, "plots: no result to draw"},
		{"format", r, r, Options{Format: "gif"}, `plots: unknown format "gif"`},
		{"by", r, r, Options{By: "server"}, `plots: cannot draw a panel per "server"`},
		{"narrow", r, r, Options{Width: 5 * vg.Inch}, "plots: a figure 5.0in wide has no room for two columns"},
		{"short", r, r, Options{Height: 1 * vg.Inch}, "plots: a figure 1.0in high has no room for"},
	}
	for _, tt := range tests {
		err := TimelineVs(io.Discard, tt.a, tt.b, "a", "b", tt.opts)
		if err == nil || !strings.HasPrefix(err.Error(), tt.want) {
			t.Errorf("%s: err = %v, want %q", tt.name, err, tt.want)
		}
	}
}
