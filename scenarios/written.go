package scenarios

import (
	"bytes"
	"errors"
	"fmt"
	"reflect"
	"slices"
	"strconv"
	"strings"
	"time"

	"go.yaml.in/yaml/v3"

	"github.com/ratelim/ratelim/internal/words"
	"github.com/ratelim/ratelim/sim"
)

// Written is f's text with every setting f was made with (Apply's)
// written into it, so that Parse of it runs as f does: what a page's
// "download YAML" gives back to the command line. A file that no Apply
// made (or one made with no settings) is its Source, unchanged.
//
// A path, a short form (burst) and the overrides that are one field of
// the file (servers, seed, balancer, wall-clock) are set in the file's
// tree as Apply sets them. The overrides that transform the whole
// scenario (algorithm, topology as a kind, key, duration, shadow) and
// those read against it (step, store, rtt, on-error, sync-interval,
// replication-lag) are written at their field (limit.algorithm,
// topology.kind, topology.on_error, ...) when the file so written reads
// to the same scenario. An algorithm is written with the parameters
// Apply filled for it (sliding-log's window on a token bucket's file:
// the run is the same, and its header no longer calls the window
// defaulted); a kind, without the topology's fields only the old kind
// reads (a cluster's masters:). Where it does not read the same (a
// duration that ends before a fault or an expectation's span does; a
// kind under an expectation's with: of the old kind's field), and where a setting written makes a file that does not read
// (clients renamed under the file's own expectations), the error is an
// *Error naming the setting, with the flag that makes the same run:
//
//	store-outage.yaml:45: --duration: cannot be written into the file: faults[0].end: 20s is after the end of the run (want the CLI's flag: --duration 15s)
//
// The setting blamed is found by writing the tree's settings together,
// then adding the transforms one at a time (blameWritten), among at most
// MaxWrittenSearch settings; beyond that the error names none.
//
// The text is the file's YAML tree encoded again by yaml.v3: comments
// stay where yaml.v3 keeps them (beside their keys; a column of
// comments is no longer aligned), indentation is two spaces, and
// quoting and flow style are the file's. A value a setting changes keeps
// its line comment only when the comment holds no digit: one that does
// most likely states the old value (window: 1s # 100/s × 1s = 100) and
// is dropped. The file's other comments (its header's sums, say) are
// the file's, and may describe the values as written.
func Written(f *File) ([]byte, error) {
	if f.base == nil || len(f.applied) == 0 {
		return slices.Clone(f.Source), nil
	}
	root := f.base
	// In the order Apply applies them: the tree's, then the transforms
	// in OverrideNames' order.
	var ordered []Setting
	var transforms []Setting
	for _, s := range f.applied {
		if s.Flag == "" {
			s.Flag = s.Name
		}
		canon := overrideName(s.Name)
		switch {
		case canon == "topology" && isMapping(s.Value):
			ordered = append(ordered, s) // the topology: mapping, whole
		case canon != "" && !treeOverrides[canon]:
			transforms = append(transforms, s)
		default:
			ordered = append(ordered, s)
		}
	}
	slices.SortStableFunc(transforms, func(a, b Setting) int {
		return slices.Index(overrideNames, overrideName(a.Name)) - slices.Index(overrideNames, overrideName(b.Name))
	})
	ordered = append(ordered, transforms...)

	text, dropped, err := writeSettings(root, ordered, &f.Scenario)
	if err == nil {
		var diff string
		if diff, err = readsAs(root, text, f, dropped); err == nil && diff == "" {
			return text, nil
		}
	}
	if len(ordered) > MaxWrittenSearch {
		return nil, &Error{Msg: fmt.Sprintf("%d settings do not write into the file as they apply, and Written looks for the one to blame among at most %d (want fewer settings, or the CLI's flags)", len(ordered), MaxWrittenSearch)}
	}
	return nil, blameWritten(root, ordered[:len(ordered)-len(transforms)], transforms, f)
}

// MaxWrittenSearch is the most settings Written searches for the one it
// cannot write: each step of the search reads the file again, and a
// page's permalink may carry many.
const MaxWrittenSearch = 64

// blameWritten is the error for the setting Written cannot write, of
// paths (set in the tree: they write as they apply, alone and together,
// unless the file they make does not read) and then transforms, which
// applied make want. The paths are written together first, then the
// transforms added one at a time: the first whose addition does not
// write, or reads otherwise than Apply makes it, is to blame. So a
// transform is never blamed for a path's doing, nor a path for a
// transform's (a rename that the question: follows, then --shadow on a
// file of limits:, blames --shadow).
func blameWritten(root *File, paths, transforms []Setting, want *File) error {
	// check is the error for sets written, nil when they read as applied.
	check := func(sets []Setting, last Setting) error {
		applied := want
		if len(sets) < len(paths)+len(transforms) {
			g, err := Apply(root, sets)
			if err != nil {
				return nil // no run alone (checkRead): judged with the next
			}
			applied = g
		}
		text, dropped, err := writeSettings(root, sets, &applied.Scenario)
		if err != nil {
			return unwritable(last, err)
		}
		diff, err := readsAs(root, text, applied, dropped)
		if err != nil {
			return unwritable(last, err)
		}
		if diff != "" {
			return unwritable(last, fmt.Errorf("the file so written reads otherwise (%s)", diff))
		}
		return nil
	}
	if len(paths) > 0 {
		if err := check(paths, paths[len(paths)-1]); err != nil {
			// Paths that do not write together: the first whose prefix
			// does not (at most MaxWrittenSearch reads).
			for k := 1; k < len(paths); k++ {
				if perr := check(paths[:k], paths[k-1]); perr != nil {
					return perr
				}
			}
			return err
		}
	}
	for k := range transforms {
		if err := check(append(slices.Clone(paths), transforms[:k+1]...), transforms[k]); err != nil {
			return err
		}
	}
	last := transforms
	if len(last) == 0 {
		last = paths
	}
	return unwritable(last[len(last)-1], errors.New("the file so written reads otherwise"))
}

// writeSettings is root's text with sets written in its tree.
func writeSettings(root *File, sets []Setting, applied *sim.Scenario) (text []byte, dropped []string, err error) {
	var doc yaml.Node
	if err := safeDecode(yaml.NewDecoder(bytes.NewReader(root.Source)), &doc); err != nil || len(doc.Content) == 0 {
		return nil, nil, &Error{Msg: "the file's text does not read as YAML (want a file Apply has read)"}
	}
	top := doc.Content[0]
	d := &decoder{injected: map[*yaml.Node]*injection{}}
	for _, s := range sets {
		at := s
		if canon := overrideName(s.Name); canon != "" && !(canon == "topology" && isMapping(s.Value)) {
			at.Name = settingKey(canon)
			if canon == "shadow" {
				at.Value = shadowField(s.Value)
			}
		}
		extra := []Setting{at}
		if overrideName(s.Name) == "algorithm" {
			// The parameters the algorithm lacked, which Apply filled
			// (sliding-log's window on a token bucket's file): written
			// beside it, as the run has them.
			extra = append(extra, filledParams(applied, s.Flag)...)
		}
		for _, at := range extra {
			if err := d.set(top, at); err != nil {
				if e, ok := err.(*Error); ok && e.Field == s.Flag {
					return nil, nil, fmt.Errorf("written as %s: %s", at.Name, e.Msg)
				}
				return nil, nil, err
			}
		}
	}
	anchorAliases(&doc)
	if slices.ContainsFunc(sets, func(s Setting) bool { return overrideName(s.Name) == "topology" && !isMapping(s.Value) }) {
		// A kind written over a topology of another: the fields only the
		// old kind reads (a cluster's masters:) are dropped, one at a
		// time as the file so written refuses them; readsAs confirms
		// that the run is the same.
		for range 16 {
			text, err := encodeDoc(&doc)
			if err != nil {
				return nil, nil, err
			}
			name := dropRejectedTopologyField(root, top, text)
			if name == "" {
				break
			}
			dropped = append(dropped, name)
		}
	}
	text, err = encodeDoc(&doc)
	return text, dropped, err
}

// filledParams are the settings of the limit's parameters that Apply's
// algorithm filled by default in applied (its window, its burst), as the
// file writes them; none when applied is nil or filled none.
func filledParams(applied *sim.Scenario, flag string) []Setting {
	if applied == nil {
		return nil
	}
	var out []Setting
	l := applied.Limit
	if l.DefaultWindow {
		out = append(out, Setting{Name: "limit.window", Value: words.Duration(l.Params.Window), Flag: flag})
	}
	if l.DefaultBurst {
		out = append(out, Setting{Name: "limit.burst", Value: strconv.FormatInt(l.Params.Burst, 10), Flag: flag})
	}
	return out
}

// dropRejectedTopologyField reads text as root's file and, when it is
// refused for a topology field its kind has no use for ("only a cluster
// topology has it"), removes that field from top's topology: mapping;
// it is the field's name, "" when it removed none.
func dropRejectedTopologyField(root *File, top *yaml.Node, text []byte) string {
	g := &File{Source: text, Path: root.Path, origin: root.origin, unread: true}
	_, _, err := g.rereadWith(nil)
	e, ok := err.(*Error)
	if !ok || !strings.Contains(e.Msg, " topology has it") {
		return ""
	}
	name, ok := strings.CutPrefix(e.Field, "topology.")
	if !ok || strings.ContainsAny(name, ".[") {
		return ""
	}
	t := ownValue(top, "topology", func(*yaml.Node) {})
	for i := 0; i+1 < len(t.Content); i += 2 {
		if t.Content[i].Value == name {
			t.Content = slices.Delete(t.Content, i, i+2)
			return name
		}
	}
	return ""
}

// encodeDoc is doc written as YAML, two spaces an indent.
func encodeDoc(doc *yaml.Node) ([]byte, error) {
	var b bytes.Buffer
	enc := yaml.NewEncoder(&b)
	enc.SetIndent(2)
	if err := enc.Encode(doc); err != nil {
		return nil, fmt.Errorf("the file cannot be written again: %v", err)
	}
	if err := enc.Close(); err != nil {
		return nil, fmt.Errorf("the file cannot be written again: %v", err)
	}
	return b.Bytes(), nil
}

// anchorAliases makes every alias in the tree one the encoder can write:
// Apply's copies (ownCopy) drop their anchors, and an alias may point to
// a node the copying took out of the tree. An alias to a node earlier in
// the document names it by an anchor it is given (a fresh name if its
// own is taken by another node); one to a node that is not there is
// replaced by a copy of what it stands for.
func anchorAliases(doc *yaml.Node) {
	seen := map[*yaml.Node]bool{}
	anchors := map[string]*yaml.Node{}
	var walk func(n *yaml.Node, depth int)
	walk = func(n *yaml.Node, depth int) {
		if depth > 256 {
			return
		}
		seen[n] = true
		if n.Anchor != "" {
			anchors[n.Anchor] = n
		}
		for i, c := range n.Content {
			if c.Kind != yaml.AliasNode || c.Alias == nil {
				walk(c, depth+1)
				continue
			}
			target := c.Alias
			if !seen[target] {
				n.Content[i] = ownCopy(target)
				walk(n.Content[i], depth+1)
				continue
			}
			if target.Anchor == "" || anchors[target.Anchor] != target {
				name := c.Value
				for k := 2; anchors[name] != nil && anchors[name] != target; k++ {
					name = fmt.Sprintf("%s-%d", c.Value, k)
				}
				target.Anchor = name
				anchors[name] = target
			}
			c.Value = target.Anchor
		}
	}
	walk(doc, 0)
}

// shadowField is the shadow override's value as limit.shadow writes it:
// true or false as it is, an instant (15s) as {until: 15s}.
func shadowField(value string) string {
	if _, err := time.ParseDuration(value); err == nil {
		return "{until: " + value + "}"
	}
	return value
}

// readsAs reads text as root's file and says where it differs from want
// (a file Apply made): "" when it reads the same, else the first field
// of the scenario that does not, or the question, or an expectation's
// text. The topology fields dropped (those the written kind refuses, and
// so does not read) are not compared: Apply's kind keeps the file's
// value there, unread.
func readsAs(root *File, text []byte, want *File, dropped []string) (string, error) {
	g := &File{Source: text, Path: root.Path, origin: root.origin, unread: true}
	got, _, err := g.rereadWith(nil)
	if err != nil {
		return "", err
	}
	// A parameter Apply filled by default is written as given: the run
	// is the same, its header no longer says "defaulted".
	w := want.Scenario
	w.Limit.DefaultWindow, w.Limit.DefaultBurst = got.Scenario.Limit.DefaultWindow, got.Scenario.Limit.DefaultBurst
	for _, name := range dropped {
		goName := goFieldName(name)
		if at := reflect.ValueOf(&w.Topology).Elem().FieldByName(goName); at.IsValid() && at.CanSet() {
			at.Set(reflect.ValueOf(got.Scenario.Topology).FieldByName(goName))
		}
	}
	if d := diffExported(reflect.ValueOf(got.Scenario), reflect.ValueOf(w), "", 0); d != "" {
		return d, nil
	}
	return diffAsked(got, want), nil
}

// diffAsked says how got's question and expectations differ from want's,
// "" when they do not: the question's fields but its line (the text
// written has its own lines), each expectation's text.
func diffAsked(got, want *File) string {
	gq, wq := got.Question, want.Question
	switch {
	case (gq == nil) != (wq == nil):
		return fmt.Sprintf("question is %v, not %v", gq, wq)
	case gq != nil && (gq.Ask != wq.Ask || gq.Figure != wq.Figure || gq.Subject != wq.Subject || gq.Pick != wq.Pick):
		return fmt.Sprintf("question is %+v, not %+v", *gq, *wq)
	case len(got.Expect) != len(want.Expect):
		return fmt.Sprintf("expect has %d, not %d", len(got.Expect), len(want.Expect))
	}
	for i := range got.Expect {
		if got.Expect[i].Text != want.Expect[i].Text {
			return fmt.Sprintf("expect[%d] is %q, not %q", i, got.Expect[i].Text, want.Expect[i].Text)
		}
	}
	return ""
}

// goFieldName is a file's field name as sim's Go field: sync_interval
// is SyncInterval.
func goFieldName(name string) string {
	var b strings.Builder
	for _, part := range strings.Split(name, "_") {
		if part != "" {
			b.WriteString(strings.ToUpper(part[:1]) + part[1:])
		}
	}
	return b.String()
}

// unwritable is the error for a setting Written cannot put in the file:
// at the file and line of why (an *Error of the file so written), on the
// setting, with one want, the flag that makes the same run:
//
//	store-outage.yaml:45: --duration: cannot be written into the file: faults[0].end: 20s is after the end of the run (want the CLI's flag: --duration 15s)
func unwritable(s Setting, why error) error {
	out := &Error{Field: s.Flag}
	msg := why.Error()
	if e, ok := why.(*Error); ok {
		out.File, out.Line, msg = e.File, e.Line, e.Msg
		if e.Field != "" && e.Field != s.Flag {
			msg = e.Field + ": " + msg
		}
	}
	// The flag to paste into a shell: a path's value may hold
	// brackets and braces (clients[web-{i}].name=b-{i}) that zsh and
	// bash expand, a mapping spaces.
	flag := flagWords(FlagField(s.Name), s.Value, words.ShellWord)
	if overrideName(s.Name) == "" || (overrideName(s.Name) == "topology" && isMapping(s.Value)) {
		flag = flagWords("--set "+s.Name, s.Value, words.ShellWord)
	}
	out.Msg = fmt.Sprintf("cannot be written into the file: %s (want the CLI's flag: %s)", withoutWant(msg), flag)
	return out
}

// withoutWant is msg without the "(want ...)" it ends with, if it does:
// the error that carries it on has a want of its own.
func withoutWant(msg string) string {
	if at := strings.LastIndex(msg, " (want "); at >= 0 && strings.HasSuffix(msg, ")") {
		return msg[:at]
	}
	return msg
}

// diffExported is the path of the first exported field where a and b
// differ, "" when none does. Unexported fields are left out: they are
// how a value was made (sim.Topology remembers which defaults a kind
// filled), not what it runs; times compare with Equal.
func diffExported(a, b reflect.Value, path string, depth int) string {
	if depth > 64 {
		return ""
	}
	at := func(p string) string {
		if path == "" {
			return p
		}
		return path + p
	}
	if a.Type() == reflect.TypeFor[time.Time]() {
		if !a.Interface().(time.Time).Equal(b.Interface().(time.Time)) {
			return differs(path, a, b)
		}
		return ""
	}
	switch a.Kind() {
	case reflect.Struct:
		exported := false
		for i := range a.NumField() {
			f := a.Type().Field(i)
			if !f.IsExported() {
				continue
			}
			exported = true
			name := f.Name
			if !f.Anonymous {
				name = "." + name
				if path == "" {
					name = f.Name
				}
			} else {
				name = ""
			}
			if d := diffExported(a.Field(i), b.Field(i), at(name), depth+1); d != "" {
				return d
			}
		}
		if !exported && !reflect.DeepEqual(a.Interface(), b.Interface()) {
			return differs(path, a, b)
		}
	case reflect.Slice, reflect.Array:
		if a.Len() != b.Len() {
			return fmt.Sprintf("%s has %d, not %d", path, a.Len(), b.Len())
		}
		for i := range a.Len() {
			if d := diffExported(a.Index(i), b.Index(i), fmt.Sprintf("%s[%d]", path, i), depth+1); d != "" {
				return d
			}
		}
	case reflect.Pointer:
		switch {
		case a.IsNil() != b.IsNil():
			return differs(path, a, b)
		case a.IsNil() || a.Pointer() == b.Pointer():
			return ""
		}
		return diffExported(a.Elem(), b.Elem(), path, depth+1)
	case reflect.Func, reflect.Chan:
		if a.IsNil() != b.IsNil() {
			return differs(path, a, b)
		}
	default:
		if a.CanInterface() && !reflect.DeepEqual(a.Interface(), b.Interface()) {
			return differs(path, a, b)
		}
	}
	return ""
}

// differs says that the field at path is a, not b.
func differs(path string, a, b reflect.Value) string {
	return fmt.Sprintf("%s is %v, not %v", path, a.Interface(), b.Interface())
}
