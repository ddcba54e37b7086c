package web

import (
	"bytes"
	"compress/flate"
	"encoding/base64"
	"reflect"
	"strings"
	"testing"

	"pgregory.net/rapid"
)

// Any state survives its permalink: Decode(Encode(s)) is s.
func TestStateSurvivesItsPermalink(t *testing.T) {
	rapid.Check(t, func(t *rapid.T) {
		settings := func(label string) []Setting {
			n := rapid.IntRange(0, 4).Draw(t, label+" count")
			if n == 0 {
				return nil // omitted when empty: none and an empty list are one
			}
			out := make([]Setting, n)
			for i := range out {
				out[i] = Setting{Name: rapid.String().Draw(t, label+" name"), Value: rapid.String().Draw(t, label+" value")}
			}
			return out
		}
		s := State{
			Builtin:  rapid.String().Draw(t, "builtin"),
			YAML:     rapid.String().Draw(t, "yaml"),
			FileName: rapid.String().Draw(t, "file"),
			Settings: settings("set"),
			Vs:       settings("vs"),
			Predict:  rapid.Bool().Draw(t, "predict"),
		}
		fragment, err := Encode(s)
		if err != nil {
			t.Fatalf("Encode(%+v): %v", s, err)
		}
		if !strings.HasPrefix(fragment, "v1.") || strings.ContainsAny(fragment, "+/=#&?% ") {
			t.Fatalf("fragment %q: want v1. and base64url, which a URL carries as it is", fragment)
		}
		got, err := Decode(fragment)
		if err != nil {
			t.Fatalf("Decode(Encode(%+v)): %v", s, err)
		}
		if !reflect.DeepEqual(got, s) {
			t.Fatalf("Decode(Encode(s)) = %+v, want %+v", got, s)
		}
	})
}

// A built-in's permalink is short: what a teacher pastes into a slide.
func TestBuiltinPermalinkIsShort(t *testing.T) {
	fragment, err := Encode(State{Builtin: "runaway-healthcheck", Settings: []Setting{{"limit.burst", "20"}}, Vs: []Setting{{"topology", "local"}}})
	if err != nil || len(fragment) > 200 {
		t.Errorf("Encode: %q (%d bytes), %v; want a link of at most 200 bytes", fragment, len(fragment), err)
	}
}

// packed is data deflated and written as a fragment of version v1.
func packed(t *testing.T, data []byte) string {
	t.Helper()
	var b bytes.Buffer
	zw, _ := flate.NewWriter(&b, flate.BestCompression)
	zw.Write(data)
	zw.Close()
	return "v1." + base64.RawURLEncoding.EncodeToString(b.Bytes())
}

func TestDecodeRefusesWhatNoPageWrote(t *testing.T) {
	good, err := Encode(State{Builtin: "partition"})
	if err != nil {
		t.Fatal(err)
	}
	bomb := packed(t, make([]byte, MaxFragment+1)) // a megabyte of zeros deflates to a kilobyte
	if len(bomb) > 4096 {
		t.Fatalf("the bomb is %d bytes: no bomb", len(bomb))
	}
	for _, tc := range []struct {
		name, fragment, want string
	}{
		{"another version", "v2." + good[3:], `unknown version "v2"`},
		{"no version", "hello", `unknown version "hello"`},
		{"empty", "", `unknown version ""`},
		{"not base64url", "v1.ab$cd", "not base64url"},
		{"standard base64", "v1.ab+/", "not base64url"},
		{"not deflate", "v1." + base64.RawURLEncoding.EncodeToString([]byte{0xff, 0xff, 0xff, 0xff}), "does not inflate"},
		{"cut short", good[:len(good)-4], ""}, // whichever of base64 or inflate notices
		{"a zip bomb", bomb, "inflates past 1048576 bytes"},
		{"too long", "v1." + strings.Repeat("A", MaxFragment), "more than 1048576"},
		{"an unknown field", packed(t, []byte(`{"builtin":"partition","colour":"red"}`)), `unknown field "colour"`},
		{"a field of the wrong type", packed(t, []byte(`{"predict":"yes"}`)), "not a playground state"},
		{"two states", packed(t, []byte(`{"builtin":"a"}{"builtin":"b"}`)), "more than one state"},
		{"not JSON", packed(t, []byte(`builtin: partition`)), "not a playground state"},
	} {
		s, err := Decode(tc.fragment)
		if err == nil {
			t.Errorf("%s: Decode = %+v, want an error", tc.name, s)
			continue
		}
		if msg := err.Error(); !strings.HasPrefix(msg, "permalink: ") || !strings.Contains(msg, tc.want) || !strings.Contains(msg, "(want") {
			t.Errorf("%s: %q, want permalink: ... %q ... (want ...)", tc.name, msg, tc.want)
		}
	}
	// A leading '#', as location.hash has it, and padding some tool added, read.
	if s, err := Decode("#" + good + "=="); err != nil || s.Builtin != "partition" {
		t.Errorf("Decode(#...==) = %+v, %v; want the state", s, err)
	}
}

func TestEncodeRefusesAStateTooBigForALink(t *testing.T) {
	if _, err := Encode(State{YAML: strings.Repeat("x", MaxFragment+1)}); err == nil || !strings.Contains(err.Error(), "more than") {
		t.Errorf("Encode of more than MaxFragment: %v, want refused", err)
	}
}
