package web

// A permalink: the whole of what the page shows, carried in the URL's
// fragment so that a link pasted into slides opens the same run, and no
// server ever sees it (a fragment is not sent).

import (
	"bytes"
	"compress/flate"
	"encoding/base64"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"strings"
)

// Setting is one field set over the scenario from the page, as
// scenarios.Setting takes it and `ratelim sim --set NAME=VALUE` types
// it: Name a setting's name (an override name such as algorithm or
// servers, or a field's path: limit.burst, clients[web].traffic.rate),
// Value its text as the file would write it.
type Setting struct {
	Name  string `json:"name"`
	Value string `json:"value"`
}

// State is everything a permalink carries: the scenario (a built-in by
// name while its text is unchanged, its YAML otherwise), the settings of
// run A, those that make run B from it, and whether the page opens
// asking for a prediction.
type State struct {
	// Builtin is a built-in's name, when its text is unchanged.
	Builtin string `json:"builtin,omitempty"`
	// YAML is the scenario's text otherwise: loaded, pasted, edited.
	// When set, it is the scenario, whatever Builtin says.
	YAML string `json:"yaml,omitempty"`
	// FileName is the name errors give YAML; "" is DefaultFileName.
	FileName string `json:"file,omitempty"`
	// Settings make run A from the file, as --set flags do.
	Settings []Setting `json:"set,omitempty"`
	// Vs make run B from run A, as --vs flags do; none, no run B.
	Vs []Setting `json:"vs,omitempty"`
	// Predict opens the page in predict-then-see mode.
	Predict bool `json:"predict,omitempty"`
}

// DefaultFileName is the name a scenario's text is given in errors and
// in the command that reproduces it when the page was given none.
const DefaultFileName = "scenario.yaml"

// fragmentVersion heads every fragment Encode writes: a later format
// gets another, and Decode refuses one it does not know rather than
// misread it.
const fragmentVersion = "v1."

// MaxFragment bounds a fragment both ways: Decode reads at most this
// much text and inflates it to at most this much JSON, so that a link
// crafted to inflate without end (a zip bomb) costs a megabyte, and
// Encode refuses a state that would not fit. A scenario file is 1–3 KB.
const MaxFragment = 1 << 20

// Encode is s as a URL fragment's payload (what follows "#"): "v1."
// then the state's JSON, deflated (raw DEFLATE, RFC 1951) and written in
// unpadded base64url, which a URL carries as it is. The same state
// always gives the same text.
func Encode(s State) (string, error) {
	data, err := json.Marshal(s)
	if err != nil {
		return "", fmt.Errorf("permalink: %w", err)
	}
	if len(data) > MaxFragment {
		return "", fmt.Errorf("permalink: the state is %d bytes of JSON, more than %d (want a shorter scenario)", len(data), MaxFragment)
	}
	var packed bytes.Buffer
	zw, err := flate.NewWriter(&packed, flate.BestCompression)
	if err != nil {
		return "", fmt.Errorf("permalink: %w", err)
	}
	if _, err := zw.Write(data); err != nil {
		return "", fmt.Errorf("permalink: %w", err)
	}
	if err := zw.Close(); err != nil {
		return "", fmt.Errorf("permalink: %w", err)
	}
	out := fragmentVersion + base64.RawURLEncoding.EncodeToString(packed.Bytes())
	if len(out) > MaxFragment {
		return "", fmt.Errorf("permalink: the link would be %d bytes, more than %d (want a shorter scenario)", len(out), MaxFragment)
	}
	return out, nil
}

// Decode reads a fragment Encode wrote (a leading "#" is allowed). It
// refuses, with a sentence saying what is wrong, a fragment longer than
// MaxFragment, one of another version, text that is not base64url, data
// that is not DEFLATE or inflates past MaxFragment, and JSON that is not
// one State: a field it does not know is refused, not dropped, since a
// link that carried it meant something this page cannot show.
func Decode(fragment string) (State, error) {
	fragment = strings.TrimPrefix(fragment, "#")
	if len(fragment) > MaxFragment {
		return State{}, fmt.Errorf("permalink: %d bytes, more than %d (want a link the page wrote)", len(fragment), MaxFragment)
	}
	payload, ok := strings.CutPrefix(fragment, fragmentVersion)
	if !ok {
		version, _, _ := strings.Cut(fragment, ".")
		if len(version) > 16 {
			version = version[:16] + "…"
		}
		return State{}, fmt.Errorf("permalink: unknown version %q (want %q: a link this page wrote; a newer page's link needs that page)", version, strings.TrimSuffix(fragmentVersion, "."))
	}
	// Unpadded, as Encode writes it; a link some tool padded reads too.
	packed, err := base64.RawURLEncoding.DecodeString(strings.TrimRight(payload, "="))
	if err != nil {
		return State{}, fmt.Errorf("permalink: not base64url text (%v): the link was cut or changed (want it whole, as copied)", err)
	}
	zr := flate.NewReader(bytes.NewReader(packed))
	data, err := io.ReadAll(io.LimitReader(zr, MaxFragment+1))
	if err != nil {
		return State{}, fmt.Errorf("permalink: the data does not inflate (%v): the link was cut or changed (want it whole, as copied)", err)
	}
	if len(data) > MaxFragment {
		return State{}, fmt.Errorf("permalink: the data inflates past %d bytes (want a link the page wrote)", MaxFragment)
	}
	var s State
	dec := json.NewDecoder(bytes.NewReader(data))
	dec.DisallowUnknownFields()
	if err := dec.Decode(&s); err != nil {
		return State{}, fmt.Errorf("permalink: not a playground state (%v) (want a link the page wrote)", err)
	}
	if _, err := dec.Token(); !errors.Is(err, io.EOF) {
		return State{}, errors.New("permalink: more than one state in the link (want a link the page wrote)")
	}
	return s, nil
}
