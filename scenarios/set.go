package scenarios

import (
	"cmp"
	"context"
	"errors"
	"fmt"
	"io"
	"os"
	"slices"
	"strconv"
	"strings"
	"sync"
	"time"

	"go.yaml.in/yaml/v3"

	"github.com/ratelim/ratelim/internal/words"
	"github.com/ratelim/ratelim/replay"
)

// Setting is one field set over a scenario file's own from outside it.
type Setting struct {
	// Name is the setting as typed: an override name (duration, servers,
	// on-error), a short form (rate, burst, window: the limit's), or a
	// dotted path into the file (limit.burst, topology.failover_after,
	// clients[web].traffic.rate, limits[hourly].rate, limits[1].rate,
	// faults[0].start).
	Name string
	// Value is the text as typed, read by the field's own reader as a
	// YAML value: 5/s, 20, or {pattern: constant, rate: 5/s}.
	Value string
	// Flag is how errors name it: "--burst", "--vs limit.burst",
	// "with.limit.burst", "sweep burst". Empty: the Name.
	Flag string
}

// shortForms are the settings named by one word that stand for a field of
// the limit: --rate is limit.rate.
var shortForms = []string{"rate", "burst", "window"}

// Apply returns f with every setting in place of the file's own: its
// Scenario and Expect read again from the file's text so changed. A path
// (and a short form) is set in the file's tree before it is read, so its
// value is read, bounded and cross-checked by the file's own readers, and
// an error blamed on it names the setting's Flag rather than a line; an
// error the setting causes elsewhere (a partition's groups that no longer
// name every server) names both. So are servers, seed, balancer and
// wall-clock (treeOverrides). The other override names (OverrideNames)
// are applied afterwards, as Override does, since some have a meaning for
// the whole scenario (a shorter duration cuts the faults to it) and the
// rest are read against the topology and duration those set. Two of sets
// that set one field however spelled (burst and limit.burst, on_error and
// topology.on_error, clients[web] and clients[0]), or one a field that
// holds the other's (limit and limit.burst), are refused: SettingTarget
// says what each sets. f is not changed; Apply of a file
// Apply returned adds to the settings it was made with (Apply(Apply(f, a),
// b) is Apply(f, a then b)), so a --vs or a sweep's value goes on top of
// the flags. An expectation a setting puts in the file has no line (0).
//
// A list entry is named by its name: (limits, clients, regions) or by
// its index, clients as written, before count: expands them. Setting a
// field inside an entry that an alias repeats, or one a merge key (<<:)
// brings, changes that place alone: the path is copied into the mapping
// that holds it, never set in the anchor.
func Apply(f *File, sets []Setting) (*File, error) {
	// Applied to a file Apply returned, the settings go after those it
	// was made with, on the file as read.
	root := f
	given := sets
	sets = slices.Clone(sets) // the caller's are not changed
	if f.base != nil {
		root = f.base
		sets = append(slices.Clone(f.applied), sets...)
	}
	var paths []Setting
	over := map[string]*yaml.Node{}
	flags := map[string]string{}
	for i, s := range sets {
		if s.Flag == "" {
			s.Flag = s.Name
			sets[i] = s
		}
		if err := checkSetting(s.Name, s.Flag); err != nil {
			return nil, err
		}
		if overrideName(s.Name) == "topology" && isMapping(s.Value) {
			// The file's topology: mapping, whole (--set
			// 'topology={kind: shared, rtt: 1ms}'): set in the tree as
			// a path is; --topology KIND is the kind alone.
			paths = append(paths, s)
			continue
		}
		if canon := overrideName(s.Name); canon != "" && treeOverrides[canon] {
			// One field of the file, with no meaning beyond it: set in
			// the tree, read and cross-checked as the file's (a
			// partition's groups against the servers).
			s.Name = settingKey(canon)
			paths = append(paths, s)
			continue
		}
		if canon := overrideName(s.Name); canon != "" {
			// Read as a path's value is: --servers ' 2' as --set
			// 'limit.burst= 5', and nothing as missing.
			v, err := parseValue(s.Value)
			if err != nil {
				return nil, &Error{Field: s.Flag, Msg: err.Error()}
			}
			over[canon], flags[canon] = v, s.Flag
			continue
		}
		paths = append(paths, s)
	}
	// Within one call, a field is set once: two settings of it, given
	// together, would leave one of them unused.
	mine := sets[len(sets)-len(given):]
	var tree *yaml.Node
	if slices.ContainsFunc(mine, func(s Setting) bool { return needsTree(s.Name) }) {
		tree = documentOf(root.Source)
	}
	if err := checkTargets(tree, mine); err != nil {
		return nil, err
	}
	out := *root
	out.base, out.applied = root, slices.Clone(sets)
	if len(paths) > 0 || root.unread {
		next, err := root.reread(paths)
		if err != nil {
			return nil, err
		}
		out.Scenario, out.Expect, out.Question, out.unread = next.Scenario, next.Expect, next.Question, false
		if !root.unread {
			// Read again from the text whenever set again: the text
			// will do, not the scenario as first read.
			out.base = root.unreadCopy()
		}
	}
	if len(over) > 0 {
		sc, err := overrideNodes(out.Scenario, over, func(name string) string {
			if fl, ok := flags[strings.ReplaceAll(name, "_", "-")]; ok {
				return fl
			}
			return FlagField(name)
		})
		if err != nil {
			return nil, err
		}
		out.Scenario = sc
	}
	// A setting of a field the run does not read would change nothing:
	// refused against the run as made, its algorithm and topology those
	// the settings leave (--burst with --algorithm fixed-window).
	if err := checkRead(tree, out.Scenario, mine); err != nil {
		return nil, err
	}
	return &out, nil
}

// treeOverrides are the override names set in the file's tree, as a
// path is: each is one field of the file whose reader needs nothing the
// others change. The rest are applied after the tree is read: algorithm,
// topology, key, duration and shadow have a meaning for the whole
// scenario, and step, store, rtt, on-error, sync-interval and
// replication-lag are read against the topology and duration those set
// (--topology synced --sync-interval 10ms on a shared file).
var treeOverrides = map[string]bool{"servers": true, "seed": true, "balancer": true, "wall-clock": true}

// Value is the text a setting's name has in f: the value Apply's
// settings leave there (f's text with every setting f was made with in
// place, read at the field the name stands for), or else what the file
// writes there (a mapping or list in flow style); false when neither sets
// it (the field's default holds). An override name's value is the file's
// field of that name (on-error is topology.on_error), a short form's the
// limit's, and clients[web] the entry named web: --set
// 'limit={rate: 1/s, burst: 3}' makes burst 3, and a --vs
// clients[0].traffic.rate names what clients[hammer].traffic set.
func Value(f *File, name string) (string, bool) {
	root := f
	if f.base != nil {
		root = f.base
	}
	tree := documentOf(root.Source)
	if tree == nil {
		return "", false
	}
	d := &decoder{injected: map[*yaml.Node]*injection{}}
	for _, s := range f.applied {
		// As a field's path, the override names too: servers, or
		// on-error's topology.on_error. One that fails (algorithm on a
		// file of limits:) leaves the tree as it was.
		s.Name = settingKey(s.Name)
		_ = d.set(tree, s)
	}
	return valueAt(tree, name)
}

// valueAt is Value's reading of name in tree, a file's top node.
func valueAt(tree *yaml.Node, name string) (string, bool) {
	steps, err := parsePath(settingKey(name))
	if err != nil {
		return "", false
	}
	n := tree
	for _, st := range steps {
		if n = lookup(n, fieldSpelling(st.name), 0); n == nil {
			return "", false
		}
		for _, sel := range st.sels {
			n = resolve(n)
			if n.Kind != yaml.SequenceNode {
				return "", false
			}
			i, err := entry(n, "", sel)
			if err != nil {
				return "", false
			}
			n = n.Content[i]
		}
	}
	return settingText(resolve(n))
}

// documentOf is the top node of a file's text, nil when it has none.
func documentOf(src []byte) *yaml.Node {
	var doc yaml.Node
	if safeDecode(yaml.NewDecoder(strings.NewReader(string(src))), &doc) != nil || len(doc.Content) == 0 {
		return nil
	}
	return doc.Content[0]
}

// SettingTarget is the field a setting's name sets in f, as one path
// however it is spelled: burst and limit.burst are limit.burst, on_error,
// on-error and topology.on_error are topology.on_error, and
// clients[hammer].traffic.rate is clients[0].traffic.rate when hammer is
// the file's first client. Two settings with one target, or one whose
// target holds the other's (limit and limit.burst), set one field twice.
// An entry the file does not name is left as written (Apply says why).
func SettingTarget(f *File, name string) (string, error) {
	if f.base != nil {
		f = f.base
	}
	var tree *yaml.Node
	if needsTree(name) {
		tree = documentOf(f.Source)
	}
	return target(tree, name)
}

// needsTree says whether a name chooses a list entry by its name:, which
// only the file's tree turns into an index.
func needsTree(name string) bool {
	steps, err := parsePath(settingKey(name))
	if err != nil {
		return false
	}
	for _, st := range steps {
		for _, sel := range st.sels {
			if _, err := strconv.Atoi(sel); err != nil {
				return true
			}
		}
	}
	return false
}

// target is SettingTarget in the file's tree; root nil leaves entries
// chosen by name as written.
func target(root *yaml.Node, name string) (string, error) {
	steps, err := parsePath(settingKey(name))
	if err != nil {
		return "", err
	}
	var path string
	cur := root
	for _, st := range steps {
		field := fieldSpelling(st.name)
		path = join(path, field)
		if cur != nil {
			cur = lookup(cur, field, 0)
		}
		for _, sel := range st.sels {
			i, err := strconv.Atoi(sel)
			if err != nil && cur != nil && resolve(cur).Kind == yaml.SequenceNode {
				if j, err2 := entry(resolve(cur), path, sel); err2 == nil {
					i, err = j, nil
				}
			}
			if err != nil {
				path += "[" + sel + "]"
				cur = nil
				continue
			}
			path = index(path, i)
			if cur != nil && resolve(cur).Kind == yaml.SequenceNode && i >= 0 && i < len(resolve(cur).Content) {
				cur = resolve(cur).Content[i]
			} else {
				cur = nil
			}
		}
	}
	return path, nil
}

// holds reports whether the field at path a is b or holds it: limit
// holds limit.burst, clients[0] clients[0].count.
func holds(a, b string) bool {
	return a == b || strings.HasPrefix(b, a+".") || strings.HasPrefix(b, a+"[")
}

// checkTargets refuses two of sets that set one field, or one a field
// the other holds: --vs on_error and --vs topology.on_error, --set
// limit={…} and --burst. root nil: entries named by name as written.
func checkTargets(root *yaml.Node, sets []Setting) error {
	targets := make([]string, len(sets))
	for i, s := range sets {
		t, err := target(root, s.Name)
		if err != nil {
			return nil // checkSetting says why
		}
		targets[i] = t
		for j := range i {
			if sets[j].Flag == s.Flag && targets[j] == t {
				return &Error{Field: s.Flag, Msg: "given twice (want it once)"}
			}
			if msg := twice(sets[j].Flag, targets[j], t); msg != "" {
				return &Error{Field: s.Flag, Msg: msg}
			}
		}
	}
	return nil
}

// twice is the message for a setting of target b given after one (named
// flag) of target a, or "" when they set different fields.
func twice(flag, a, b string) string {
	switch {
	case a == b:
		return fmt.Sprintf("%s already sets it (want it once)", flag)
	case holds(a, b):
		return fmt.Sprintf("%s already sets %s, which holds it (want one of them)", flag, a)
	case holds(b, a):
		return fmt.Sprintf("%s already sets %s, within it (want one of them)", flag, a)
	}
	return ""
}

// settingKey is the field a setting's name stands for, as a path: burst
// is limit.burst, on-error topology.on_error, failover-after
// failover_after.
func settingKey(name string) string {
	if slices.Contains(shortForms, name) {
		return "limit." + name
	}
	if canon := overrideName(name); canon != "" {
		if p, ok := overridePaths[canon]; ok {
			return p
		}
		return canon
	}
	// In the fields' names alone: an entry's name (clients[batch-{i}])
	// is the file's.
	steps, err := parsePath(name)
	if err != nil {
		return name
	}
	for i := range steps {
		steps[i].name = strings.ReplaceAll(steps[i].name, "-", "_")
	}
	return spell(steps, len(steps))
}

// overridePaths are the fields of the file the override names set, where
// they set one field (algorithm and key set the limit's, or every
// limit's, and are left as they are).
var overridePaths = map[string]string{
	"topology": "topology.kind", "store": "topology.store", "servers": "servers", "balancer": "balancer",
	"seed": "seed", "duration": "duration", "step": "step", "on-error": "topology.on_error", "rtt": "topology.rtt",
	"sync-interval": "topology.sync_interval", "replication-lag": "topology.replication_lag",
	"wall-clock": "wall_clock", "algorithm": "limit.algorithm", "key": "limit.key", "shadow": "limit.shadow",
}

// CheckSettingName refuses a name Apply would not accept, with the
// file's did-you-mean: an *Error whose Field is the name as far as it is
// known. Whether a list entry it names exists depends on the file, and
// is Apply's to say.
func CheckSettingName(name string) error { return checkSetting(name, "") }

// checkSetting is CheckSettingName, the error naming flag when given.
func checkSetting(name, flag string) error {
	if overrideName(name) != "" || slices.Contains(shortForms, name) {
		return nil
	}
	steps, err := parsePath(name)
	if err == nil {
		err = checkPath(steps)
	}
	if err != nil && len(steps) == 1 && len(steps[0].sels) == 0 {
		// One word that is no field of the top: say what a setting may be.
		known := append(append(slices.Clone(overrideNames), shortForms...), scenarioObject.names()...)
		msg := fmt.Sprintf("unknown setting %s", quote(name))
		if s := suggest(name, known); s != "" {
			msg += fmt.Sprintf(", did you mean %q?", s)
		}
		err = &Error{Field: name, Msg: msg + " (want a flag's name, " + words.OneOf(append(slices.Clone(overrideNames), shortForms...)) + ", or a field's path, e.g. limit.burst or topology.failover_after: see 'ratelim scenarios reference')"}
	}
	if err != nil && flag != "" && flag != name {
		e := err.(*Error)
		if e.Field == name {
			e.Field = flag
		} else {
			e.Field, e.Msg = flag, e.Field+": "+e.Msg
		}
	}
	return err
}

// isPath reports whether name is a field's path rather than a field: it
// goes down (limit.burst) or into a list (limits[1]).
func isPath(name string) bool { return strings.ContainsAny(name, ".[") }

// settingMsg is err's message without the name it repeats.
func settingMsg(err error, name string) string {
	e, ok := err.(*Error)
	if !ok {
		return err.Error()
	}
	if e.Field == name || e.Field == "" {
		return e.Msg
	}
	return e.Field + ": " + e.Msg
}

// overrideName is name as overrideNames spells it (on_error is
// on-error), or "" when it is not one.
func overrideName(name string) string {
	canon := strings.ReplaceAll(name, "_", "-")
	if slices.Contains(overrideNames, canon) {
		return canon
	}
	return ""
}

// A step is one segment of a path: a field, and the list entries chosen
// in it ([1], [web]).
type step struct {
	name string
	sels []string
}

// maxPathSteps bounds a path: the deepest field of a file is five down
// (clients[0].traffic[1].fields.time).
const maxPathSteps = 16

// parsePath splits a dotted path into its steps: limits[hourly].rate is
// limits with [hourly], then rate.
func parsePath(path string) ([]step, error) {
	bad := func(msg string) error {
		return &Error{Field: short(path), Msg: msg + " (want a field's path, e.g. limit.burst, topology.failover_after or clients[web].traffic.rate)"}
	}
	if path == "" {
		return nil, bad("empty")
	}
	var steps []step
	rest := path
	for {
		end := strings.IndexAny(rest, ".[")
		if end < 0 {
			end = len(rest)
		}
		st := step{name: rest[:end]}
		if st.name == "" {
			return nil, bad("a field name is missing")
		}
		rest = rest[end:]
		for strings.HasPrefix(rest, "[") {
			close := strings.IndexByte(rest, ']')
			if close < 0 {
				return nil, bad("a [ is not closed")
			}
			sel := strings.TrimSpace(rest[1:close])
			if sel == "" {
				return nil, bad("[] names no entry")
			}
			st.sels = append(st.sels, sel)
			rest = rest[close+1:]
		}
		steps = append(steps, st)
		if len(steps) > maxPathSteps {
			return nil, bad("too deep")
		}
		if rest == "" {
			return steps, nil
		}
		if rest[0] != '.' {
			return nil, bad(fmt.Sprintf("%s after ]", quote(rest[:1])))
		}
		rest = rest[1:]
	}
}

// spell writes steps as a path, to the end-th step.
func spell(steps []step, end int) string {
	var b strings.Builder
	for i, st := range steps[:end] {
		if i > 0 {
			b.WriteByte('.')
		}
		b.WriteString(st.name)
		for _, s := range st.sels {
			b.WriteString("[" + s + "]")
		}
	}
	return b.String()
}

// checkPath walks steps down the field table, as the file's reader would
// walk the file: each name a field of the object it is in, each [entry]
// in a list, and every step but the last in a mapping. A name spelled
// with - for _ is taken (failover-after is failover_after).
func checkPath(steps []step) error {
	forms := []*object{&scenarioObject}
	for i, st := range steps {
		var v *value
		var known []string
		for _, o := range forms {
			for j := range o.fields {
				fd := &o.fields[j]
				if fd.name == st.name || fd.name == strings.ReplaceAll(st.name, "-", "_") {
					v = &fd.value
				}
				if !slices.Contains(known, fd.name) {
					known = append(known, fd.name)
				}
			}
			if v != nil {
				break
			}
		}
		if v == nil {
			msg := "unknown field"
			if s := suggest(st.name, known); s != "" {
				msg += fmt.Sprintf(", did you mean %q?", s)
			}
			return &Error{Field: short(spell(steps, i+1)), Msg: fmt.Sprintf("%s (want %s)", msg, words.OneOf(known))}
		}
		cur := *v
		for k, sel := range st.sels {
			item, ok := cur.listItem()
			if !ok {
				return &Error{Field: spell(steps, i+1), Msg: fmt.Sprintf("%s is not a list (want it without [%s])", spell(steps[:i], i)+joinName(i, st.name, st.sels[:k]), sel)}
			}
			if _, err := strconv.Atoi(sel); err != nil && strings.Trim(sel, "0123456789") == "" {
				// Digits beyond an int: an index, and no name.
				return &Error{Field: short(spell(steps, i+1)), Msg: fmt.Sprintf("index out of range: no file has that many entries (want an index from 0, e.g. %s[0])", st.name)}
			}
			if _, err := strconv.Atoi(sel); err != nil && !hasNameField(item) {
				return &Error{Field: spell(steps, i+1), Msg: fmt.Sprintf("its entries have no name (want an index, e.g. %s[0])", st.name)}
			}
			cur = item
		}
		if i == len(steps)-1 {
			return nil
		}
		forms = cur.objectForms()
		if len(forms) == 0 {
			return &Error{Field: spell(steps, i+1), Msg: fmt.Sprintf("has no fields (want the path to end at %s)", spell(steps, i+1))}
		}
	}
	return nil
}

// joinName is a step's name and its first selectors, as a path's tail.
func joinName(i int, name string, sels []string) string {
	s := name
	if i > 0 {
		s = "." + s
	}
	for _, sel := range sels {
		s += "[" + sel + "]"
	}
	return s
}

// listItem is the item of a list, or of the list among an anyOf's forms.
func (v value) listItem() (value, bool) {
	switch v.kind {
	case listValue:
		return *v.item, true
	case anyOfValue:
		for _, f := range v.anyOf {
			if item, ok := f.listItem(); ok {
				return item, true
			}
		}
	}
	return value{}, false
}

// objectForms are the objects a value may be: a mapping's, or those
// among an anyOf's forms (a list's items not included).
func (v value) objectForms() []*object {
	switch v.kind {
	case objectValue:
		return []*object{v.object}
	case anyOfValue:
		var out []*object
		for _, f := range v.anyOf {
			out = append(out, f.objectForms()...)
		}
		return out
	}
	return nil
}

// hasNameField reports whether a list's items are mappings with a name:
// field, by which an entry may be chosen.
func hasNameField(item value) bool {
	for _, o := range item.objectForms() {
		if slices.Contains(o.names(), "name") {
			return true
		}
	}
	return false
}

// An injection is a setting's value in the tree: the nodes Apply made.
type injection struct {
	set  Setting
	path string // the field it sets, as the file's errors name it: clients[0].traffic.rate
}

// blame is the error for a node a setting put in the tree: no file or
// line, the setting's flag, and the field when it is not the one set.
func (in *injection) blame(field, msg string) *Error {
	if field != "" && field != in.path {
		msg = field + ": " + msg
	}
	return &Error{Field: in.set.Flag, Msg: msg}
}

// named is the setting with its value, as an error that it caused
// elsewhere starts: "--servers 3", "--set limit.burst=0".
func (s Setting) named() string {
	if strings.HasPrefix(s.Flag, "expect[") {
		// A with:'s field, named as the file's reader names it: its
		// value is on the line the error gives.
		return s.Flag
	}
	return flagWords(s.Flag, s.Value, func(w string) string { return w })
}

// flagWords is a flag with its value as a command line gives them, each
// word through quote (words.ShellWord for a line to paste, as is for an
// error to read): "--servers 3" for a flag of its own, "--set
// limit.burst=0" for flag "--set limit.burst" (or a path alone, which
// --set takes).
func flagWords(flag, value string, quote func(string) string) string {
	if strings.HasPrefix(flag, "--") && !strings.ContainsAny(flag, " =") {
		return flag + " " + quote(value)
	}
	path, ok := strings.CutPrefix(flag, "--set ")
	if !ok {
		return quote(flag + "=" + value)
	}
	return "--set " + quote(path+"="+value)
}

// reread reads f's text again with sets in place. An error the file would
// not give names the setting that caused it: the first of sets that,
// applied after those before it, fails, found by halving (a setting's own
// value, blamed as it is read, needs no search). For an unread file the
// file alone may be what fails, and its error is the file's.
func (f *File) reread(sets []Setting) (*File, error) {
	if len(f.Source) == 0 {
		field := ""
		if len(sets) > 0 {
			field = sets[0].Flag
		}
		return nil, &Error{Field: field, Msg: "this scenario has no text to set it in (want a scenario read by Load, Read, Parse or Open)"}
	}
	out, blamed, err := f.rereadWith(sets)
	if err == nil || blamed || len(sets) == 0 {
		return out, err
	}
	lo, hi := 1, len(sets) // sets[:hi] fails, with err
	if f.unread {
		lo = 0
	}
	for lo < hi {
		mid := (lo + hi) / 2
		if _, _, merr := f.rereadWith(sets[:mid]); merr != nil {
			hi, err = mid, merr
		} else {
			lo = mid + 1
		}
	}
	return nil, err
}

// rereadWith is reread without the search for the setting to blame;
// blamed says the error names a setting as its cause already (its value
// or its path was refused).
func (f *File) rereadWith(sets []Setting) (_ *File, blamed bool, _ error) {
	d := &decoder{file: f.origin.file, logs: f.origin.logs, logDir: f.origin.logDir, cache: f.origin.cache, injected: map[*yaml.Node]*injection{}}
	if d.file == "" {
		d.file = f.Path
	}
	root := d.readDocument(f.Source)
	if d.failed() {
		return nil, false, d.err
	}
	for _, s := range sets {
		if err := d.set(root, s); err != nil {
			return nil, true, err
		}
	}
	d.settingsGiven = len(sets) > 0
	out := d.parseRoot(root)
	if d.failed() {
		if d.blamedSetting || len(sets) == 0 {
			return nil, d.blamedSetting, d.err
		}
		// Blamed on the file, where the setting shows: the setting is
		// the cause, and the file's field and line say where.
		msg := d.err.Msg
		where := d.err.Field
		if d.err.Line > 0 {
			where = strings.TrimSpace(fmt.Sprintf("%s (line %d)", where, d.err.Line))
		}
		if where != "" {
			msg = where + ": " + msg
		}
		return nil, false, &Error{Field: sets[len(sets)-1].named(), Msg: msg}
	}
	out.Source, out.Path, out.origin = f.Source, f.Path, f.origin
	return out, false, nil
}

// set puts s in the tree under root: the path's nodes copied into the
// mappings and lists that hold them (an anchor's node is never changed,
// so its aliases keep the file's value), and its value parsed as YAML.
func (d *decoder) set(root *yaml.Node, s Setting) error {
	name := s.Name
	if slices.Contains(shortForms, name) {
		name = "limit." + name
	}
	fail := func(format string, args ...any) error {
		return &Error{Field: s.Flag, Msg: fmt.Sprintf(format, args...)}
	}
	steps, err := parsePath(name)
	if err == nil {
		err = checkPath(steps) // as Apply has, for a caller that has not
	}
	if err != nil {
		return fail("%v", err)
	}
	if root.Kind != yaml.MappingNode {
		return fail("the file's top is not a mapping")
	}
	if steps[0].name == "limit" {
		if names, ok := limitNames(root); ok {
			tail := strings.TrimPrefix(spell(steps, len(steps)), "limit")
			return fail("this file has limits:, not limit: (want limits[NAME]%s, NAME one of %s)", tail, names)
		}
	}
	if steps[0].name == "limits" && lookup(root, "limits", 0) == nil && lookup(root, "limit", 0) != nil {
		want := "limit"
		if len(steps) > 1 {
			want = "limit." + spell(steps[1:], len(steps)-1)
		}
		return fail("this file has limit:, not limits: (want %s)", want)
	}
	v, err := parseValue(s.Value)
	if err != nil {
		return fail("%v", err)
	}
	in := &injection{set: s}
	var mark func(n *yaml.Node)
	mark = func(n *yaml.Node) {
		n.Line, n.Column = 0, 0
		d.injected[n] = in
		for _, c := range n.Content {
			mark(c)
		}
	}
	mark(v)
	cur := root
	var path string
	for i, st := range steps {
		fieldName := fieldSpelling(st.name)
		path = join(path, fieldName)
		last := i == len(steps)-1 && len(st.sels) == 0
		if cur.Kind != yaml.MappingNode {
			return fail("%s is %s, which has no field %s (want the path to a field)", strings.TrimSuffix(path, "."+fieldName), describe(cur), fieldName)
		}
		if last {
			setKey(cur, fieldName, v, mark)
			break
		}
		if len(st.sels) > 0 && lookup(cur, fieldName, 0) == nil {
			// An entry of a list the file lacks: there is none to set,
			// and a mapping made for it would be called one.
			return fail("%s: the file has none (want %s added to the file, or %s)", path, path, wholeList(s, path))
		}
		next := ownValue(cur, fieldName, mark)
		for k, sel := range st.sels {
			if isNull(next) {
				return fail("%s: the file has none (want the entry added in the file)", path)
			}
			if next.Kind != yaml.SequenceNode {
				return fail("%s is %s, not a list (want it without [%s])", path, describe(next), sel)
			}
			j, err := entry(next, path, sel)
			if err != nil {
				return fail("%v", err)
			}
			path = index(path, j)
			if i == len(steps)-1 && k == len(st.sels)-1 {
				next.Content[j] = v
				next = nil
				break
			}
			next.Content[j] = ownCopy(next.Content[j])
			next = next.Content[j]
		}
		if next == nil {
			break
		}
		if next.Kind == yaml.SequenceNode && i < len(steps)-1 {
			return fail("%s is a list of %d (want %s[0].%s, an entry's field)", path, len(next.Content), spell(steps, i+1), spell(steps[i+1:], len(steps)-i-1))
		}
		cur = next
	}
	in.path = path
	return nil
}

// wholeList is how s would set the list at path whole: --set
// faults=[{…}], or with: {faults: [{…}]}.
func wholeList(s Setting, path string) string {
	if kind, ok := strings.CutSuffix(s.Flag, s.Name); ok && (kind == "--set " || kind == "--vs " || kind == "sweep ") {
		return kind + path + "=[{…}]"
	}
	return path + ": [{…}] given whole"
}

// fieldSpelling is a path's name as the file spells it: failover-after
// is failover_after, when that is a field (checkPath has found one).
func fieldSpelling(name string) string {
	alt := strings.ReplaceAll(name, "-", "_")
	for _, o := range objects {
		if slices.Contains(o.names(), name) {
			return name
		}
	}
	return alt
}

// limitNames says whether the file has limits: (its own or merged), and
// its entries' names.
func limitNames(root *yaml.Node) (string, bool) {
	n := lookup(root, "limits", 0)
	if n == nil {
		return "", false
	}
	var names []string
	for _, e := range resolve(n).Content {
		if nv := lookup(resolve(e), "name", 0); nv != nil && resolve(nv).Kind == yaml.ScalarNode {
			names = append(names, resolve(nv).Value)
		}
	}
	if len(names) == 0 {
		return "an index from 0", true
	}
	return words.OneOf(names), true
}

// lookup is the value of key in mapping m, its own or merged (<<:), nil
// when it has none; depth bounds merges of merges.
func lookup(m *yaml.Node, key string, depth int) *yaml.Node {
	m = resolve(m)
	if m.Kind != yaml.MappingNode || depth > 8 {
		return nil
	}
	var merges []*yaml.Node
	for i := 0; i+1 < len(m.Content); i += 2 {
		k := m.Content[i]
		if k.Kind == yaml.ScalarNode && k.ShortTag() == "!!merge" {
			merges = append(merges, m.Content[i+1])
			continue
		}
		if k.Kind == yaml.ScalarNode && k.Value == key {
			return m.Content[i+1]
		}
	}
	for _, mg := range merges {
		mg = resolve(mg)
		sources := []*yaml.Node{mg}
		if mg.Kind == yaml.SequenceNode {
			sources = mg.Content
		}
		for _, s := range sources {
			if v := lookup(s, key, depth+1); v != nil {
				return v
			}
		}
	}
	return nil
}

// setKey sets key to v in mapping m itself: in place of its own value,
// or added after its pairs (before a merge's, which its own keys beat).
func setKey(m *yaml.Node, key string, v *yaml.Node, mark func(*yaml.Node)) {
	for i := 0; i+1 < len(m.Content); i += 2 {
		k := m.Content[i]
		if k.Kind == yaml.ScalarNode && k.ShortTag() != "!!merge" && k.Value == key {
			// The value's comments stay beside the value that replaces
			// it, for Written (burst: 20 # bucket size: ...); but a line
			// comment with a number in it is most likely about the old
			// value (shadow: {until: 15s} # ..., until 15s) and would
			// contradict the new one: it goes.
			old := m.Content[i+1]
			v.HeadComment = cmp.Or(v.HeadComment, old.HeadComment)
			if !strings.ContainsAny(old.LineComment, "0123456789") {
				v.LineComment = cmp.Or(v.LineComment, old.LineComment)
			}
			v.FootComment = cmp.Or(v.FootComment, old.FootComment)
			m.Content[i+1] = v
			return
		}
	}
	k := &yaml.Node{Kind: yaml.ScalarNode, Tag: "!!str", Value: key}
	mark(k)
	m.Content = append(m.Content, k, v)
}

// ownValue returns key's value in mapping m as a node of m's own, to
// change: a copy of its own value or of a merged one, or a new mapping
// when m has none.
func ownValue(m *yaml.Node, key string, mark func(*yaml.Node)) *yaml.Node {
	for i := 0; i+1 < len(m.Content); i += 2 {
		k := m.Content[i]
		if k.Kind == yaml.ScalarNode && k.ShortTag() != "!!merge" && k.Value == key {
			m.Content[i+1] = ownCopy(m.Content[i+1])
			return m.Content[i+1]
		}
	}
	var v *yaml.Node
	if merged := lookup(m, key, 0); merged != nil {
		v = ownCopy(merged)
	} else {
		v = &yaml.Node{Kind: yaml.MappingNode, Tag: "!!map"}
		mark(v)
	}
	setKey(m, key, v, mark)
	return v
}

// ownCopy is a copy of n (an alias's target when n is one) that nothing
// else in the tree refers to: changing it changes no alias. Aliases
// inside it to anchors inside it refer to the copies.
func ownCopy(n *yaml.Node) *yaml.Node {
	seen := map[*yaml.Node]*yaml.Node{}
	var cp func(n *yaml.Node, depth int) *yaml.Node
	cp = func(n *yaml.Node, depth int) *yaml.Node {
		if c, ok := seen[n]; ok {
			return c
		}
		c := *n
		c.Anchor = ""
		seen[n] = &c
		if depth < 64 {
			c.Content = make([]*yaml.Node, len(n.Content))
			for i, ch := range n.Content {
				c.Content[i] = cp(ch, depth+1)
			}
		}
		if n.Alias != nil {
			if a, ok := seen[n.Alias]; ok {
				c.Alias = a
			}
		}
		return &c
	}
	return cp(resolve(n), 0)
}

// isMapping reports whether a setting's text is a YAML mapping ({…}).
func isMapping(text string) bool {
	v, err := parseValue(text)
	return err == nil && v.Kind == yaml.MappingNode
}

// entry is the index of the list entry sel names: a whole number from 0,
// or an entry's name:.
func entry(list *yaml.Node, path, sel string) (int, error) {
	if i, err := strconv.Atoi(sel); err == nil {
		if i < 0 || i >= len(list.Content) {
			asWritten := ""
			if path == "clients" {
				asWritten = ", as written, before count: expands them"
			}
			if len(list.Content) == 0 {
				return 0, fmt.Errorf("%s[%d] is out of range: the file has none (want an entry added to %s in the file)", path, i, path)
			}
			want := fmt.Sprintf("%s[0] to %s[%d]", path, path, len(list.Content)-1)
			if len(list.Content) == 1 {
				want = path + "[0]"
			}
			return 0, fmt.Errorf("%s[%d] is out of range: the file has %d (want %s%s)", path, i, len(list.Content), want, asWritten)
		}
		return i, nil
	}
	var names []string
	for i, e := range list.Content {
		if nv := lookup(e, "name", 0); nv != nil && resolve(nv).Kind == yaml.ScalarNode {
			if resolve(nv).Value == sel {
				return i, nil
			}
			names = append(names, resolve(nv).Value)
		}
	}
	if len(names) == 0 {
		return 0, fmt.Errorf("%s: no entry is named %s (want an index from 0)", path, quote(sel))
	}
	return 0, fmt.Errorf("%s: %s", path, unknown("name", sel, names))
}

// parseValue reads a setting's text as one YAML value: a scalar read as
// the file would read it (8 an int, 8s a string), or a mapping or list
// written in flow style. Nothing is null, which the field's reader calls
// a missing value.
func parseValue(text string) (*yaml.Node, error) {
	if len(text) > MaxFileSize {
		return nil, fmt.Errorf("the value is larger than %d MB (want a field's value)", MaxFileSize>>20)
	}
	var doc yaml.Node
	dec := yaml.NewDecoder(strings.NewReader(text))
	if err := safeDecode(dec, &doc); err != nil {
		if strings.TrimSpace(text) == "" {
			return &yaml.Node{Kind: yaml.ScalarNode, Tag: "!!null"}, nil
		}
		return nil, fmt.Errorf("%s is not a YAML value: %s (want e.g. 5/s, 20 or {pattern: constant, rate: 5/s})", quote(text), strings.TrimPrefix(err.Error(), "yaml: "))
	}
	// A second document (after ---) would be left out unread.
	var more yaml.Node
	if err := safeDecode(dec, &more); !errors.Is(err, io.EOF) {
		return nil, fmt.Errorf("%s holds more than one YAML document (want one value)", quote(text))
	}
	if len(doc.Content) == 0 {
		return &yaml.Node{Kind: yaml.ScalarNode, Tag: "!!null"}, nil
	}
	v := doc.Content[0]
	if hasAlias(v, 0) {
		return nil, fmt.Errorf("%s refers to an anchor (want the value written out)", quote(text))
	}
	return v, nil
}

// hasAlias reports whether n holds an alias (*name).
func hasAlias(n *yaml.Node, depth int) bool {
	if n.Kind == yaml.AliasNode || depth > 64 {
		return true
	}
	for _, c := range n.Content {
		if hasAlias(c, depth+1) {
			return true
		}
	}
	return false
}

// logCache holds the logs a file's traces scanned, by everything that
// was asked of each: reading the file again with a setting (a sweep's
// values) scans a log once, not once per value.
type logCache struct {
	mu   sync.Mutex
	logs map[logKey]*replay.Log
}

// A logKey is everything a scan's result depends on: the log's file as
// it is on disk, and what was asked of it. The instants are compared as
// instants and by their zone's offset: 10:04+00:03 and 10:04-00:03 are
// six minutes apart, though their wall clocks are the same.
type logKey struct {
	source                  string // the Source's other options, by value
	from, until             int64  // UnixNano, 0 unset
	fromOffset, untilOffset int    // their zones', in seconds
	maxKeys                 int
	size, modTime           int64 // the file's, when it is one
}

// cacheKey is src's key; false when it cannot have one: a log read by a
// program (Open) or from a reader (Stdin), or priced by routes (Costs,
// whose rules hold patterns compared by address), is scanned each time.
func cacheKey(src replay.Source, maxKeys int) (logKey, bool) {
	if src.Open != nil || src.Costs != nil || src.Trace.Stdin != nil || src.Path == "-" {
		return logKey{}, false
	}
	k := logKey{maxKeys: maxKeys}
	if t := src.Trace.From; !t.IsZero() {
		_, k.fromOffset = t.Zone()
		k.from = t.UnixNano()
	}
	if t := src.Trace.Until; !t.IsZero() {
		_, k.untilOffset = t.Zone()
		k.until = t.UnixNano()
	}
	info, err := os.Stat(src.Path)
	if err != nil {
		return logKey{}, false // Scan says why
	}
	k.size, k.modTime = info.Size(), info.ModTime().UnixNano()
	rest := src
	rest.Trace.From, rest.Trace.Until = time.Time{}, time.Time{}
	k.source = fmt.Sprintf("%#v", rest)
	return k, true
}

// scan is replay.Scan of src, once per key.
func (c *logCache) scan(src replay.Source, maxKeys int) (*replay.Log, error) {
	key, ok := cacheKey(src, maxKeys)
	if c == nil || !ok {
		return replay.Scan(context.Background(), src, replay.ScanOptions{MaxKeys: maxKeys})
	}
	c.mu.Lock()
	defer c.mu.Unlock()
	if l, ok := c.logs[key]; ok {
		return l, nil
	}
	l, err := replay.Scan(context.Background(), src, replay.ScanOptions{MaxKeys: maxKeys})
	if err != nil {
		return nil, err
	}
	if c.logs == nil {
		c.logs = map[logKey]*replay.Log{}
	}
	c.logs[key] = l
	return l, nil
}

// settingText is a YAML value as a Setting's text: what the file says,
// read back the same (a quoted "a: b" stays one string), aliases written
// out and in flow style, on one line. Written out, aliases may repeat
// their anchors' values many times over: a value of more than
// maxSettingNodes nodes is refused (false).
func settingText(n *yaml.Node) (string, bool) {
	if n.Kind == yaml.ScalarNode && n.Style == 0 {
		return n.Value, true
	}
	budget := maxSettingNodes
	var bare func(n *yaml.Node, depth int) *yaml.Node
	bare = func(n *yaml.Node, depth int) *yaml.Node {
		if budget--; budget < 0 {
			return nil
		}
		n = resolve(n)
		c := &yaml.Node{Kind: n.Kind, Tag: n.Tag, Value: n.Value, Style: n.Style}
		if n.Kind == yaml.MappingNode || n.Kind == yaml.SequenceNode {
			c.Style |= yaml.FlowStyle
		}
		if depth < 64 {
			for _, ch := range n.Content {
				bc := bare(ch, depth+1)
				if bc == nil {
					return nil
				}
				c.Content = append(c.Content, bc)
			}
		}
		return c
	}
	b := bare(n, 0)
	if b == nil {
		return "", false
	}
	out, err := yaml.Marshal(b)
	if err != nil {
		return n.Value, true
	}
	return strings.TrimSpace(string(out)), true
}

// maxSettingNodes bounds a value written out as a setting's text: far
// more than any field's value, far less than a billion laughs.
const maxSettingNodes = 10_000
