package httplimit

import (
	"net/http"
	"testing"
	"time"

	"github.com/dunglas/httpsfv"

	"github.com/ratelim/ratelim/algorithms"
)

// The fields the middleware writes, read by an independent RFC 9651 parser
// (github.com/dunglas/httpsfv, a test-only dependency): each is a List of
// Items whose bare item is a String and whose parameters are Integers, and
// they say what ReadFields reads.
func TestFieldsParseWithHTTPSFV(t *testing.T) {
	odd := []Quota{{Name: `per "user"`, Limit: 5, Window: time.Second}, {Name: `a\b c`, Limit: 999_999_999_999_999}, {Name: "~!#$%&'()*+,-./:;<=>?@[]^_`{|}", Limit: 7, Window: 24 * time.Hour}}
	shadowed := []Quota{burstHourly[0], {Name: "hourly", Limit: 1000, Window: time.Hour, Shadow: true}}
	tests := []struct {
		name     string
		policies []Quota
		d        algorithms.Decision
	}{
		{"admitted", burstHourly, algorithms.Decision{Allowed: true, Limit: 1000, Remaining: 3, Binding: 1, BindingResetAfter: 1500 * time.Millisecond}},
		{"429", burstHourly, algorithms.Decision{Limit: 20, RetryAfter: 80 * time.Millisecond, Binding: 0}},
		{"shadowed", shadowed, algorithms.Decision{Allowed: true, WouldReject: true, Limit: 20, Remaining: 7}},
		{"odd names", odd, algorithms.Decision{Allowed: true, Limit: 7, Remaining: 6, Binding: 2, BindingResetAfter: time.Hour}},
		{"odd names, never", odd, algorithms.Decision{Limit: 5, RetryAfter: algorithms.Never, Binding: 1}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			h := mustNew(t, Config{Limiter: &fixed{tt.d}, Policies: tt.policies, Clock: newClock().Now}, &counting{})
			w := get(h)
			rd, err := ReadFields(w.Header())
			if err != nil {
				t.Fatal(err)
			}
			policy := sfvList(t, w.Header(), "RateLimit-Policy", "q", "w")
			if len(policy) != len(rd.Policies) {
				t.Fatalf("httpsfv reads %d policies, ReadFields %d", len(policy), len(rd.Policies))
			}
			for i, m := range policy {
				q := rd.Policies[i]
				w, hasW := m.params["w"]
				if m.name != q.Name || m.params["q"] != q.Limit || seconds(w) != q.Window || hasW != (q.Window > 0) {
					t.Errorf("policy %d: httpsfv reads %+v, ReadFields %+v", i, m, q)
				}
			}
			rl := sfvList(t, w.Header(), "RateLimit", "r", "t")
			if len(rl) != 1 || rl[0].name != rd.Policy || rl[0].params["r"] != rd.Remaining || seconds(rl[0].params["t"]) != rd.Reset {
				t.Errorf("RateLimit: httpsfv reads %+v, ReadFields %+v", rl, rd)
			}
		})
	}
}

// sfvMember is one List member as httpsfv reads it, in our terms.
type sfvMember struct {
	name   string
	params map[string]int64
}

// sfvList parses field with httpsfv, and fails unless it is a List of
// String Items with Integer parameters among keys.
func sfvList(t *testing.T, h http.Header, field string, keys ...string) []sfvMember {
	t.Helper()
	list, err := httpsfv.UnmarshalList(h.Values(field))
	if err != nil {
		t.Fatalf("%s %q: httpsfv: %v", field, h.Values(field), err)
	}
	var out []sfvMember
	for _, m := range list {
		it, ok := m.(httpsfv.Item)
		if !ok {
			t.Fatalf("%s: member %T, want an Item", field, m)
		}
		name, ok := it.Value.(string)
		if !ok {
			t.Fatalf("%s: bare item %T (%v), want a String", field, it.Value, it.Value)
		}
		sm := sfvMember{name: name, params: map[string]int64{}}
		for _, k := range it.Params.Names() {
			v, _ := it.Params.Get(k)
			n, ok := v.(int64)
			if !ok || !contains(keys, k) {
				t.Fatalf("%s: parameter %s=%v (%T), want an Integer among %v", field, k, v, v, keys)
			}
			sm.params[k] = n
		}
		out = append(out, sm)
	}
	return out
}

func contains(ss []string, s string) bool {
	for _, x := range ss {
		if x == s {
			return true
		}
	}
	return false
}

// The package's own parser and httpsfv agree on the Lists they both claim:
// what parseSFList accepts httpsfv accepts with the same members, and a
// List of String Items with Integer or Boolean parameters that
// httpsfv accepts, parseSFList accepts. (parseSFList refuses the rest of
// RFC 9651 on purpose: tokens, decimals, inner lists, ... are not what a
// RateLimit field carries.)
func TestParseSFListAgreesWithHTTPSFV(t *testing.T) {
	corpus := []string{
		`"default";q=100;w=10`, `"permin";q=50;w=60, "perhr";q=1000;w=3600`, `"a\"b\\c";r=0;t=5`, `"x";flag`,
		` "x";q=1`, `"d";q=1;   w=2`, `"d";q=-1`, `"d" , "e"`, `"d";q=1  ,  "e";q=2`, "\"d\";q=1\t,\t\"e\";q=2",
		`"d";q=1;q=2`, `"d";q=000000000000001`, `"d";a.b-c_d=3`, `"d";q=1;*x=2`, `"*";q=1`, `"with space";q=1`,
		``, `default;q=1`, `"d";q=1.5`, `"d";Q=1`, `"d";q=`, `"d";q=1,`, `"d" "e"`, `"d";q=1234567890123456`,
		`"unterminated`, `"bad\escape"`, `"d";q=1;`, `"d";q="1"`, `"d";q=?0`, `"d";q=?1`, `"d";q=?2`, `"d";q=?`, `"d";f=?1;f=3`, `"d";f=3;f`, `("d";q=1)`, `"d";q=1 `,
		`"d"; q=1`, `"d" ;q=1`, `"d";q=-0`, `"d";q=--1`, "\"d\";q=1,\t", `,"d"`, `"d",,"e"`, "\"tab\there\"",
		`"d";q=999999999999999`, `"d";q=-999999999999999`, `"d";r=0;t=9223372037`,
	}
	for _, s := range corpus {
		ours, ourErr := parseSFList(s)
		theirs, theirErr := httpsfv.UnmarshalList([]string{s})
		if ourErr == nil {
			if theirErr != nil {
				t.Errorf("%q: parseSFList accepts it, httpsfv says %v", s, theirErr)
				continue
			}
			if len(ours) != len(theirs) {
				t.Errorf("%q: %d members, httpsfv %d", s, len(ours), len(theirs))
				continue
			}
			for i, m := range theirs {
				it, ok := m.(httpsfv.Item)
				if !ok || it.Value != any(ours[i].name) {
					t.Errorf("%q: member %d is %v to httpsfv, %q to parseSFList", s, i, m, ours[i].name)
					continue
				}
				for _, k := range it.Params.Names() {
					v, _ := it.Params.Get(k)
					want := ours[i].params[k]
					n, isInt := v.(int64)
					b, isBool := v.(bool)
					if isInt != !ours[i].booleans[k] || (isInt && n != want) || (isBool && b != (want == 1)) {
						t.Errorf("%q: member %d parameter %s is %v to httpsfv, %d to parseSFList", s, i, k, v, want)
					}
				}
			}
			continue
		}
		if theirErr == nil && ourShape(theirs) {
			t.Errorf("%q: httpsfv accepts it, parseSFList says %v", s, ourErr)
		}
	}
}

// ourShape reports whether l is a List of String Items with Integer or
// Boolean parameters: what parseSFList parses.
func ourShape(l httpsfv.List) bool {
	if len(l) == 0 {
		return false // an empty field: no List to parse
	}
	for _, m := range l {
		it, ok := m.(httpsfv.Item)
		if !ok {
			return false
		}
		if _, ok := it.Value.(string); !ok {
			return false
		}
		for _, k := range it.Params.Names() {
			v, _ := it.Params.Get(k)
			_, isInt := v.(int64)
			_, isBool := v.(bool)
			if !isInt && !isBool {
				return false
			}
		}
	}
	return true
}
