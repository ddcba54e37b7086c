package scenarios

import (
	"github.com/ratelim/ratelim/replay"

	"bytes"
	"errors"
	"fmt"
	"io"
	"math"
	"regexp"
	"slices"
	"strconv"
	"strings"
	"time"
	"unicode/utf8"

	"go.yaml.in/yaml/v3"

	"github.com/ratelim/ratelim/algorithms"
	"github.com/ratelim/ratelim/internal/words"
)

// decoder walks a yaml.Node tree and keeps the first error it finds, with
// the node's line. Every reader below returns a usable zero value after an
// error, so a section reads on and its caller checks d.err once; Parse
// reports the first error only, and stops before any later section could
// trip over a value that failed to read.
type decoder struct {
	file     string
	err      *Error
	patterns int // traffic patterns read, aliases counted each time
	// logs says whether a trace may read its log, from logDir when its
	// path is relative: a file read from disk may, one parsed from
	// memory (a built-in, a fuzzed input) may not.
	logs     bool
	logDir   string
	feeds    int           // logs read, for MaxFeeds
	logsRead []*replay.Log // the logs of the client being read (pattern trace)
	cache    *logCache     // the logs scanned before, by what was asked of them
	// injected are the nodes Apply put into the tree, each with the
	// setting it came from: an error blamed on one names the setting,
	// which has no line in the file.
	injected map[*yaml.Node]*injection
	// blamedSetting says d.err is blamed on a setting's node.
	blamedSetting bool
	// root is the top of the tree being read: a with:'s paths name
	// entries in it.
	root *yaml.Node
	// settingsGiven says the tree holds settings from outside the file
	// (Apply's): a file's own expectation is not checked against the
	// clients and keys they make. Their run (sim's, a sweep's) does not
	// check them, and a setting that renames a client or a log's key
	// (trace.key) would refuse the run for a subject it never asks
	// about; check has read them against the file as written.
	settingsGiven bool
}

// failf records an error at n (its line) for field, unless one is recorded.
func (d *decoder) failf(n *yaml.Node, field, format string, args ...any) {
	if d.err != nil {
		return
	}
	line := 0
	if n != nil {
		line = n.Line
	}
	msg := fmt.Sprintf(format, args...)
	if in := d.injected[n]; in != nil && n != nil {
		d.err, d.blamedSetting = in.blame(field, msg), true
		return
	}
	d.err = &Error{File: d.file, Line: line, Field: field, Msg: msg}
}

func (d *decoder) failed() bool { return d.err != nil }

// readDocument decodes data as exactly one YAML document and returns its
// top node, or records why it cannot.
func (d *decoder) readDocument(data []byte) *yaml.Node {
	dec := yaml.NewDecoder(bytes.NewReader(data))
	var doc yaml.Node
	if err := safeDecode(dec, &doc); err != nil {
		if errors.Is(err, io.EOF) {
			d.failf(&yaml.Node{Line: 1}, "", "the file is empty (want a scenario: name, duration, limit, clients)")
			return nil
		}
		d.syntaxError(data, err)
		return nil
	}
	var next yaml.Node
	switch err := safeDecode(dec, &next); {
	case err == nil:
		d.failf(&next, "", "a second YAML document (want one scenario per file)")
		return nil
	case !errors.Is(err, io.EOF):
		d.syntaxError(data, err)
		return nil
	}
	if len(doc.Content) == 0 {
		d.failf(&yaml.Node{Line: 1}, "", "the file is empty (want a scenario: name, duration, limit, clients)")
		return nil
	}
	return doc.Content[0]
}

// safeDecode is dec.Decode, with a panic inside the YAML library turned
// into an error: no input may crash the loader, whatever the library does.
func safeDecode(dec *yaml.Decoder, n *yaml.Node) (err error) {
	defer func() {
		if r := recover(); r != nil {
			err = fmt.Errorf("yaml: the parser gave up (%v)", r)
		}
	}()
	return dec.Decode(n)
}

var yamlLine = regexp.MustCompile(`^yaml: line (\d+): (.*)$`)

// syntaxError records a YAML syntax error with its line. The library says
// "yaml: line N: ..." for most errors, and leaves the line out when it is
// the first one or when the error is not tied to a position; for the
// latter, the line is found by looking for what the message names.
func (d *decoder) syntaxError(data []byte, err error) {
	msg := err.Error()
	line := 1
	if m := yamlLine.FindStringSubmatch(msg); m != nil {
		line, _ = strconv.Atoi(m[1])
		msg = m[2]
		if parserProblems[msg] {
			// The library numbers the parser's lines from 0 (its
			// scanner's from 1): a parser error names the line above.
			line++
		}
	} else {
		msg = strings.TrimPrefix(msg, "yaml: ")
		line = guessLine(data, msg)
	}
	lines := bytes.Count(data, []byte("\n"))
	if len(data) > 0 && data[len(data)-1] != '\n' {
		lines++
	}
	line = max(1, min(line, lines))
	d.failf(&yaml.Node{Line: line}, "", "not valid YAML: %s (want YAML like that of `ratelim scenarios show runaway-healthcheck`)", msg)
}

// parserProblems are the messages of the YAML library's parser, as opposed
// to its scanner, whose line numbers differ.
var parserProblems = map[string]bool{
	"did not find expected ',' or ']'":       true,
	"did not find expected ',' or '}'":       true,
	"did not find expected '-' indicator":    true,
	"did not find expected <document start>": true,
	"did not find expected <stream-start>":   true,
	"did not find expected key":              true,
	"did not find expected node content":     true,
	"found duplicate %TAG directive":         true,
	"found duplicate %YAML directive":        true,
	"found incompatible YAML document":       true,
	"found undefined tag handle":             true,
}

var unknownAnchor = regexp.MustCompile(`^unknown anchor '(.*)' referenced$`)

func guessLine(data []byte, msg string) int {
	lineOf := func(i int) int { return 1 + bytes.Count(data[:i], []byte("\n")) }
	if m := unknownAnchor.FindStringSubmatch(msg); m != nil {
		if i := bytes.Index(data, []byte("*"+m[1])); i >= 0 {
			return lineOf(i)
		}
	}
	if strings.Contains(msg, "control characters") {
		for i, c := range data {
			if c < 0x20 && c != '\t' && c != '\n' && c != '\r' || c == 0x7f {
				return lineOf(i)
			}
		}
	}
	if strings.Contains(msg, "UTF-8") || strings.Contains(msg, "utf-8") {
		for i := 0; i < len(data); {
			r, size := utf8.DecodeRune(data[i:])
			if r == utf8.RuneError && size <= 1 {
				return lineOf(i)
			}
			i += size
		}
	}
	return 1
}

// resolve follows an alias (*name) to the node it names.
// A missing node reads as null, so that callers need no nil checks.
func resolve(n *yaml.Node) *yaml.Node {
	for i := 0; n != nil && n.Kind == yaml.AliasNode && i < 8; i++ {
		n = n.Alias
	}
	if n == nil {
		return &yaml.Node{Kind: yaml.ScalarNode, Tag: "!!null"}
	}
	return n
}

// describe names what a node is, for "X is not a Y" messages.
func describe(n *yaml.Node) string {
	switch n.Kind {
	case yaml.MappingNode:
		return "a mapping"
	case yaml.SequenceNode:
		return "a list"
	case yaml.ScalarNode:
		if n.ShortTag() == "!!str" {
			return quote(n.Value)
		}
		return short(n.Value)
	}
	return "this"
}

// short cuts s to a length a message can hold.
func short(s string) string {
	if r := []rune(s); len(r) > 40 {
		return string(r[:40]) + "…"
	}
	return s
}

// quote is strconv.Quote of s, short.
func quote(s string) string {
	if r := []rune(s); len(r) > 40 {
		return strconv.Quote(string(r[:40])) + "…"
	}
	return strconv.Quote(s)
}

func isNull(n *yaml.Node) bool {
	return n.Kind == yaml.ScalarNode && n.ShortTag() == "!!null"
}

// notA records that n is not what field wants:
//
//	"fast" is not a rate (want e.g. 100/s)
//	missing value (want a rate, e.g. 100/s)
func (d *decoder) notA(n *yaml.Node, field, what, example string) {
	if isNull(n) {
		d.failf(n, field, "missing value (want %s, e.g. %s)", what, example)
		return
	}
	d.failf(n, field, "%s is not %s (want e.g. %s)", describe(n), what, example)
}

// fields is a YAML mapping read as a record: every key known, none twice.
type fields struct {
	node   *yaml.Node // the mapping, whose line a missing field is blamed on
	path   string     // its field path: "" for the top, "clients[1]"
	keys   map[string]*yaml.Node
	values map[string]*yaml.Node // resolved
	order  []string              // keys in document order
	merged map[*yaml.Node]bool   // mappings already collected: each once, however often merged
	paths  bool                  // a key may be a field's path (object.paths), checked by CheckSettingName
}

// field returns the path of the field name inside f.
func (f *fields) field(name string) string { return join(f.path, name) }

func join(path, name string) string {
	if path == "" {
		return name
	}
	return path + "." + name
}

// has reports whether the mapping sets name.
func (f *fields) has(name string) bool { _, ok := f.values[name]; return ok }

// record reads n as a mapping whose keys must be o's fields; want says
// what the mapping should hold, for the message when n is not one. Merge
// keys (<<: *base) are followed, the mapping's own keys winning, as YAML
// defines them. It returns an empty record after an error.
func (d *decoder) record(n *yaml.Node, path string, o *object, want string) *fields {
	f := &fields{node: n, path: path, keys: map[string]*yaml.Node{}, values: map[string]*yaml.Node{}, merged: map[*yaml.Node]bool{}}
	n = resolve(n)
	if n.Kind != yaml.MappingNode {
		if isNull(n) {
			d.failf(n, path, "missing value (want %s)", want)
		} else {
			d.failf(n, path, "%s is not a mapping (want %s)", describe(n), want)
		}
		return f
	}
	f.node = n
	f.paths = o.paths != ""
	d.collect(f, n, o.names(), 0)
	return f
}

// collect adds n's pairs to f; depth bounds merges of merges.
func (d *decoder) collect(f *fields, n *yaml.Node, known []string, depth int) {
	if f.merged[n] {
		return // merged before, or merging itself: it has nothing new
	}
	f.merged[n] = true
	var merges []*yaml.Node
	own := map[string]int{} // key → line, in this mapping
	for i := 0; i+1 < len(n.Content); i += 2 {
		k, v := n.Content[i], n.Content[i+1]
		if k.Kind == yaml.ScalarNode && k.ShortTag() == "!!merge" {
			merges = append(merges, v)
			continue
		}
		if k.Kind != yaml.ScalarNode {
			d.failf(k, f.path, "%s as a key (want a field name)", describe(resolve(k)))
			return
		}
		name := k.Value
		if line, twice := own[name]; twice {
			if d.injected[k] != nil {
				// A setting's value: it has no lines.
				d.failf(k, f.field(name), "given twice in the value (want it once)")
				return
			}
			d.failf(k, f.field(name), "set twice in one mapping (want it once; the first is at line %d)", line)
			return
		}
		own[name] = k.Line
		if f.paths && (isPath(name) || slices.Contains(wholeFields(known), name)) {
			if err := CheckSettingName(name); err != nil {
				d.failf(k, f.field(short(name)), "%s", settingMsg(err, name))
				return
			}
		} else if !slices.Contains(known, name) {
			msg := "unknown field"
			if s := suggest(name, known); s != "" {
				msg += fmt.Sprintf(", did you mean %q?", s)
			}
			d.failf(k, f.field(short(name)), "%s (want %s)", msg, words.OneOf(known))
			return
		}
		if _, seen := f.values[name]; seen {
			continue // the mapping that merges this one sets it too, and wins
		}
		f.keys[name] = k
		f.values[name] = resolve(v)
		f.order = append(f.order, name)
	}
	for _, m := range merges {
		if depth >= 8 {
			d.failf(m, f.path, "merges nested too deep (want at most 8 levels of <<)")
			return
		}
		m = resolve(m)
		sources := []*yaml.Node{m}
		if m.Kind == yaml.SequenceNode {
			sources = sources[:0]
			for _, s := range m.Content {
				sources = append(sources, resolve(s))
			}
		}
		for _, s := range sources {
			if s.Kind != yaml.MappingNode {
				d.failf(s, join(f.path, "<<"), "%s cannot be merged (want an alias to a mapping, e.g. <<: *defaults)", describe(s))
				return
			}
			d.collect(f, s, known, depth+1)
			if d.failed() {
				return
			}
		}
	}
}

// list reads n as a sequence and returns its items, resolved.
func (d *decoder) list(n *yaml.Node, path, want string) []*yaml.Node {
	n = resolve(n)
	if n.Kind != yaml.SequenceNode {
		if isNull(n) {
			d.failf(n, path, "missing value (want %s)", want)
		} else {
			d.failf(n, path, "%s is not a list (want %s)", describe(n), want)
		}
		return nil
	}
	items := make([]*yaml.Node, len(n.Content))
	for i, c := range n.Content {
		items[i] = resolve(c)
	}
	return items
}

func index(path string, i int) string { return fmt.Sprintf("%s[%d]", path, i) }

// text reads a scalar as a string: any scalar but null will do, so that
// api_key: 12345 is the key "12345".
func (d *decoder) text(n *yaml.Node, field, example string) string {
	if n.Kind != yaml.ScalarNode || isNull(n) {
		d.notA(n, field, "a string", example)
		return ""
	}
	return n.Value
}

// wantFrom is what a number below lo is told: "want at least 1" for a
// count, "want lo to hi" otherwise.
func wantFrom(lo, hi int64) string {
	if lo == 1 {
		return "want at least 1"
	}
	return fmt.Sprintf("want %d to %d", lo, hi)
}

// allDigits is a plain scalar of decimal digits, signed or not.
var allDigits = regexp.MustCompile(`^[-+]?[0-9]+$`)

// integer reads a whole number between lo and hi.
func (d *decoder) integer(n *yaml.Node, field string, lo, hi int64, example string) int64 {
	var v int64
	if n.Kind != yaml.ScalarNode || n.ShortTag() != "!!int" || n.Decode(&v) != nil {
		// Digits past int64 are a whole number still: YAML reads one past
		// uint64 as a float, and a reader would call it "not a whole
		// number" (99999999999999999999 is one, too large).
		if n.Kind == yaml.ScalarNode && (n.ShortTag() == "!!int" || n.ShortTag() == "!!float" && allDigits.MatchString(n.Value)) {
			if strings.HasPrefix(n.Value, "-") {
				d.failf(n, field, "%s is too small (%s)", short(n.Value), wantFrom(lo, hi))
				return 0
			}
			d.failf(n, field, "%s is too large (want at most %d)", short(n.Value), hi)
			return 0
		}
		d.notA(n, field, "a whole number", example)
		return 0
	}
	switch {
	case v < lo:
		d.failf(n, field, "%d is too small (%s)", v, wantFrom(lo, hi))
	case v > hi:
		d.failf(n, field, "%d is too large (want at most %d)", v, hi)
	}
	return v
}

// number reads a finite number, whole or not.
func (d *decoder) number(n *yaml.Node, field, example string) float64 {
	var v float64
	tag := n.ShortTag()
	if n.Kind != yaml.ScalarNode || tag != "!!int" && tag != "!!float" || n.Decode(&v) != nil {
		d.notA(n, field, "a number", example)
		return 0
	}
	if math.IsNaN(v) || math.IsInf(v, 0) {
		d.failf(n, field, "%s is not a finite number (want e.g. %s)", short(n.Value), example)
		return 0
	}
	return v
}

// duration reads a Go duration ("950ms", "1.5s", a bare 0) in whole
// microseconds, the simulator's resolution.
func (d *decoder) duration(n *yaml.Node, field, example string) time.Duration {
	if n.Kind != yaml.ScalarNode || isNull(n) {
		d.notA(n, field, "a duration", example)
		return 0
	}
	v, err := time.ParseDuration(strings.TrimSpace(n.Value))
	if err != nil {
		if _, numErr := strconv.ParseFloat(strings.TrimSpace(n.Value), 64); numErr == nil {
			d.failf(n, field, "%s has no unit (want e.g. %s)", short(n.Value), example)
		} else if h, ok := inHours(strings.TrimSpace(n.Value)); ok {
			d.failf(n, field, "%s is not a duration: units stop at hours (want %s)", quote(n.Value), h)
		} else if durationSyntax.MatchString(strings.TrimSpace(n.Value)) {
			// Written as a duration, past the longest one there is: say
			// so, rather than that it is not one.
			d.failf(n, field, "%s is longer than any duration (want at most %s)", short(n.Value), hours(math.MaxInt64))
		} else {
			d.failf(n, field, "%s is not a duration (want e.g. %s)", quote(n.Value), example)
		}
		return 0
	}
	if v%time.Microsecond != 0 {
		d.failf(n, field, "%s is finer than the simulator's microsecond (want a whole number of µs, e.g. %s)", short(n.Value), example)
		return 0
	}
	return v
}

// durationSyntax is a Go duration as written (time.ParseDuration's
// grammar), whatever its size: what ParseDuration refuses though it
// matches is too long to hold.
var durationSyntax = regexp.MustCompile(`^[-+]?([0-9]*(\.[0-9]*)?(ns|us|µs|μs|ms|s|m|h))+$`)

// inHours rewrites a count of days or weeks ("7d", "2w", "1.5d"), which
// Go durations do not take, in hours ("168h"), for the message that says
// what to write instead.
func inHours(s string) (string, bool) {
	if len(s) < 2 {
		return "", false
	}
	per := map[byte]float64{'d': 24, 'w': 7 * 24}[s[len(s)-1]]
	n, err := strconv.ParseFloat(s[:len(s)-1], 64)
	if per == 0 || err != nil || !(n > 0) || n > 1e6 {
		return "", false
	}
	return strconv.FormatFloat(n*per, 'f', -1, 64) + "h", true
}

// positive reads a duration that must be more than 0.
func (d *decoder) positive(n *yaml.Node, field, example string) time.Duration {
	v := d.duration(n, field, example)
	if !d.failed() && v <= 0 {
		d.failf(n, field, "%s is not positive (want e.g. %s)", short(n.Value), example)
	}
	return v
}

// nonNegative reads a duration that may be 0 but not less.
func (d *decoder) nonNegative(n *yaml.Node, field, example string) time.Duration {
	v := d.duration(n, field, example)
	if !d.failed() && v < 0 {
		d.failf(n, field, "%s is negative (want 0 or more, e.g. %s)", short(n.Value), example)
	}
	return v
}

// MaxRTT bounds a round trip to the store: past a minute no request
// would wait for its limiter, and the figures would mean nothing.
const MaxRTT = time.Minute

// roundTrip reads a round trip: 0 to MaxRTT.
func (d *decoder) roundTrip(n *yaml.Node, field, example string) time.Duration {
	v := d.nonNegative(n, field, example)
	if !d.failed() && v > MaxRTT {
		d.failf(n, field, "%s is longer than any store round trip a limiter could wait for (want at most %s, e.g. %s)", short(n.Value), MaxRTT, example)
	}
	return v
}

// rate reads N/s, N/m, N/h, N/<duration> or a bare N (per second), as
// algorithms.ParseRate does; zero allows 0 (a ramp may start from nothing).
func (d *decoder) rate(n *yaml.Node, field string, zero bool) algorithms.Rate {
	if n.Kind != yaml.ScalarNode || isNull(n) {
		d.notA(n, field, "a rate", "100/s")
		return algorithms.Rate{}
	}
	s := strings.TrimSpace(n.Value)
	num, unit, hasUnit := strings.Cut(s, "/")
	if zero && strings.TrimSpace(num) == "0" {
		one := "1"
		if hasUnit {
			one += "/" + unit
		}
		if r, err := algorithms.ParseRate(one); err == nil {
			return algorithms.Rate{N: 0, Per: r.Per}
		}
	}
	r, err := algorithms.ParseRate(s)
	if err != nil {
		count, numErr := strconv.ParseInt(strings.TrimSpace(num), 10, 64)
		switch {
		case errors.Is(numErr, strconv.ErrRange):
			d.failf(n, field, "%s has too large a count (want at most %d a period, e.g. 100/s)", quote(n.Value), int64(math.MaxInt64))
		case numErr == nil && count <= 0 && zero:
			d.failf(n, field, "%s is negative (want 0 or more, e.g. 100/s)", quote(n.Value))
		case numErr == nil && count <= 0:
			d.failf(n, field, "%s is not a positive rate (want e.g. 100/s)", quote(n.Value))
		case numErr == nil && hasUnit:
			d.failf(n, field, "%s has an unknown unit %s (want s, m, h or a duration, e.g. 100/s)", quote(n.Value), quote(strings.TrimSpace(unit)))
		default:
			d.failf(n, field, "%s is not a rate (want e.g. 100/s)", quote(n.Value))
		}
		return algorithms.Rate{}
	}
	if r.Per%time.Microsecond != 0 || r.Per < time.Microsecond {
		d.failf(n, field, "%s has a period finer than the simulator's microsecond (want e.g. 100/s)", quote(n.Value))
		return algorithms.Rate{}
	}
	return r
}

// choice reads one of choices, suggesting the closest on a typo.
func (d *decoder) choice(n *yaml.Node, field, what string, choices []string) string {
	if n.Kind != yaml.ScalarNode || isNull(n) {
		d.notA(n, field, "a "+what, choices[0])
		return ""
	}
	if !slices.Contains(choices, n.Value) {
		d.failf(n, field, "%s", unknown(what, n.Value, choices))
		return ""
	}
	return n.Value
}
