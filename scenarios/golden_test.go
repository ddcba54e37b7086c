package scenarios

import (
	"bytes"
	"context"
	"flag"
	"fmt"
	"os"
	"path/filepath"
	"reflect"
	"slices"
	"strings"
	"testing"

	"github.com/ratelim/ratelim/sim"
)

var update = flag.Bool("update", false, "rewrite the golden files under testdata/")

// dump renders a parsed file for a golden: every field of the Scenario
// that is set, one per line as path=value, then the expectations as they
// read, and the question. Fields left at their zero value are not
// written, so adding a field to a struct changes no golden until a file
// sets it.
func dump(f *File) []byte {
	var lines []string
	stable(reflect.ValueOf(f.Scenario), "", &lines)
	var b bytes.Buffer
	for _, l := range lines {
		b.WriteString(l + "\n")
	}
	for _, e := range f.Expect {
		fmt.Fprintf(&b, "expect (line %d): %s\n", e.Line, e.Text)
	}
	if q := f.Question; q != nil {
		fmt.Fprintf(&b, "question (line %d): %q figure=%s subject=%q pick=%q\n", q.Line, q.Ask, q.Figure, q.Subject, q.Pick)
	}
	return b.Bytes()
}

// stable appends v's set leaves as "path=value": structs by field name,
// slices by index, maps by sorted key; a value with a String method (a
// rate, a duration) is a leaf.
func stable(v reflect.Value, path string, out *[]string) {
	if path != "" && v.IsZero() {
		return
	}
	if _, ok := v.Interface().(fmt.Stringer); ok {
		*out = append(*out, fmt.Sprintf("%s=%v", path, v.Interface()))
		return
	}
	join := func(name string) string {
		if path == "" {
			return name
		}
		return path + "." + name
	}
	switch v.Kind() {
	case reflect.Struct:
		for i := range v.NumField() {
			if f := v.Type().Field(i); f.IsExported() {
				stable(v.Field(i), join(f.Name), out)
			}
		}
	case reflect.Slice, reflect.Array:
		for i := range v.Len() {
			stable(v.Index(i), fmt.Sprintf("%s[%d]", path, i), out)
		}
	case reflect.Map:
		keys := v.MapKeys()
		slices.SortFunc(keys, func(a, b reflect.Value) int { return strings.Compare(fmt.Sprint(a), fmt.Sprint(b)) })
		for _, k := range keys {
			stable(v.MapIndex(k), fmt.Sprintf("%s[%v]", path, k), out)
		}
	case reflect.Pointer, reflect.Interface:
		stable(v.Elem(), path, out)
	default:
		*out = append(*out, fmt.Sprintf("%s=%v", path, v.Interface()))
	}
}

// golden compares got with the golden file at path, or with -update
// writes it.
func golden(t *testing.T, path string, got []byte) {
	t.Helper()
	if *update {
		if err := os.WriteFile(path, got, 0o644); err != nil {
			t.Fatal(err)
		}
		return
	}
	want, err := os.ReadFile(path)
	if err != nil {
		t.Fatalf("%v (go test ./scenarios -update creates it)", err)
	}
	if !bytes.Equal(got, want) {
		t.Errorf("%s differs from its golden file (go test ./scenarios -update rewrites it):\n--- got\n%s\n--- want\n%s", path, got, want)
	}
}

// TestBuiltinGolden pins what each built-in parses to, defaults included:
// a change in the loader that changes a scenario shows here.
func TestBuiltinGolden(t *testing.T) {
	for _, name := range Builtin() {
		t.Run(name, func(t *testing.T) {
			f, err := Open(name)
			if err != nil {
				t.Fatal(err)
			}
			golden(t, filepath.Join("testdata", name+".golden"), dump(f))
		})
	}
}

// TestBuiltinFindingsGolden pins what each built-in teaches: its findings,
// one per line, the headline first. A change in the simulator or in the
// findings that changes a built-in's lesson shows here.
func TestBuiltinFindingsGolden(t *testing.T) {
	for _, name := range Builtin() {
		t.Run(name, func(t *testing.T) {
			f, err := Open(name)
			if err != nil {
				t.Fatal(err)
			}
			r, err := sim.Run(context.Background(), f.Scenario, sim.Options{})
			if err != nil {
				t.Fatal(err)
			}
			var b bytes.Buffer
			for _, fd := range r.Findings {
				fmt.Fprintf(&b, "%s client=%q key=%q value=%g\n  %s\n", fd.Kind, fd.Client, fd.Key, fd.Value, fd.Text)
			}
			golden(t, filepath.Join("testdata", name+".findings.golden"), b.Bytes())
		})
	}
}
