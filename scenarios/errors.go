package scenarios

import (
	"fmt"
	"sort"
	"strings"

	"github.com/ratelim/ratelim/internal/words"
)

// Error is a scenario that cannot be used, located in its file: what the CLI
// prints, in one line, as
//
//	runaway.yaml:14: clients[1].traffic.rate: "fast" is not a rate (want e.g. 100/s)
//
// Field is the path of the offending field from the top of the document,
// with list indexes counted from 0 as they are written (clients[1] is the
// second entry under clients:, before count expands it). Line is 1-based;
// it is 0, and left out, when no line is to blame (an unknown built-in name).
// Field is empty for an error of the file as a whole, such as invalid YAML.
type Error struct {
	File  string
	Line  int
	Field string
	Msg   string
}

func (e *Error) Error() string {
	var b strings.Builder
	if e.File != "" {
		b.WriteString(e.File)
		if e.Line > 0 {
			fmt.Fprintf(&b, ":%d", e.Line)
		}
		b.WriteString(": ")
	}
	if e.Field != "" {
		b.WriteString(e.Field)
		b.WriteString(": ")
	}
	b.WriteString(e.Msg)
	return b.String()
}

// unknown is the message for a word that is not one of choices, with the
// closest choice suggested when one is close enough to be a typo:
//
//	unknown balancer "round-robbin", did you mean "round-robin"? (want round-robin, random or key-hash)
func unknown(what, got string, choices []string) string {
	msg := fmt.Sprintf("unknown %s %s", what, quote(got))
	if s := suggest(got, choices); s != "" {
		msg += fmt.Sprintf(", did you mean %q?", s)
	}
	return msg + " (want " + words.OneOf(choices) + ")"
}

// suggest returns the choice closest to got, or "" if none is close: at
// most a third of got's length in edits (and at least one), so that "colour"
// suggests nothing among the traffic fields but "trafic" suggests traffic.
// Case, '-' and '_' are ignored first: on-error is one edit from on_error
// for a person, zero here.
func suggest(got string, choices []string) string {
	norm := func(s string) string {
		return strings.NewReplacer("-", "", "_", "", " ", "").Replace(strings.ToLower(s))
	}
	g := norm(got)
	if g == "" || len(g) > 64 {
		return ""
	}
	best, bestD := "", max(1, len(g)/3)+1
	for _, c := range choices {
		if d := editDistance(g, norm(c)); d < bestD {
			best, bestD = c, d
		}
	}
	return best
}

// editDistance is the optimal-string-alignment distance between a and b,
// in bytes: the fewest insertions, deletions, substitutions and swaps of
// neighbours that turn a into b (so "nmae" is one edit from "name").
func editDistance(a, b string) int {
	// d[i][j] is the distance between a[:i] and b[:j], three rows at a time.
	prev2 := make([]int, len(b)+1)
	prev := make([]int, len(b)+1)
	cur := make([]int, len(b)+1)
	for j := range prev {
		prev[j] = j
	}
	for i := 1; i <= len(a); i++ {
		cur[0] = i
		for j := 1; j <= len(b); j++ {
			cost := 1
			if a[i-1] == b[j-1] {
				cost = 0
			}
			cur[j] = min(prev[j]+1, cur[j-1]+1, prev[j-1]+cost)
			if i > 1 && j > 1 && a[i-1] == b[j-2] && a[i-2] == b[j-1] {
				cur[j] = min(cur[j], prev2[j-2]+1)
			}
		}
		prev2, prev, cur = prev, cur, prev2
	}
	return prev[len(b)]
}

// sortedKeys returns m's keys in order, for messages that list them.
func sortedKeys[V any](m map[string]V) []string {
	keys := make([]string, 0, len(m))
	for k := range m {
		keys = append(keys, k)
	}
	sort.Strings(keys)
	return keys
}
