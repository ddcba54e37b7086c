package scenarios

import (
	"encoding/json"
	"fmt"
	"io"
	"regexp"
	"slices"
	"strconv"
	"strings"
)

// SchemaDraft is the JSON Schema draft Schema is written in: draft-07,
// the one yaml-language-server (and so VS Code's YAML extension, and the
// editors that run the server) validates with; it does not read the
// 2019-09 and 2020-12 drafts (redhat-developer/yaml-language-server issue
// 856, open).
const SchemaDraft = "http://json-schema.org/draft-07/schema#"

// The patterns of the values the parser reads from text. They accept what
// the parser accepts in form; its bounds (a duration in whole
// microseconds, a rate's period at least one) are checked by the parser
// alone. They are written in the subset of regular expressions that Go
// and ECMAScript (an editor's validator) read alike.
const (
	// durationPattern is a Go duration, as time.ParseDuration reads it.
	durationPattern = `^\s*[-+]?(0|(([0-9]+(\.[0-9]*)?|\.[0-9]+)(ns|us|µs|μs|ms|s|m|h))+)\s*$`
	// ratePattern is N, N/s, N/m, N/h or N/<duration>, as
	// algorithms.ParseRate reads it.
	ratePattern = `^\s*[-+]?[0-9]+\s*(/\s*(s|sec|second|m|min|minute|h|hour|(([0-9]+(\.[0-9]*)?|\.[0-9]+)(ns|us|µs|μs|ms|s|m|h))+)\s*)?$`
)

// storeURLPattern is a Redis URL of one of the schemes storeName takes.
func storeURLPattern() string {
	quoted := make([]string, len(storeSchemes))
	for i, s := range storeSchemes {
		quoted[i] = regexp.QuoteMeta(s)
	}
	return `^(` + strings.Join(quoted, "|") + `)://.+`
}

// pathPattern is a field's path as a key (limit.burst, limits[1].rate,
// clients[web].traffic[0].rate): names, each with its [entries], joined
// by dots, at least one dot or entry.
const pathPattern = `^[A-Za-z][A-Za-z0-9_-]*((\[[^\]]+\])+(\.[A-Za-z][A-Za-z0-9_-]*(\[[^\]]+\])*)*|(\.[A-Za-z][A-Za-z0-9_-]*(\[[^\]]+\])*)+)$`

// Schema writes the JSON Schema of a scenario file (draft-07), from the
// field table the parser reads: for an editor, with
//
//	# yaml-language-server: $schema=ratelim.schema.json
//
// at the top of a scenario file. A file the schema refuses, the parser
// refuses; the parser also checks what a schema cannot say (a fault
// within the run, a partition naming every server), so a file the schema
// accepts may still be refused, with its line and field.
func Schema(w io.Writer) error {
	defs := map[string]any{}
	for _, o := range objects {
		defs[o.name] = objectSchema(o)
	}
	// The top level is the scenario object itself, not a $ref to it:
	// draft-07 ignores the keywords beside a $ref.
	doc := objectSchema(&scenarioObject)
	doc["$schema"] = SchemaDraft
	doc["title"] = "ratelim scenario"
	doc["description"] = "A ratelim scenario file; `ratelim scenarios reference` describes every field."
	doc["definitions"] = defs
	out, err := json.MarshalIndent(doc, "", "  ")
	if err != nil {
		return err
	}
	_, err = w.Write(append(out, '\n'))
	return err
}

func objectSchema(o *object) map[string]any {
	props := map[string]any{}
	var required []string
	for _, f := range o.fields {
		s := valueSchema(f.value)
		s["description"] = f.doc
		props[f.name] = s
		if f.required {
			required = append(required, f.name)
		}
	}
	s := map[string]any{
		"type":                 "object",
		"description":          o.doc,
		"properties":           props,
		"additionalProperties": false,
	}
	if len(required) > 0 {
		s["required"] = required
	}
	if o.paths != "" {
		// A path's names are checked against the table by the parser
		// (CheckSettingName); the schema checks its shape.
		whole := `^(` + strings.Join(wholeFields(o.names()), "|") + `)$`
		s["patternProperties"] = map[string]any{pathPattern: map[string]any{"description": o.paths}, whole: map[string]any{"description": "a whole field of the top, as in the file"}}
	}
	var rules []any
	for _, group := range o.needOne {
		var forms []any
		for _, name := range group {
			forms = append(forms, map[string]any{"required": []string{name}})
		}
		rules = append(rules, map[string]any{"anyOf": forms})
	}
	for _, pair := range o.notBoth {
		rules = append(rules, map[string]any{"not": map[string]any{"required": pair[:]}})
	}
	if o.variantKey != "" {
		// The fields each variant reads: if the key has this value, the
		// other names are refused.
		for _, v := range o.variantValues {
			rules = append(rules, map[string]any{
				"if":   map[string]any{"properties": map[string]any{o.variantKey: map[string]any{"const": v}}, "required": []string{o.variantKey}},
				"then": map[string]any{"propertyNames": map[string]any{"enum": o.variantFields(v)}},
			})
		}
	}
	if len(rules) > 0 {
		s["allOf"] = rules
	}
	return s
}

func valueSchema(v value) map[string]any {
	switch v.kind {
	case textValue:
		return map[string]any{"type": []string{"string", "number", "boolean"}}
	case integerValue, numberValue:
		s := map[string]any{"type": "number"}
		if v.kind == integerValue {
			s["type"] = "integer"
		}
		if v.bounded {
			s["minimum"] = v.lo
			if v.hiOpen {
				s["exclusiveMaximum"] = v.hi
			} else {
				s["maximum"] = v.hi
			}
		}
		return s
	case booleanValue:
		return map[string]any{"type": "boolean"}
	case durationValue:
		return map[string]any{"anyOf": []any{
			map[string]any{"type": "string", "pattern": durationPattern},
			map[string]any{"const": 0},
		}}
	case rateValue:
		return map[string]any{"anyOf": []any{
			map[string]any{"type": "string", "pattern": ratePattern},
			map[string]any{"type": "integer"},
		}}
	case instantValue:
		return map[string]any{"type": "string"}
	case choiceValue:
		return map[string]any{"enum": v.choices}
	case constantValue:
		return map[string]any{"const": v.literal}
	case storeURLValue:
		return map[string]any{"type": "string", "pattern": storeURLPattern()}
	case nullValue:
		return map[string]any{"type": "null"}
	case objectValue:
		// A $ref beside other keywords is ignored in draft-07: the
		// description is put beside it through allOf.
		return map[string]any{"allOf": []any{map[string]any{"$ref": "#/definitions/" + v.object.name}}}
	case listValue:
		return map[string]any{"type": "array", "items": valueSchema(*v.item)}
	case anyOfValue:
		forms := make([]any, len(v.anyOf))
		for i, f := range v.anyOf {
			forms[i] = valueSchema(f)
		}
		return map[string]any{"anyOf": forms}
	}
	panic(fmt.Sprintf("scenarios: value kind %d has no schema", v.kind))
}

// ReferenceWidth is the width Reference wraps its lines to.
const ReferenceWidth = 80

// Reference writes the scenario format's field reference, from the field
// table the parser reads: each kind of mapping, each of its fields with
// what it holds and what it means, in lines of at most ReferenceWidth
// columns.
func Reference(w io.Writer) error {
	var b strings.Builder
	b.WriteString("A scenario file is YAML; these are its mappings and their fields. A duration\n")
	b.WriteString("is Go's (950ms, 1.5s, 2m); a rate is N/s, N/m, N/h, N/500ms or a bare N per\n")
	b.WriteString("second. `ratelim scenarios show NAME` prints a commented example.\n")
	for _, o := range objects {
		fmt.Fprintf(&b, "\n%s: %s\n", o.name, o.doc)
		width := 0
		for _, f := range o.fields {
			width = max(width, len(f.name))
		}
		width = min(width, 20)
		for i := 0; i < len(o.fields); {
			// Fields of one meaning in a row (an expectation's figures)
			// are one entry.
			j := i + 1
			for j < len(o.fields) && o.fields[j].doc == o.fields[i].doc && sameValue(o.fields[j].value, o.fields[i].value) {
				j++
			}
			f := o.fields[i]
			doc := f.doc
			if f.required {
				doc += "; required"
			}
			doc += " (" + describeValue(f.value) + ")"
			if j > i+1 {
				var names []string
				for _, g := range o.fields[i:j] {
					names = append(names, g.name)
				}
				for _, line := range wrap(strings.Join(names, ", "), ReferenceWidth-2) {
					fmt.Fprintf(&b, "  %s\n", line)
				}
				for _, line := range wrap(doc, ReferenceWidth-4-width) {
					fmt.Fprintf(&b, "  %-*s  %s\n", width, "", line)
				}
			} else {
				name := f.name
				for k, line := range wrap(doc, ReferenceWidth-4-width) {
					fmt.Fprintf(&b, "  %-*s  %s\n", width, name, line)
					if k == 0 {
						name = ""
					}
				}
			}
			i = j
		}
		if o.paths != "" {
			for k, line := range wrap(o.paths, ReferenceWidth-4-width) {
				name := "PATH"
				if k > 0 {
					name = ""
				}
				fmt.Fprintf(&b, "  %-*s  %s\n", width, name, line)
			}
		}
		if o.variantKey != "" {
			fmt.Fprintf(&b, "  By %s, each takes only:\n", o.variantKey)
			label := 0
			for _, v := range o.variantValues {
				label = max(label, len(v))
			}
			for _, v := range o.variantValues {
				own := slices.DeleteFunc(slices.Clone(o.variantFields(v)), func(s string) bool { return s == o.variantKey })
				text := strings.Join(own, ", ")
				if text == "" {
					text = "nothing more"
				}
				for k, line := range wrap(text, ReferenceWidth-6-label) {
					name := v
					if k > 0 {
						name = ""
					}
					fmt.Fprintf(&b, "    %-*s  %s\n", label, name, line)
				}
			}
		}
	}
	_, err := io.WriteString(w, b.String())
	return err
}

// sameValue reports whether a and b are written the same in the reference.
func sameValue(a, b value) bool { return describeValue(a) == describeValue(b) }

// describeValue says what a value is, for the reference.
func describeValue(v value) string {
	switch v.kind {
	case textValue:
		return "text"
	case integerValue:
		switch {
		case !v.bounded:
			return "a whole number"
		case v.lo == 0 && v.hi >= 1<<50:
			return "a whole number, 0 or more"
		case v.lo == 1 && v.hi >= 1<<50:
			return "a whole number, 1 or more"
		}
		return "a whole number, " + decimal(v.lo) + " to " + decimal(v.hi)
	case numberValue:
		switch {
		case !v.bounded:
			return "a number"
		case v.hiOpen:
			return "a number, " + decimal(v.lo) + " to below " + decimal(v.hi)
		}
		return "a number, " + decimal(v.lo) + " to " + decimal(v.hi)
	case booleanValue:
		return "true or false"
	case durationValue:
		return "a duration"
	case rateValue:
		return "a rate"
	case instantValue:
		return "a time: 2026-12-01T00:00:00Z, or 2026-12-01 10:00:00 in UTC"
	case choiceValue:
		return strings.Join(v.choices, " | ")
	case constantValue:
		return v.literal
	case storeURLValue:
		return "a Redis URL: " + strings.Join(storeSchemes, "://, ") + "://"
	case nullValue:
		return "empty"
	case objectValue:
		return "a mapping: " + v.object.name
	case listValue:
		return "a list of " + plural(*v.item)
	case anyOfValue:
		forms := make([]string, len(v.anyOf))
		for i, f := range v.anyOf {
			forms[i] = describeValue(f)
		}
		return strings.Join(forms, ", or ")
	}
	return "?"
}

// plural says what a list's items are, for the reference.
func plural(v value) string {
	switch v.kind {
	case objectValue:
		return v.object.name + " mappings"
	case listValue:
		return "lists of " + plural(*v.item)
	case integerValue:
		return "whole numbers (" + strings.TrimPrefix(describeValue(v), "a whole number, ") + ")"
	case textValue:
		return "texts"
	case anyOfValue:
		forms := make([]string, len(v.anyOf))
		for i, f := range v.anyOf {
			forms[i] = plural(f)
		}
		return strings.Join(forms, " or ")
	}
	return "values (" + describeValue(v) + ")"
}

// decimal writes x in full, without an exponent.
func decimal(x float64) string { return strconv.FormatFloat(x, 'f', -1, 64) }

// wrap breaks s into lines of at most width columns, at spaces; a word
// longer than width stands on a line of its own.
func wrap(s string, width int) []string {
	var lines []string
	line := ""
	for _, word := range strings.Fields(s) {
		switch {
		case line == "":
			line = word
		case len([]rune(line))+1+len([]rune(word)) <= width:
			line += " " + word
		default:
			lines = append(lines, line)
			line = word
		}
	}
	return append(lines, line)
}
