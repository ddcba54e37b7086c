package report

import (
	"bytes"
	"encoding/xml"
	"errors"
	"flag"
	"io"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/ratelim/ratelim/scenarios"
	"github.com/ratelim/ratelim/sim"
)

var update = flag.Bool("update", false, "rewrite the golden files under testdata/")

// golden compares got with testdata/name, or rewrites it with -update.
func golden(t *testing.T, name string, got []byte) {
	t.Helper()
	path := filepath.Join("testdata", name)
	if *update {
		if err := os.MkdirAll("testdata", 0o755); err != nil {
			t.Fatal(err)
		}
		if err := os.WriteFile(path, got, 0o644); err != nil {
			t.Fatal(err)
		}
		return
	}
	want, err := os.ReadFile(path)
	if err != nil {
		t.Fatalf("%v (go test ./report -update creates it)", err)
	}
	if !bytes.Equal(got, want) {
		t.Errorf("%s differs from the golden file (go test ./report -update rewrites it):\n--- got\n%s", name, got)
	}
}

// fakePlot stands in for the drawn timeline: the page's golden files pin
// the page, not package plots' pixels.
var fakePlot = Image{Format: "png", Data: []byte("not really a PNG")}

func builtinPage(t *testing.T, name string) []byte {
	t.Helper()
	f, err := scenarios.Open(name)
	if err != nil {
		t.Fatal(err)
	}
	r := run(t, name)
	for i := range f.Expect {
		if len(f.Expect[i].With) > 0 {
			continue
		}
		outs, err := scenarios.Evaluate(name, &f.Expect[i], r)
		if err != nil {
			t.Fatal(err)
		}
		for _, o := range outs {
			r.Expectations = append(r.Expectations, sim.ExpectationResult{Text: o.Claim(), OK: o.OK, Got: o.Got})
		}
	}
	var buf bytes.Buffer
	err = HTML(&buf, r, Options{Summary: f.Scenario.Summary, Source: f.Source, SourceName: "built-in " + name,
		Plot: fakePlot, Command: "ratelim sim " + name})
	if err != nil {
		t.Fatal(err)
	}
	return buf.Bytes()
}

func TestHTMLGolden(t *testing.T) {
	for _, name := range []string{"window-boundary", "store-outage", "nat"} {
		t.Run(name, func(t *testing.T) {
			page := builtinPage(t, name)
			golden(t, name+".html", page)
			if again := builtinPage(t, name); !bytes.Equal(page, again) {
				t.Error("a second run of the same scenario wrote a different page")
			}
		})
	}
}

// hostile is a string that would run as script, close an attribute or
// end the <pre> if the page did not escape it.
const hostile = `</pre></code><script>alert("x")</script><img src=x onerror=alert(1)>'"&`

func TestHTMLEscapesEverythingFromTheScenario(t *testing.T) {
	r := tiny()
	r.Scenario = hostile
	r.Algorithm = hostile
	r.Clients[0].Name = hostile
	r.Clients[1].Key = hostile
	r.Keys = append(r.Keys, sim.KeyResult{Key: hostile, Clients: 2})
	r.Timeline[0].Client = hostile
	r.Faults[0].Kind, r.Faults[0].Detail = hostile, hostile
	r.Events[0].Text = hostile
	r.Expectations[0].Text = hostile
	r.Findings = []sim.Finding{{Kind: hostile, Client: hostile, Text: hostile}}
	var buf bytes.Buffer
	err := HTML(&buf, r, Options{Summary: hostile, Source: []byte(hostile), SourceName: hostile, Command: hostile,
		ExpectNote: hostile, Plot: fakePlot})
	if err != nil {
		t.Fatal(err)
	}
	page := buf.String()
	for _, bad := range []string{"<script", "<img src=x", "</pre></code><", `alert("x")`} {
		if strings.Contains(page, bad) {
			t.Errorf("the page contains %q unescaped", bad)
		}
	}
	if n := strings.Count(page, "&lt;script&gt;"); n < 10 {
		t.Errorf("the hostile string appears escaped %d times, want it everywhere it was put (at least 10)", n)
	}
	checkWellFormed(t, buf.Bytes())
}

// TestHTMLIsSelfContained parses the page as XML (it is written to be
// well-formed, so that a mis-nested or unclosed element fails here) and
// checks that nothing in it points outside the file.
func TestHTMLIsSelfContained(t *testing.T) {
	page := builtinPage(t, "runaway-healthcheck")
	els := checkWellFormed(t, page)
	for _, want := range []string{"html", "head", "style", "body", "h1", "img", "table", "pre"} {
		if els[want] == 0 {
			t.Errorf("no <%s> in the page", want)
		}
	}
	// One row per client, plus the header and the total.
	if rows, want := els["tr"], 10+2+1+5; rows < want {
		t.Errorf("%d table rows, want at least %d", rows, want)
	}
	for _, external := range []string{"http://", "https://", "<link", "<script", "@import", "url("} {
		if bytes.Contains(page, []byte(external)) {
			t.Errorf("the page refers to something outside it: %q", external)
		}
	}
}

// checkWellFormed parses page as XML with HTML's entities, fails the test
// where it is not well-formed, and returns how many of each element it
// holds. Every src attribute must be a data: URI.
func checkWellFormed(t *testing.T, page []byte) map[string]int {
	t.Helper()
	d := xml.NewDecoder(bytes.NewReader(page))
	d.Entity = xml.HTMLEntity
	els := map[string]int{}
	for {
		tok, err := d.Token()
		if errors.Is(err, io.EOF) {
			break
		}
		if err != nil {
			t.Fatalf("the page is not well-formed: %v", err)
		}
		if se, ok := tok.(xml.StartElement); ok {
			els[se.Name.Local]++
			for _, a := range se.Attr {
				if (a.Name.Local == "src" || a.Name.Local == "href") && !strings.HasPrefix(a.Value, "data:") {
					t.Errorf("<%s %s=%q> points outside the page", se.Name.Local, a.Name.Local, a.Value)
				}
			}
		}
	}
	return els
}

func TestHTMLColumnsFollowTheRun(t *testing.T) {
	tests := []struct {
		name       string
		edit       func(*sim.Result)
		want, lack []string
	}{
		{name: "quiet run", edit: func(r *sim.Result) {
			r.Clients[0].FailedOpen, r.Clients[0].Retries, r.Clients[0].LatencyMs = 0, 0, sim.LatencySummary{}
		}, lack: []string{"<th>failed open</th>", "<th>retries</th>", "<th>p99 ms</th>"}},
		{name: "failing open, retrying, waiting", edit: func(*sim.Result) {},
			want: []string{"<th>failed open</th>", "<th>failed closed</th>", "<th>retries</th>", "<th>p99 ms</th>"}},
		{name: "a shared key gets its own table", edit: func(*sim.Result) {}, want: []string{"<h3>Per limiter key</h3>"}},
		{name: "one client per key, no key table", edit: func(r *sim.Result) { r.Keys[0].Clients = 1 },
			lack: []string{"Per limiter key"}},
		{name: "no plot, no figure", edit: func(*sim.Result) {}, lack: []string{"<figure"}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			r := tiny()
			tt.edit(r)
			var buf bytes.Buffer
			if err := HTML(&buf, r, Options{}); err != nil {
				t.Fatal(err)
			}
			for _, s := range tt.want {
				if !strings.Contains(buf.String(), s) {
					t.Errorf("no %q", s)
				}
			}
			for _, s := range tt.lack {
				if strings.Contains(buf.String(), s) {
					t.Errorf("has %q", s)
				}
			}
		})
	}
}

func TestHTMLErrors(t *testing.T) {
	if err := HTML(io.Discard, nil, Options{}); err == nil {
		t.Error("no error for no result")
	}
	if err := HTML(io.Discard, tiny(), Options{Plot: Image{Format: "jpeg", Data: []byte{1}}}); err == nil {
		t.Error("no error for a figure it cannot inline")
	}
}
