package scenarios

import (
	"bytes"
	"fmt"
	"reflect"
	"slices"
	"time"

	"go.yaml.in/yaml/v3"

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
// to the same scenario. Where it does not (sliding-log's window, which
// Apply fills and the file lacks; a duration that ends before a fault or
// an expectation's span does; a kind that has no use for the topology's
// masters:), and where a setting written makes a file that does not read
// (clients renamed under the file's own expectations), the error is an
// *Error naming the setting, with the flag that makes the same run:
//
//	--algorithm: written so, race.yaml:29: limit.window: missing: sliding-log needs a window (want e.g. window: 1s) (want the CLI's flag: --algorithm sliding-log)
//
// The text is the file's YAML tree encoded again by yaml.v3: comments
// stay where yaml.v3 keeps them (beside their keys; a column of
// comments is no longer aligned), indentation is two spaces, and
// quoting and flow style are the file's.
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

	text, err := writeSettings(root, ordered)
	if err == nil {
		var diff string
		if diff, err = readsAs(root, text, &f.Scenario); err == nil && diff == "" {
			return text, nil
		}
	}
	// Some setting does not write as it applies: the first whose prefix
	// of the settings, written, reads otherwise than applied.
	for k := 1; k <= len(ordered); k++ {
		s := ordered[k-1]
		want := &f.Scenario
		if k < len(ordered) {
			g, aerr := Apply(root, ordered[:k])
			if aerr != nil {
				continue // the prefix alone is no run (checkRead): on to the next
			}
			want = &g.Scenario
		}
		text, werr := writeSettings(root, ordered[:k])
		if werr != nil {
			return nil, unwritable(s, werr.Error())
		}
		diff, rerr := readsAs(root, text, want)
		if rerr != nil {
			return nil, unwritable(s, "written so, "+rerr.Error())
		}
		if diff != "" {
			return nil, unwritable(s, "the file reads otherwise ("+diff+")")
		}
	}
	return nil, unwritable(ordered[len(ordered)-1], "the file reads otherwise")
}

// writeSettings is root's text with sets written in its tree.
func writeSettings(root *File, sets []Setting) ([]byte, error) {
	var doc yaml.Node
	if err := safeDecode(yaml.NewDecoder(bytes.NewReader(root.Source)), &doc); err != nil || len(doc.Content) == 0 {
		return nil, &Error{Msg: "the file's text does not read as YAML (want a file Apply has read)"}
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
		if err := d.set(top, at); err != nil {
			if e, ok := err.(*Error); ok && e.Field == s.Flag {
				return nil, fmt.Errorf("written as %s: %s", at.Name, e.Msg)
			}
			return nil, err
		}
	}
	anchorAliases(&doc)
	var b bytes.Buffer
	enc := yaml.NewEncoder(&b)
	enc.SetIndent(2)
	if err := enc.Encode(&doc); err != nil {
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

// readsAs reads text as root's file and says where its scenario differs
// from want: "" when it reads the same, else the first field that does
// not.
func readsAs(root *File, text []byte, want *sim.Scenario) (string, error) {
	g := &File{Source: text, Path: root.Path, origin: root.origin, unread: true}
	got, _, err := g.rereadWith(nil)
	if err != nil {
		return "", err
	}
	return diffExported(reflect.ValueOf(got.Scenario), reflect.ValueOf(*want), "", 0), nil
}

// unwritable is the error for a setting Written cannot put in the file.
func unwritable(s Setting, why string) error {
	flag := FlagField(s.Name) + " " + s.Value
	if overrideName(s.Name) == "" || (overrideName(s.Name) == "topology" && isMapping(s.Value)) {
		flag = "--set " + s.Name + "=" + s.Value
	}
	return &Error{Field: s.Flag, Msg: fmt.Sprintf("%s (want the CLI's flag: %s)", why, flag)}
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
