package routecost

import "testing"

// Parse reads a rule as a flag gives it, refuses what is not one, and
// String writes it back as Parse reads it.
func TestParse(t *testing.T) {
	for _, tc := range []struct {
		in   string
		want Rule
		err  bool
	}{
		{"GET /search*=5", Rule{Method: "GET", Glob: "/search*", Cost: 5}, false},
		{"/export/*=20", Rule{Glob: "/export/*", Cost: 20}, false},
		{"post=3", Rule{Method: "POST", Cost: 3}, false},
		{"GET /search", Rule{}, true},
		{"GET /search=0", Rule{}, true},
		{"GET /search=1e3", Rule{}, true},
		{"GET /search=1073741825", Rule{}, true},
		{"GET /[=2", Rule{}, true},
		{"GET /a /b=2", Rule{}, true},
	} {
		got, err := Parse(tc.in)
		if (err != nil) != tc.err || (!tc.err && got != tc.want) {
			t.Errorf("Parse(%q) = %+v, %v; want %+v (error %v)", tc.in, got, err, tc.want, tc.err)
		}
		if !tc.err && got.String() != tc.in && got.String() != "POST=3" {
			t.Errorf("%q reads back as %q", tc.in, got.String())
		}
	}
}

// Of prices by the first rule that matches, 1 when none does: a method
// compared without regard to case, a glob whose * stays within a segment.
func TestOf(t *testing.T) {
	rules := []Rule{
		{Method: "GET", Glob: "/search/*", Cost: 5},
		{Glob: "/search/*", Cost: 7}, // other methods
		{Method: "POST", Cost: 10},
		{Glob: "/export", Cost: 20}, // never reached by a POST
	}
	for _, tc := range []struct {
		method, path string
		want         int64
	}{
		{"GET", "/search/books", 5},
		{"get", "/search/books", 5},
		{"HEAD", "/search/books", 7},
		{"GET", "/search/a/b", 1},
		{"POST", "/orders", 10},
		{"POST", "/export", 10}, // the first match wins
		{"GET", "/export", 20},
		{"GET", "/", 1},
	} {
		if got := Of(rules, tc.method, tc.path); got != tc.want {
			t.Errorf("Of(%s %s) = %d, want %d", tc.method, tc.path, got, tc.want)
		}
	}
	if got := Of(nil, "GET", "/"); got != 1 {
		t.Errorf("Of(no rules) = %d, want 1", got)
	}
}

// Check refuses a rule that could never price anything right.
func TestCheck(t *testing.T) {
	for _, tc := range []struct {
		rule Rule
		ok   bool
	}{
		{Rule{Method: "GET", Glob: "/search*", Cost: 5}, true},
		{Rule{Cost: Max}, true},
		{Rule{Glob: "/[", Cost: 1}, false},
		{Rule{Method: "GET", Cost: 0}, false},
		{Rule{Cost: Max + 1}, false},
	} {
		if err := tc.rule.Check(); (err == nil) != tc.ok {
			t.Errorf("%+v.Check() = %v, want ok %v", tc.rule, err, tc.ok)
		}
	}
}
