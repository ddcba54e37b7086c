package plots

import (
	"fmt"
	"slices"
	"strings"

	"github.com/ratelim/ratelim/internal/words"
)

// Grouping the traffic panels: clients alike step by step share one, and
// past maxPanels the rest are folded into "others".

// collapse puts the panels with equal signatures into one, where the
// first of them was: eight bastions running the same loop on keys of
// their own draw the same figures step by step, and eight copies of one
// panel would only push the rest of the figure off the page. The panel
// draws one client's figures and says they are each one's.
func collapse(all []traffic, sigs []string) []traffic {
	first := map[string]int{} // signature → index in out
	var out []traffic
	var groups [][]string
	for i, t := range all {
		if j, ok := first[sigs[i]]; ok && !t.folded {
			groups[j] = append(groups[j], t.name)
			for _, k := range t.keys {
				if !slices.Contains(out[j].keys, k) {
					out[j].keys = append(out[j].keys, k)
				}
			}
			continue
		}
		first[sigs[i]] = len(out)
		out = append(out, t)
		groups = append(groups, []string{t.name})
	}
	for j, names := range groups {
		if len(names) == 1 {
			continue
		}
		t := &out[j]
		t.name = groupName(names)
		t.members = names
		t.count = len(names)
		t.lead = fmt.Sprintf("%d alike, step by step:", len(names))
		// Each figure below is one member's; the limit line is one key's.
		var notes []string
		for _, n := range t.notes {
			if !strings.HasPrefix(n, "key ") {
				notes = append(notes, n)
			}
		}
		t.notes = append([]string{"each of them:"}, notes...)
	}
	return out
}

// groupName names clients with the same figures: "bastion-1…8 ×8" when
// they are one template's numbered run, else the first and how many.
func groupName(names []string) string {
	n := len(names)
	stem := strings.TrimRight(names[0], "0123456789")
	numbered := true
	for i, name := range names {
		num := strings.TrimPrefix(name, stem)
		if !strings.HasPrefix(name, stem) || num == "" || strings.Trim(num, "0123456789") != "" {
			numbered = false
			break
		}
		if i > 0 {
			prev := strings.TrimPrefix(names[i-1], stem)
			if atoi(num) != atoi(prev)+1 {
				numbered = false
				break
			}
		}
	}
	if numbered {
		return fmt.Sprintf("%s%s…%s ×%d", stem, strings.TrimPrefix(names[0], stem), strings.TrimPrefix(names[n-1], stem), n)
	}
	return fmt.Sprintf("%s and %d alike ×%d", names[0], n-1, n)
}

func atoi(s string) int {
	n := 0
	for _, c := range s {
		n = n*10 + int(c-'0')
		if n > 1e9 {
			return -1
		}
	}
	return n
}

// fold keeps at most maxPanels panels. Past that, maxPanels-1 keep their
// own and the rest are added up into one "others" panel, which names them.
//
// Which ones keep a panel: clients generated from one template
// (bastion-1 … bastion-16) look alike, so each family — the name without
// its trailing digits — gets a panel in turn, in order of first
// appearance, until the panels run out. Sixteen bastions and a scheduler
// give bastion-1 … bastion-10, the scheduler, and "others: 6 clients".
func fold(all []traffic, by string, nSteps int) []traffic {
	if len(all) <= maxPanels {
		return all
	}
	budget := maxPanels - 1
	var families []string
	members := map[string][]int{}
	for i, t := range all {
		f := strings.TrimRight(t.name, "0123456789")
		if _, ok := members[f]; !ok {
			families = append(families, f)
		}
		members[f] = append(members[f], i)
	}
	keep := make([]bool, len(all))
	for round, kept := 0, 0; kept < budget; round++ {
		progressed := false
		for _, f := range families {
			if round < len(members[f]) && kept < budget {
				keep[members[f][round]] = true
				kept++
				progressed = true
			}
		}
		if !progressed {
			break
		}
	}
	return foldUnkept(all, keep, by, nSteps)
}

// focusOn gives the panels named in focus one each, in focus's order (at
// most maxPanels-1 of them), and adds up the rest into "others".
func focusOn(all []traffic, focus []string, by string, nSteps int) []traffic {
	rank := map[string]int{}
	for i, name := range focus {
		if _, dup := rank[name]; !dup && len(rank) < maxPanels-1 {
			rank[name] = i
		}
	}
	keep := make([]bool, len(all))
	for i, t := range all {
		_, keep[i] = rank[t.name]
	}
	out := foldUnkept(all, keep, by, nSteps)
	kept := out[:len(out)]
	if n := len(out); n > 0 && out[n-1].folded {
		kept = out[:n-1]
	}
	slices.SortStableFunc(kept, func(a, b traffic) int { return rank[a.name] - rank[b.name] })
	return out
}

// foldUnkept keeps the panels keep says, in order, and adds up the rest
// into one "others" panel after them (none when every panel is kept).
func foldUnkept(all []traffic, keep []bool, by string, nSteps int) []traffic {
	var out []traffic
	others := traffic{steps: make([]counts, nSteps), folded: true}
	for i, t := range all {
		if keep[i] {
			out = append(out, t)
			continue
		}
		n := max(1, t.count)
		if n > 1 {
			others.members = append(others.members, t.members...)
		} else {
			others.members = append(others.members, t.name)
		}
		for _, k := range t.keys {
			if !slices.Contains(others.keys, k) {
				others.keys = append(others.keys, k)
			}
		}
		for range n {
			for j, s := range t.steps {
				others.steps[j].add(s)
			}
			others.total.add(t.total)
		}
	}
	if len(others.members) == 0 {
		return out
	}
	noun := words.Plural(len(others.members), by, by+"s")
	others.name = fmt.Sprintf("others: %d %s", len(others.members), noun)
	others.notes = admittedNotes(others.total, 0, 0, false)
	if len(others.keys) > 1 {
		others.notes = append(others.notes, fmt.Sprintf("limit line × %d keys", len(others.keys)))
	}
	return append(out, others)
}
