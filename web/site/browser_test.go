package site_test

// The playground in a real browser: headless Chromium, driven by
// chromedp, opens the site as a person would — exported to a directory
// and opened from file://, and once served on loopback — and the tests
// read what the page shows through the DOM of Contract 4 (the ids,
// body[data-state], body[data-runs], window.ratelimLast) and hold its
// numbers to the simulator run natively.

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"flag"
	"fmt"
	"image/png"
	"maps"
	"net/http/httptest"
	"net/url"
	"os"
	"os/exec"
	"path/filepath"
	"reflect"
	"slices"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/chromedp/cdproto/cdp"
	"github.com/chromedp/cdproto/network"
	cdpruntime "github.com/chromedp/cdproto/runtime"
	"github.com/chromedp/chromedp"

	"github.com/ratelim/ratelim/scenarios"
	"github.com/ratelim/ratelim/simrun"
	"github.com/ratelim/ratelim/web"
	"github.com/ratelim/ratelim/web/site"
)

var (
	update      = flag.Bool("update", false, "rewrite docs/playground.png, the page at 1280×800")
	screenshots = flag.String("screenshots", "", "write the page's screenshots into this directory, to look at (default: a temporary one)")
)

// browserNames are the Chromium commands the tests look for, in order.
var browserNames = []string{"chromium", "chromium-browser", "google-chrome", "google-chrome-stable"}

// shared is what every browser test uses, made once: the site built and
// exported, and one headless Chromium (each test opens tabs of its own).
var shared struct {
	once     sync.Once
	skip     string // why the tests skip, when they do
	err      error
	site     *site.Site
	dir      string // the exported site
	browser  context.Context
	stop     []func()
	buildLog bytes.Buffer
}

func TestMain(m *testing.M) {
	flag.Parse()
	code := m.Run()
	for _, stop := range slices.Backward(shared.stop) {
		stop()
	}
	os.Exit(code)
}

// needBrowser skips t without Chromium, under -short and under the race
// detector (the page's concurrency is the browser's, which -race does not
// see; CI's next go test runs them), and otherwise returns the browser,
// the site exported, building both on the first call.
func needBrowser(t testing.TB) context.Context {
	t.Helper()
	if testing.Short() {
		t.Skip("-short: the browser tests build the WebAssembly and start Chromium")
	}
	if raceEnabled {
		t.Skip("-race: the browser tests drive Chromium, whose concurrency the race detector does not see; go test without -race runs them")
	}
	shared.once.Do(setUp)
	if shared.skip != "" {
		t.Skip(shared.skip)
	}
	if shared.err != nil {
		t.Fatalf("%v\n%s", shared.err, shared.buildLog.String())
	}
	return shared.browser
}

func setUp() {
	var exe string
	for _, name := range browserNames {
		if p, err := exec.LookPath(name); err == nil {
			exe = p
			break
		}
	}
	if exe == "" {
		shared.skip = fmt.Sprintf("no Chromium here (looked for %s on PATH): the browser tests need one (Debian: apt-get install chromium)", strings.Join(browserNames, ", "))
		return
	}
	if _, err := exec.LookPath("go"); err != nil {
		shared.skip = "no go command to build the playground's WebAssembly with"
		return
	}
	shared.site, shared.err = site.Build(context.Background(), site.Options{Dir: ".", Progress: &shared.buildLog, Rebuild: true})
	if shared.err != nil {
		return
	}
	dir, err := os.MkdirTemp("", "ratelim-site-test-")
	if err != nil {
		shared.err = err
		return
	}
	shared.stop = append(shared.stop, func() { os.RemoveAll(dir) })
	shared.dir = filepath.Join(dir, "site")
	if _, err := shared.site.Export(shared.dir); err != nil {
		shared.err = err
		return
	}
	opts := append(chromedp.DefaultExecAllocatorOptions[:], chromedp.ExecPath(exe), chromedp.WindowSize(1280, 800),
		// chromedp waits 20 s for Chromium's DevTools URL by default; a
		// loaded 2-core CI host running two packages' tests at once can
		// take longer, and a miss here fails every browser test together.
		chromedp.WSURLReadTimeout(2*time.Minute))
	if os.Geteuid() == 0 {
		// Chromium refuses to run as root inside its sandbox (CI runs
		// as root).
		opts = append(opts, chromedp.NoSandbox)
	}
	alloc, cancelAlloc := chromedp.NewExecAllocator(context.Background(), opts...)
	browser, cancelBrowser := chromedp.NewContext(alloc)
	shared.stop = append(shared.stop, cancelAlloc, cancelBrowser)
	if err := chromedp.Do(browser); err != nil { // starts it
		shared.err = fmt.Errorf("starting %s: %w", exe, err)
		return
	}
	shared.browser = browser
}

// fileURL is the exported page's file:// URL with fragment, the site
// built and exported first.
func fileURL(t testing.TB, fragment string) string {
	t.Helper()
	needBrowser(t)
	u := url.URL{Scheme: "file", Path: filepath.ToSlash(filepath.Join(shared.dir, site.IndexFile)), Fragment: fragment}
	return u.String()
}

// tab is one page open in the browser, with what it requested.
type tab struct {
	ctx context.Context
	t   testing.TB

	mu         sync.Mutex
	requests   []string
	exceptions []string
}

// openPage opens pageURL in a new tab and waits until the page has run
// its first scenario (or failed to). allowed reports whether a request
// URL is the page's own: when the test ends, every request the page made
// must be, and the page must have thrown no uncaught exception.
func openPage(t testing.TB, pageURL string, allowed func(string) bool) *tab {
	t.Helper()
	browser := needBrowser(t)
	ctx, cancel := chromedp.NewContext(browser)
	ctx, cancelTimeout := context.WithTimeout(ctx, 4*time.Minute)
	p := &tab{ctx: ctx, t: t}
	if err := chromedp.Listen(ctx, func(ev any) {
		p.mu.Lock()
		defer p.mu.Unlock()
		switch ev := ev.(type) {
		case *network.EventRequestWillBeSent:
			p.requests = append(p.requests, ev.Request.URL)
		case *cdpruntime.EventExceptionThrown:
			p.exceptions = append(p.exceptions, exceptionText(ev.ExceptionDetails))
		}
	}); err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() {
		cancelTimeout()
		cancel()
		p.mu.Lock()
		defer p.mu.Unlock()
		if len(p.requests) == 0 {
			t.Errorf("the tab saw no request at all: the network events were not heard, so nothing below was checked")
		}
		for _, r := range p.requests {
			if !allowed(r) {
				t.Errorf("the page requested %s, which is not its own", r)
			}
		}
		for _, e := range p.exceptions {
			t.Errorf("the page threw: %s", e)
		}
	})
	if err := chromedp.Do(ctx,
		chromedp.Func(func(ctx context.Context, tg *chromedp.Target) error {
			_, err := cdp.Call(ctx, tg, network.Enable, network.EnableParams{})
			return err
		}),
		chromedp.Navigate(pageURL),
	); err != nil {
		t.Fatalf("opening %s: %v", pageURL, err)
	}
	p.waitRun(0)
	return p
}

// exceptionText is an uncaught exception as a line.
func exceptionText(d *cdpruntime.ExceptionDetails) string {
	if d == nil {
		return "(no details)"
	}
	text := d.Text
	if d.Exception != nil && d.Exception.Description != "" {
		text += " " + d.Exception.Description
	}
	return fmt.Sprintf("%s (%s:%d)", text, d.URL, d.LineNumber+1)
}

// ownFiles allows the exported site's files alone (and data: and blob:
// URLs, which the page makes itself and which reach no server).
func ownFiles(u string) bool {
	if strings.HasPrefix(u, "data:") || strings.HasPrefix(u, "blob:") {
		return true
	}
	u, _, _ = strings.Cut(u, "#")
	for _, name := range site.Files {
		if u == (&url.URL{Scheme: "file", Path: filepath.ToSlash(filepath.Join(shared.dir, name))}).String() {
			return true
		}
	}
	return false
}

// eval runs expression in the page and decodes its value.
func eval[T any](p *tab, expression string) T {
	p.t.Helper()
	v, err := chromedp.Run(p.ctx, chromedp.Evaluate[T](expression))
	if err != nil {
		p.t.Fatalf("evaluating %s: %v", expression, err)
	}
	return v
}

// do runs a statement in the page.
func (p *tab) do(statement string) {
	p.t.Helper()
	if err := chromedp.Do(p.ctx, chromedp.Evaluate[chromedp.Void](statement)); err != nil {
		p.t.Fatalf("running %s: %v", statement, err)
	}
}

// await runs an expression whose value is a Promise in the page, and
// waits for it to settle (chromedp.Evaluate without EvalAwaitPromise
// returns at once).
func (p *tab) await(promise string) {
	p.t.Helper()
	if err := chromedp.Do(p.ctx, chromedp.Evaluate[chromedp.Void](promise, chromedp.EvalAwaitPromise)); err != nil {
		p.t.Fatalf("awaiting %s: %v", promise, err)
	}
}

// runs is how many runs the page has finished (body[data-runs]).
func (p *tab) runs() int {
	p.t.Helper()
	return eval[int](p, `Number(document.body.dataset.runs || 0)`)
}

// waitRun waits until the page has finished more than after runs and is
// not running or loading, and returns its state ("ready" or "error").
func (p *tab) waitRun(after int) string {
	p.t.Helper()
	expr := fmt.Sprintf(`Number(document.body.dataset.runs || 0) > %d && (document.body.dataset.state === 'ready' || document.body.dataset.state === 'error')`, after)
	if _, err := chromedp.Run(p.ctx, chromedp.Poll[bool](expr, chromedp.WithPollingInterval(10*time.Millisecond), chromedp.WithPollingTimeout(3*time.Minute))); err != nil {
		state := eval[string](p, `document.body.dataset.state + ' after ' + document.body.dataset.runs + ' runs: ' + (document.getElementById('status') || {}).textContent`)
		p.t.Fatalf("waiting for run %d: %v (the page is %s)", after+1, err, state)
	}
	return eval[string](p, `document.body.dataset.state`)
}

// js is v as a JavaScript literal.
func js(v any) string {
	b, err := json.Marshal(v)
	if err != nil {
		panic(err)
	}
	return string(b)
}

// result is the page's last run's result JSON (window.ratelimLast.result).
func (p *tab) result() []byte {
	p.t.Helper()
	return []byte(eval[string](p, `JSON.stringify(window.ratelimLast && window.ratelimLast.result || null)`))
}

// sameBytes fails t unless the page's last run carries, as text
// (window.ratelimLast.resultJSON), the bytes simrun wrote: what `ratelim
// sim --format json` prints, byte for byte.
func (p *tab) sameBytes(t testing.TB, what string, want []byte) {
	t.Helper()
	if got := eval[string](p, `window.ratelimLast.resultJSON || ''`); got != string(want) {
		t.Errorf("%s: the page's resultJSON is %d bytes, simrun wrote %d: not byte for byte", what, len(got), len(want))
	}
}

// state is the page's permalink decoded: what its URL's fragment says.
func (p *tab) state() web.State {
	p.t.Helper()
	frag := strings.TrimPrefix(eval[string](p, `location.hash`), "#")
	s, err := web.Decode(frag)
	if err != nil {
		p.t.Fatalf("the page's fragment %q does not decode: %v", frag, err)
	}
	return s
}

// native runs the state as `ratelim sim` would, with simrun.Run (which
// cmd/ratelim's TestSimJSONIsSimrun ties byte for byte to `ratelim sim
// NAME --format json`), and returns the result JSON and the outcome.
func native(t testing.TB, s web.State) ([]byte, *simrun.Outcome) {
	t.Helper()
	var f *scenarios.File
	var err error
	if s.YAML != "" {
		name := s.FileName
		if name == "" {
			name = web.DefaultFileName
		}
		f, err = scenarios.Parse(name, []byte(s.YAML))
	} else {
		f, err = scenarios.Open(s.Builtin)
	}
	if err != nil {
		t.Fatalf("native: %v", err)
	}
	var sets []scenarios.Setting
	for _, x := range s.Settings {
		sets = append(sets, scenarios.Setting{Name: x.Name, Value: x.Value})
	}
	var out bytes.Buffer
	o, err := simrun.Run(context.Background(), &out, simrun.Options{File: f, Settings: sets, Layout: simrun.Layout{Format: "json"}})
	if err != nil {
		t.Fatalf("native run of %+v: %v", s, err)
	}
	return out.Bytes(), o
}

// sameJSON fails t unless the two JSON texts are the same values: the
// page's (parsed and written again by JavaScript) and simrun's, compared
// as parsed, every number exactly.
func sameJSON(t testing.TB, what string, page, want []byte) {
	t.Helper()
	var a, b any
	if err := json.Unmarshal(page, &a); err != nil {
		t.Fatalf("%s: the page's JSON: %v: %.200s", what, err, page)
	}
	if err := json.Unmarshal(want, &b); err != nil {
		t.Fatalf("%s: simrun's JSON: %v", what, err)
	}
	if !reflect.DeepEqual(a, b) {
		t.Errorf("%s: the page's result differs from simrun's: %s", what, firstDifference("result", a, b))
	}
}

// firstDifference names where two parsed JSON values first differ.
func firstDifference(path string, a, b any) string {
	switch a := a.(type) {
	case map[string]any:
		bm, ok := b.(map[string]any)
		if !ok {
			return fmt.Sprintf("%s: an object in the page, %T in simrun's", path, b)
		}
		keys := slices.AppendSeq(slices.Collect(maps.Keys(a)), maps.Keys(bm))
		slices.Sort(keys)
		for _, k := range slices.Compact(keys) {
			if !reflect.DeepEqual(a[k], bm[k]) {
				return firstDifference(path+"."+k, a[k], bm[k])
			}
		}
	case []any:
		bs, ok := b.([]any)
		if !ok {
			return fmt.Sprintf("%s: an array in the page, %T in simrun's", path, b)
		}
		if len(a) != len(bs) {
			return fmt.Sprintf("%s: %d entries in the page, %d in simrun's", path, len(a), len(bs))
		}
		for i := range a {
			if !reflect.DeepEqual(a[i], bs[i]) {
				return firstDifference(fmt.Sprintf("%s[%d]", path, i), a[i], bs[i])
			}
		}
	}
	return fmt.Sprintf("%s: %v in the page, %v in simrun's", path, a, b)
}

// The page opens from file:// with no server, runs its default built-in,
// and shows it: a headline, the timeline's SVG, a row per client, the
// command that reproduces it; and its numbers are simrun's.
func TestPageLoadsAndRunsTheDefault(t *testing.T) {
	p := openPage(t, fileURL(t, ""), ownFiles)
	if state := eval[string](p, `document.body.dataset.state`); state != "ready" {
		t.Fatalf("the page is %q, want ready: %s", state, eval[string](p, `document.getElementById('yaml-error').textContent`))
	}
	s := p.state()
	if s.Builtin == "" {
		t.Fatalf("the default's permalink names no built-in: %+v", s)
	}
	want, _ := native(t, s)
	sameJSON(t, s.Builtin, p.result(), want)
	for _, check := range []struct{ what, expr string }{
		{"a headline", `document.getElementById('headline').textContent.trim().length > 0`},
		{"the timeline's SVG", `!!document.querySelector('#timeline svg')`},
		{"a row per client", `document.querySelectorAll('#clients tbody tr').length >= window.ratelimLast.scenario.clients.length`},
		{"the command", `document.getElementById('command').textContent.startsWith('ratelim sim ')`},
		{"the built-ins to pick from", `document.querySelectorAll('#builtin option').length >= 2`},
		{"a control per setting", `document.querySelectorAll('#controls [data-setting]').length === window.ratelimLast.controls.length`},
	} {
		if !eval[bool](p, check.expr) {
			t.Errorf("the page shows no %s (%s)", check.what, check.expr)
		}
	}
}

// Every built-in, picked in the page, gives the numbers `ratelim sim
// NAME --format json` gives: the page's result JSON is simrun's.
func TestEveryBuiltinMatchesTheCLI(t *testing.T) {
	p := openPage(t, fileURL(t, ""), ownFiles)
	names := scenarios.Builtin()
	offered := eval[[]string](p, `[...document.querySelectorAll('#builtin option')].map(o => o.value).filter(v => v)`)
	if !slices.Equal(offered, names) {
		t.Errorf("the page offers %q, want every built-in: %q", offered, names)
	}
	for _, name := range names {
		before := p.runs()
		p.do(fmt.Sprintf(`(() => { const s = document.getElementById('builtin'); s.value = %s; s.dispatchEvent(new Event('change', {bubbles: true})); })()`, js(name)))
		if state := p.waitRun(before); state != "ready" {
			t.Errorf("%s: the page is %q: %s", name, state, eval[string](p, `document.getElementById('yaml-error').textContent`))
			continue
		}
		if got := eval[string](p, `window.ratelimLast.scenario.name`); got != name {
			t.Errorf("picked %s, the page ran %s", name, got)
			continue
		}
		want, _ := native(t, web.State{Builtin: name})
		sameJSON(t, name, p.result(), want)
		p.sameBytes(t, name, want)
	}
}

// Moving the burst slider re-runs: the result changes, the permalink
// carries the new burst, and the numbers are simrun's with that setting.
func TestSliderChangesTheRunAndTheLink(t *testing.T) {
	p := openPage(t, fileURL(t, ""), ownFiles)
	const burst = `#controls [data-setting="limit.burst"]`
	if !eval[bool](p, fmt.Sprintf(`!!document.querySelector(%s)`, js(burst))) {
		t.Fatalf("the default built-in has no burst control (%s)", burst)
	}
	if typ := eval[string](p, fmt.Sprintf(`document.querySelector(%s).type`, js(burst))); typ != "range" {
		t.Errorf("the burst control is a %q input, want a range (a slider)", typ)
	}
	firstResult, firstHash := p.result(), eval[string](p, `location.hash`)
	filePosition := eval[string](p, fmt.Sprintf(`document.querySelector(%s).value`, js(burst)))
	// The slider's lowest position: a burst unlike any built-in's own.
	before := p.runs()
	p.do(fmt.Sprintf(`(() => { const i = document.querySelector(%s); i.focus(); i.value = i.min; i.dispatchEvent(new Event('input', {bubbles: true})); i.dispatchEvent(new Event('change', {bubbles: true})); })()`, js(burst)))
	if state := p.waitRun(before); state != "ready" {
		t.Fatalf("after the slider the page is %q: %s", state, eval[string](p, `document.getElementById('yaml-error').textContent`))
	}
	if bytes.Equal(p.result(), firstResult) {
		t.Errorf("the burst changed and the result did not")
	}
	hash := eval[string](p, `location.hash`)
	if hash == firstHash {
		t.Errorf("the burst changed and the permalink did not: %s", hash)
	}
	s := p.state()
	if !slices.ContainsFunc(s.Settings, func(x web.Setting) bool { return x.Name == "limit.burst" }) {
		t.Fatalf("the permalink carries no burst: %+v", s)
	}
	want, _ := native(t, s)
	sameJSON(t, fmt.Sprintf("%s with %+v", s.Builtin, s.Settings), p.result(), want)
	p.sameBytes(t, fmt.Sprintf("%s with %+v", s.Builtin, s.Settings), want)

	// And back to the file's own burst, as a hand or a key does it: input
	// events, then change on release. The setting goes, and the run is
	// the file's again.
	before = p.runs()
	p.do(fmt.Sprintf(`(() => { const i = document.querySelector(%s); i.value = %s; i.dispatchEvent(new Event('input', {bubbles: true})); i.dispatchEvent(new Event('change', {bubbles: true})); })()`, js(burst), js(filePosition)))
	p.waitRun(before)
	if got := p.state(); slices.ContainsFunc(got.Settings, func(x web.Setting) bool { return x.Name == "limit.burst" }) {
		t.Errorf("the slider back at the file's burst (position %s), the permalink still sets it: %+v (the slider shows %s)",
			filePosition, got.Settings, eval[string](p, fmt.Sprintf(`document.querySelector(%s).value`, js(burst))))
	}
	if !bytes.Equal(p.result(), firstResult) {
		t.Errorf("the slider back at the file's burst, the result is not the file's")
	}
}

// A permalink made by web.Encode opens on its scenario and settings, and
// the page shows simrun's numbers for them: a built-in with settings, and
// a scenario's own text (a file pasted or loaded).
func TestPermalinkOpensTheSameRun(t *testing.T) {
	text, err := os.ReadFile(filepath.Join("..", "..", "scenarios", "builtin", "nat.yaml"))
	if err != nil {
		t.Fatal(err)
	}
	mine := strings.Replace(string(text), "name: nat", "name: my-nat", 1)
	for _, s := range []web.State{
		{Builtin: "runaway-healthcheck", Settings: []web.Setting{{Name: "limit.burst", Value: "7"}, {Name: "algorithm", Value: "gcra"}}},
		{Builtin: "store-outage", Settings: []web.Setting{{Name: "on-error", Value: "fail-closed"}}},
		{YAML: mine, FileName: "mine.yaml", Settings: []web.Setting{{Name: "servers", Value: "3"}}},
	} {
		frag, err := web.Encode(s)
		if err != nil {
			t.Fatal(err)
		}
		t.Run(s.Builtin+s.FileName, func(t *testing.T) {
			p := openPage(t, fileURL(t, frag), ownFiles)
			if state := eval[string](p, `document.body.dataset.state`); state != "ready" {
				t.Fatalf("the page is %q: %s", state, eval[string](p, `document.getElementById('yaml-error').textContent`))
			}
			if got := p.state(); !reflect.DeepEqual(got, s) {
				t.Errorf("the page's permalink is %+v, want the one it was opened with, %+v", got, s)
			}
			want, _ := native(t, s)
			sameJSON(t, fmt.Sprintf("%+v", s.Settings), p.result(), want)
			p.sameBytes(t, fmt.Sprintf("%+v", s.Settings), want)
			if s.YAML != "" && eval[string](p, `document.getElementById('yaml').value`) != s.YAML {
				t.Errorf("#yaml does not hold the link's scenario text")
			}
		})
	}
}

// A mistake typed into the YAML shows the file's line in the page, as
// `ratelim sim` prints it, and the page says it failed.
func TestBadYAMLShowsFileAndLine(t *testing.T) {
	p := openPage(t, fileURL(t, ""), ownFiles)
	text := eval[string](p, `document.getElementById('yaml').value`)
	if !strings.Contains(text, "burst:") {
		t.Fatalf("the default's text has no burst: to break:\n%s", text)
	}
	lines := strings.Split(text, "\n")
	for i, l := range lines {
		if strings.Contains(l, "burst:") {
			lines[i] = l[:strings.Index(l, "burst:")] + "burst: -5"
			break
		}
	}
	bad := strings.Join(lines, "\n")
	_, nativeErr := scenarios.Parse(web.DefaultFileName, []byte(bad))
	var se *scenarios.Error
	if !errors.As(nativeErr, &se) || se.Line == 0 {
		t.Fatalf("the broken text is not a file:line error natively: %v", nativeErr)
	}
	before := p.runs()
	// As a paste does: the text replaced, then one input event.
	p.do(fmt.Sprintf(`(() => { const ta = document.getElementById('yaml'); ta.focus(); ta.value = %s; ta.dispatchEvent(new Event('input', {bubbles: true})); })()`, js(bad)))
	if state := p.waitRun(before); state != "error" {
		t.Fatalf("after a bad burst the page is %q, want error", state)
	}
	shown := eval[string](p, `document.getElementById('yaml-error').textContent`)
	want := fmt.Sprintf("%s:%d", web.DefaultFileName, se.Line)
	if !strings.Contains(shown, want) {
		t.Errorf("#yaml-error says %q, want it to name %s (natively: %v)", shown, want, nativeErr)
	}
	if !strings.Contains(shown, "limit.burst") {
		t.Errorf("#yaml-error says %q, want the field, limit.burst", shown)
	}
}

// Predict, then see: with the mode on, the results are hidden until the
// guess is revealed, and the answer shown is the question's, natively.
func TestPredictThenSee(t *testing.T) {
	var name string
	var question *scenarios.Question
	for _, n := range scenarios.Builtin() {
		if f, err := scenarios.Open(n); err == nil && f.Question != nil {
			name, question = n, f.Question
			break
		}
	}
	if question == nil {
		t.Fatal("no built-in asks a question")
	}
	_, out := native(t, web.State{Builtin: name})
	answer, err := question.Answer(out.Result)
	if err != nil {
		t.Fatal(err)
	}
	frag, err := web.Encode(web.State{Builtin: name})
	if err != nil {
		t.Fatal(err)
	}
	p := openPage(t, fileURL(t, frag), ownFiles)
	if !eval[bool](p, `!document.getElementById('results').hidden`) {
		t.Errorf("the results are hidden before predicting")
	}
	if eval[bool](p, `document.getElementById('predict-on').disabled`) {
		t.Fatalf("%s asks a question (scenarios), and the page's predict mode is off: %s (window.ratelimLast.question is %s)",
			name, eval[string](p, `document.getElementById('predict-why').textContent`), eval[string](p, `JSON.stringify(window.ratelimLast.question || null)`))
	}
	p.do(`document.getElementById('predict-on').click()`)
	if !eval[bool](p, `document.getElementById('results').hidden`) {
		t.Fatalf("predicting, the results are shown")
	}
	if got, want := eval[string](p, `document.getElementById('question').textContent`), question.Text(out.File); !strings.Contains(got, want) {
		t.Errorf("#question says %q, want %q", got, want)
	}
	if !p.state().Predict {
		t.Errorf("the permalink does not carry the predict mode: %+v", p.state())
	}
	// A guess: the last client offered for a pick, else a number.
	if eval[string](p, `document.getElementById('guess').tagName`) == "SELECT" {
		p.do(`(() => { const g = document.getElementById('guess'); g.value = g.options[g.options.length - 1].value; g.dispatchEvent(new Event('change', {bubbles: true})); })()`)
	} else {
		p.do(`(() => { const g = document.getElementById('guess'); g.value = '1'; g.dispatchEvent(new Event('input', {bubbles: true})); })()`)
	}
	if !eval[bool](p, `document.getElementById('answer').textContent.trim() === ''`) {
		t.Errorf("the answer shows before the reveal: %q", eval[string](p, `document.getElementById('answer').textContent`))
	}
	p.do(`document.getElementById('reveal').click()`)
	shown := eval[string](p, `document.getElementById('answer').textContent`)
	if !strings.Contains(shown, answer.Text) {
		t.Errorf("#answer says %q, want the run's answer %q", shown, answer.Text)
	}
	if got := eval[string](p, `window.ratelimLast.question.answer.text`); got != answer.Text {
		t.Errorf("the page's answer is %q, natively %q", got, answer.Text)
	}
	if eval[bool](p, `document.getElementById('results').hidden`) {
		t.Errorf("revealed, the results are still hidden")
	}
}

// Served on loopback by Handler (as ratelim web serves it), the page
// runs under the site's Content-Security-Policy and requests nothing but
// the server's files.
func TestPageOverLoopback(t *testing.T) {
	needBrowser(t)
	srv := httptest.NewServer(shared.site.Handler())
	defer srv.Close()
	frag, err := web.Encode(web.State{Builtin: "window-boundary"})
	if err != nil {
		t.Fatal(err)
	}
	p := openPage(t, srv.URL+"/#"+frag, func(u string) bool {
		return strings.HasPrefix(u, srv.URL+"/") || strings.HasPrefix(u, "data:") || strings.HasPrefix(u, "blob:")
	})
	if state := eval[string](p, `document.body.dataset.state`); state != "ready" {
		t.Fatalf("the page is %q over loopback: %s", state, eval[string](p, `document.getElementById('yaml-error').textContent`))
	}
	want, _ := native(t, web.State{Builtin: "window-boundary"})
	sameJSON(t, "window-boundary over loopback", p.result(), want)
	p.sameBytes(t, "window-boundary over loopback", want)
}

// timelineInView is "" when #timeline's svg is displayed, has a size,
// lies within the viewport's width and starts within its height; else
// what is wrong, with the numbers.
const timelineInView = `(() => {
  const svg = document.querySelector('#timeline svg');
  if (!svg) return 'no #timeline svg';
  const r = svg.getBoundingClientRect();
  const style = getComputedStyle(svg);
  const at = ' (svg at x ' + r.left + '..' + r.right + ', y ' + r.top + '..' + r.bottom + ' in ' + innerWidth + '×' + innerHeight + ')';
  if (style.display === 'none' || style.visibility !== 'visible' || svg.closest('[hidden]')) return 'hidden' + at;
  if (r.width < 100 || r.height < 50) return 'too small' + at;
  if (r.left < 0 || r.right > innerWidth + 1) return 'wider than the screen' + at;
  if (r.top < 0 || r.top >= innerHeight) return 'below or above the screen' + at;
  return '';
})()`

// Screenshots of the page at the two sizes a projector and a laptop
// show, written to -screenshots (to look at), each checked to be a
// picture of that size with the timeline's svg shown within the screen;
// with -update, the 1280×800 one is docs/playground.png.
func TestScreenshots(t *testing.T) {
	dir := *screenshots
	if dir == "" {
		dir = t.TempDir()
	}
	frag, err := web.Encode(web.State{Builtin: "runaway-healthcheck"})
	if err != nil {
		t.Fatal(err)
	}
	p := openPage(t, fileURL(t, frag), ownFiles)
	for _, size := range []struct{ w, h int64 }{{1280, 800}, {1920, 1080}} {
		if err := chromedp.Do(p.ctx, chromedp.EmulateViewport(size.w, size.h)); err != nil {
			t.Fatal(err)
		}
		// One frame for the layout at the new size.
		p.await(`new Promise(r => requestAnimationFrame(() => setTimeout(r, 50)))`)
		// The timeline is what a class looks at: drawn, and starting
		// inside the screen, neither cut off at the side nor below it.
		seen := eval[string](p, timelineInView)
		if seen != "" {
			t.Errorf("at %d×%d the timeline is not in view: %s", size.w, size.h, seen)
		}
		shot, err := chromedp.Run(p.ctx, chromedp.CaptureScreenshot())
		if err != nil {
			t.Fatal(err)
		}
		cfg, err := png.DecodeConfig(bytes.NewReader(shot))
		if err != nil || int64(cfg.Width) != size.w || int64(cfg.Height) != size.h {
			t.Errorf("the %d×%d screenshot is %d×%d, %v", size.w, size.h, cfg.Width, cfg.Height, err)
		}
		path := filepath.Join(dir, fmt.Sprintf("playground-%dx%d.png", size.w, size.h))
		if err := os.WriteFile(path, shot, 0o644); err != nil {
			t.Fatal(err)
		}
		t.Logf("wrote %s", path)
		if *update && size.w == 1280 {
			docs := filepath.Join("..", "..", "docs", "playground.png")
			if err := os.WriteFile(docs, shot, 0o644); err != nil {
				t.Fatal(err)
			}
			t.Logf("wrote %s", docs)
		}
	}
}

// A choice list lists every value its field takes until it opens, and
// then the values that run with the page's settings, as web.Choices
// finds them: two-regions' topology narrows to regions alone (its file
// names regions, which no other kind reads), its algorithm loses
// concurrency (a rate's file). Download YAML's text is web.Written's.
func TestChoicesNarrowAsTheyOpen(t *testing.T) {
	s := web.State{Builtin: "two-regions", Settings: []web.Setting{{Name: "limit.window", Value: "2h"}}}
	frag, err := web.Encode(s)
	if err != nil {
		t.Fatal(err)
	}
	p := openPage(t, fileURL(t, frag), ownFiles)
	var pg web.Playground
	options := func(name string) []string {
		return eval[[]string](p, fmt.Sprintf(`[...document.querySelector('#controls select[data-setting=%s]').options].map(o => o.value)`, js(name)))
	}
	for _, name := range []string{"topology", "algorithm"} {
		before := options(name)
		want := pg.Choices(s, name, false)
		if want.Error != nil {
			t.Fatalf("web.Choices(%s): %s", name, want.Error.Text)
		}
		if len(before) <= len(want.Choices) {
			t.Errorf("%s lists %d values before it opens, want every value its field takes (more than the %d that run)", name, len(before), len(want.Choices))
		}
		// As a mouse opens it: mousedown, then focus.
		p.do(fmt.Sprintf(`(() => { const s = document.querySelector('#controls select[data-setting=%s]'); s.dispatchEvent(new MouseEvent('mousedown', {bubbles: true})); s.focus(); })()`, js(name)))
		if got := options(name); !slices.Equal(got, want.Choices) {
			t.Errorf("%s opened lists %v, web.Choices says %v", name, got, want.Choices)
		}
		if v := eval[string](p, fmt.Sprintf(`document.querySelector('#controls select[data-setting=%s]').value`, js(name))); !slices.Contains(want.Choices, v) {
			t.Errorf("%s shows %q after it opened, not one of %v", name, v, want.Choices)
		}
	}
	// Run B's value list and its suggested value are of those that run
	// with A's settings: B is A and one setting.
	algorithms := pg.Choices(s, "algorithm", true)
	p.do(`(() => { const s = document.getElementById('vs-setting'); s.value = 'algorithm'; s.dispatchEvent(new Event('change', {bubbles: true})); })()`)
	if got := eval[[]string](p, `[...document.getElementById('vs-choices').options].map(o => o.value)`); !slices.Equal(got, algorithms.Choices) {
		t.Errorf("run B's algorithm values %v, web.Choices says %v", got, algorithms.Choices)
	}
	if b := eval[string](p, `document.getElementById('vs-value').value`); !slices.Contains(algorithms.Choices, b) {
		t.Errorf("run B's suggested algorithm %q is not one of %v", b, algorithms.Choices)
	}
	// Download YAML, pressed: the file it saves is web.Written's for the
	// run shown.
	w := pg.Written(s)
	if w.Error != nil {
		t.Fatalf("web.Written: %s", w.Error.Text)
	}
	p.do(`(() => { const made = URL.createObjectURL; URL.createObjectURL = (blob) => { blob.text().then((t) => { window.zzSaved = t; }); return made(blob); }; document.getElementById('download-yaml').click(); })()`)
	if _, err := chromedp.Run(p.ctx, chromedp.Poll[bool](`typeof window.zzSaved === 'string'`, chromedp.WithPollingInterval(20*time.Millisecond), chromedp.WithPollingTimeout(time.Minute))); err != nil {
		t.Fatalf("Download YAML saved nothing: %v (note: %q)", err, eval[string](p, `document.getElementById('download-note').textContent`))
	}
	if got := eval[string](p, `window.zzSaved`); got != w.YAML {
		t.Errorf("Download YAML saved %d bytes, web.Written's text is %d: not the same", len(got), len(w.YAML))
	}
}

// Turning side by side on runs B at a value B takes, and one that is not
// A's: slow-endpoint's algorithm, concurrency, is the only one that uses
// its limit (its neighbour in the full list, x-time-rate, fails as B),
// so B moves to a slider, at another value.
func TestSideBySideSuggestsAValueThatRuns(t *testing.T) {
	s := web.State{Builtin: "slow-endpoint"}
	frag, err := web.Encode(s)
	if err != nil {
		t.Fatal(err)
	}
	p := openPage(t, fileURL(t, frag), ownFiles)
	var pg web.Playground
	forB := pg.Choices(s, "algorithm", true)
	if forB.Error != nil {
		t.Fatal(forB.Error.Text)
	}
	before := p.runs()
	// As a user does it: the box ticked, B's setting the first offered.
	if first := eval[string](p, `document.getElementById('vs-setting').value`); first != "algorithm" {
		t.Fatalf("B's first setting is %q, want algorithm (the limit's controls come first)", first)
	}
	p.do(`document.getElementById('vs-on').click()`)
	if state := p.waitRun(before); state != "ready" {
		t.Fatalf("side by side on: the page is %q: %s", state, eval[string](p, `document.getElementById('yaml-error').textContent + ' ' + (document.getElementById('vs-error') || {}).textContent`))
	}
	got := p.state()
	if len(got.Vs) != 1 {
		t.Fatalf("run B is %+v, want one setting", got.Vs)
	}
	b := got.Vs[0]
	if b.Name == "algorithm" && !slices.Contains(forB.Choices, b.Value) {
		t.Errorf("run B's algorithm is %q, not one of %v", b.Value, forB.Choices)
	}
	if labels := eval[string](p, `(window.ratelimLast.vs || {}).labelA + ' | ' + (window.ratelimLast.vs || {}).labelB`); strings.Count(labels, "|") != 1 || strings.TrimSpace(strings.Split(labels, "|")[0]) == strings.TrimSpace(strings.Split(labels, "|")[1]) {
		t.Errorf("side by side on put the run beside itself: %s (B %+v)", labels, b)
	}
}

// After the first run the page runs its scenario again while it sits
// idle (warmUp: the browser compiles the simulator's hot code to its
// fastest only after a dozen runs), and stops at the first thing the
// user does; the run it shows, and the frames the scrubber cuts from
// the simulator's last run, are the first run's still.
func TestPageWarmsUpUntilTheUserActs(t *testing.T) {
	p := openPage(t, fileURL(t, ""), ownFiles)
	first := p.result()
	frameBefore := eval[string](p, `ratelim.frame(12)`)
	if _, err := chromedp.Run(p.ctx, chromedp.Poll[bool](`Number(document.body.dataset.warmRuns || 0) >= 1`,
		chromedp.WithPollingInterval(20*time.Millisecond), chromedp.WithPollingTimeout(time.Minute))); err != nil {
		t.Fatalf("no warm-up runs a minute after the page opened: %v (data-warm-runs %q)", err, eval[string](p, `document.body.dataset.warmRuns || ''`))
	}
	p.do(`window.dispatchEvent(new KeyboardEvent('keydown', {key: 'Tab'}))`)
	stopped := eval[int](p, `Number(document.body.dataset.warmRuns)`)
	p.await(`new Promise((r) => setTimeout(r, 1500))`)
	if now := eval[int](p, `Number(document.body.dataset.warmRuns)`); now != stopped {
		t.Errorf("warm-up ran on after a key was pressed: %d runs, then %d", stopped, now)
	}
	if stopped > 20 {
		t.Errorf("%d warm-up runs, more than the page's 20", stopped)
	}
	if p.runs() != 1 || !bytes.Equal(p.result(), first) {
		t.Errorf("the warm-up went through the page's own runs (data-runs %d, or the result shown changed)", p.runs())
	}
	if got := eval[string](p, `ratelim.frame(12)`); got != frameBefore {
		t.Errorf("the scrubber's frame at 12 s after the warm-up differs from the first run's")
	}
}
