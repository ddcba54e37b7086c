package scenarios

import (
	"bytes"
	"encoding/json"
	"go/ast"
	"go/parser"
	"go/token"
	"os"
	"path/filepath"
	"slices"
	"strconv"
	"strings"
	"testing"

	"github.com/santhosh-tekuri/jsonschema/v6"
	"go.yaml.in/yaml/v3"
)

// compiledSchema compiles what Schema writes, with a validator that
// reads draft-07 as an editor's does.
func compiledSchema(t *testing.T) *jsonschema.Schema {
	t.Helper()
	var b bytes.Buffer
	if err := Schema(&b); err != nil {
		t.Fatal(err)
	}
	doc, err := jsonschema.UnmarshalJSON(&b)
	if err != nil {
		t.Fatalf("the schema is not JSON: %v", err)
	}
	c := jsonschema.NewCompiler()
	c.DefaultDraft(jsonschema.Draft7)
	if err := c.AddResource("ratelim.schema.json", doc); err != nil {
		t.Fatal(err)
	}
	s, err := c.Compile("ratelim.schema.json")
	if err != nil {
		t.Fatalf("the schema does not compile: %v", err)
	}
	return s
}

// instance is a YAML file as a JSON Schema validator sees it: what an
// editor's YAML language server validates.
func instance(t *testing.T, data []byte) any {
	t.Helper()
	var v any
	if err := yaml.Unmarshal(data, &v); err != nil {
		t.Fatal(err)
	}
	j, err := json.Marshal(v)
	if err != nil {
		t.Fatal(err)
	}
	inst, err := jsonschema.UnmarshalJSON(bytes.NewReader(j))
	if err != nil {
		t.Fatal(err)
	}
	return inst
}

// validScenarios are the scenario files of the repository that load: the
// built-ins, the peers' under docs/, replay's trace example, and the
// annotated example of the package doc's Format section.
func validScenarios(t *testing.T) map[string][]byte {
	t.Helper()
	out := map[string][]byte{}
	for _, name := range Builtin() {
		data, _ := builtin(name)
		out["builtin/"+name+".yaml"] = data
	}
	for _, glob := range []string{"../docs/peers/*.yaml", "../replay/testdata/*.yaml"} {
		paths, err := filepath.Glob(glob)
		if err != nil || len(paths) == 0 {
			t.Fatalf("%s: %v, %d files", glob, err, len(paths))
		}
		for _, p := range paths {
			if _, err := Load(p); err != nil {
				t.Fatalf("%s does not load: %v", p, err)
			}
			data, err := os.ReadFile(p)
			if err != nil {
				t.Fatal(err)
			}
			out[p] = data
		}
	}
	example := docFormatExample(t)
	if _, err := Parse("example.yaml", example); err != nil {
		t.Fatalf("doc.go's Format example does not parse: %v", err)
	}
	out["doc.go's Format example"] = example
	return out
}

// docFormatExample is the annotated scenario of doc.go's # Format section.
func docFormatExample(t *testing.T) []byte {
	t.Helper()
	src, err := os.ReadFile("doc.go")
	if err != nil {
		t.Fatal(err)
	}
	_, after, ok := strings.Cut(string(src), "// # Format\n")
	if !ok {
		t.Fatal("doc.go has no # Format section")
	}
	var b strings.Builder
	for _, line := range strings.Split(after, "\n") {
		text, ok := strings.CutPrefix(line, "//\t")
		if !ok && b.Len() > 0 {
			break // the example's end
		}
		if ok {
			b.WriteString(text + "\n")
		}
	}
	return []byte(b.String())
}

func TestSchemaAcceptsEveryScenario(t *testing.T) {
	s := compiledSchema(t)
	files := validScenarios(t)
	if len(files) < len(Builtin())+2 {
		t.Fatalf("only %d scenarios to check", len(files))
	}
	for name, data := range files {
		if err := s.Validate(instance(t, data)); err != nil {
			t.Errorf("%s loads, but the schema refuses it: %v", name, err)
		}
	}
}

// The forms the parser takes for one value are each valid, and what it
// refuses by field or choice the schema refuses too.
func TestSchemaFormsAndRefusals(t *testing.T) {
	s := compiledSchema(t)
	const base = "duration: 30s\nclients: [{name: web, api_key: w, traffic: {pattern: constant, rate: 5/s}}]\n"
	tests := []struct {
		name, yaml string
		valid      bool
	}{
		{"rate as N/s", "limit: {rate: 10/s, burst: 5}", true},
		{"rate as a bare number", "limit: {rate: 10, burst: 5}", true},
		{"rate per duration", "limit: {rate: 5/500ms, burst: 5}", true},
		{"duration 1.5s", "limit: {rate: 10/s, burst: 5}\nstep: 1.5s", true},
		{"duration bare 0", "limit: {rate: 10/s, burst: 5}\ntopology: {rtt: 0}", true},
		{"shadow true", "limit: {rate: 10/s, burst: 5, shadow: true}", true},
		{"shadow until", "limit: {rate: 10/s, burst: 5, shadow: {until: 15s}}", true},
		{"limits", "limits: [{name: a, rate: 10/s, burst: 5}, {name: b, algorithm: fixed-window, rate: 100/m, window: 1m}]", true},
		{"api_key a number", "limit: {rate: 10/s, burst: 5}\nservers: 2", true},
		{"retry a word", "limit: {rate: 10/s, burst: 5}\nfaults: [{kind: latency, start: 1s, end: 2s, rtt: 50ms}]", true},
		{"primary never", "limit: {rate: 10/s, burst: 5}\ntopology: {kind: split-brain, primary_stops_after: never}", true},
		{"failover never", "limit: {rate: 10/s, burst: 5}\ntopology: {kind: split-brain, failover_after: never}", true},
		{"store URL", "limit: {rate: 10/s, burst: 5}\ntopology: {store: \"redis://localhost:6379\"}", true},
		{"empty faults", "limit: {rate: 10/s, burst: 5}\nfaults:", true},
		{"clock skew", "limit: {rate: 10/s, burst: 5}\nservers: 2\nfaults: [{kind: clock-skew, start: 1s, end: 2s, offset: -2s, drift: 0.01, servers: [1]}]", true},
		{"shedder", "limit: {rate: 10/s, burst: 5}\nshedder: {capacity: 100/s, reserve: {normal: 0.29, sheddable: 0.5}}", true},

		{"with a path", "limit: {rate: 10/s, burst: 5}\nexpect: [{client: web, allowed: {min: 1}, with: {limit.burst: 20, \"clients[web].traffic.rate\": 1/s, rate: 3/s}}]", true},
		{"with an index", "limit: {rate: 10/s, burst: 5}\nexpect: [{client: web, allowed: {min: 1}, with: {\"clients[0].count\": 2}}]", true},

		{"with an unknown flag", "limit: {rate: 10/s, burst: 5}\nexpect: [{client: web, allowed: {min: 1}, with: {brust: 20}}]", false},
		{"unknown top field", "limit: {rate: 10/s, burst: 5}\nseeds: 2", false},
		{"unknown limit field", "limit: {rate: 10/s, burst: 5, bursts: 5}", false},
		{"unknown algorithm", "limit: {algorithm: token_bucket, rate: 10/s, burst: 5}", false},
		{"unknown topology kind", "limit: {rate: 10/s, burst: 5}\ntopology: {kind: global}", false},
		{"unknown on_error", "limit: {rate: 10/s, burst: 5}\ntopology: {on_error: open}", false},
		{"a rate with no number", "limit: {rate: fast, burst: 5}", false},
		{"a duration with no unit", "limit: {rate: 10/s, burst: 5}\nstep: 1", false},
		{"a duration in days", "limit: {rate: 10/s, burst: 5}\nstep: 7d", false},
		{"a fault kind's foreign field", "limit: {rate: 10/s, burst: 5}\nfaults: [{kind: outage, start: 1s, end: 2s, rtt: 5ms}]", false},
		{"a share of 1", "limit: {rate: 10/s, burst: 5}\nshedder: {capacity: 100/s, reserve: {normal: 1}}", false},
		{"limit and limits", "limit: {rate: 10/s, burst: 5}\nlimits: [{name: a, rate: 10/s, burst: 5}]", false},
		{"neither limit nor limits", "servers: 2", false},
		{"shadow a word", "limit: {rate: 10/s, burst: 5, shadow: sometimes}", false},
	}
	for _, tt := range tests {
		data := []byte(base + tt.yaml + "\n")
		if tt.name == "api_key a number" {
			data = bytes.Replace(data, []byte("api_key: w"), []byte("api_key: 12345"), 1)
		}
		if tt.name == "retry a word" {
			data = bytes.Replace(data, []byte("rate: 5/s}"), []byte("rate: 5/s}, retry: backoff"), 1)
		}
		_, parseErr := Parse("t.yaml", data)
		if (parseErr == nil) != tt.valid {
			t.Fatalf("%s: the parser says %v, and the test wants valid=%v:\n%s", tt.name, parseErr, tt.valid, data)
		}
		err := s.Validate(instance(t, data))
		if (err == nil) != tt.valid {
			t.Errorf("%s: the parser says %v, the schema %v:\n%s", tt.name, parseErr, err, data)
		}
	}
}

// A pattern of traffic takes only its own fields, in the schema as in the
// parser; and a trace pattern takes a trace's.
func TestSchemaVariants(t *testing.T) {
	s := compiledSchema(t)
	for _, tt := range []struct {
		traffic string
		valid   bool
	}{
		{"{pattern: burst, count: 5, at: 1s}", true},
		{"{pattern: burst, count: 5, at: 1s, rate: 5/s}", false},
		{"{pattern: ramp, from: 0, to: 10/s}", true},
		{"[{pattern: constant, rate: 1/s}, {pattern: trace, file: access.log, only: \"ip:1.2.3.4\"}]", true},
		{"{pattern: trace, file: access.log, retry: none}", false},
		{"{pattern: trace}", false},
	} {
		data := []byte("duration: 30s\nlimit: {rate: 1/s, burst: 1}\nclients: [{name: w, ip: 1.2.3.4, traffic: " + tt.traffic + "}]\n")
		if err := s.Validate(instance(t, data)); (err == nil) != tt.valid {
			t.Errorf("traffic %s: schema says %v, want valid=%v", tt.traffic, err, tt.valid)
		}
	}
}

// fieldContexts say, for each object of the table, a scenario and the
// path in it of one such mapping, so that a test can put any field into
// it.
var fieldContexts = []struct {
	object *object
	path   string
	yaml   string
}{
	{&scenarioObject, "", ""},
	{&limitObject, "limit", ""},
	{&questionObject, "question", `question: {ask: "How many get through?", figure: allowed}`},
	{&shadowObject, "limit.shadow", "limit: {rate: 10/s, burst: 5, shadow: {until: 5s}}"},
	{&shedderObject, "shedder", "shedder: {capacity: 100/s}"},
	{&reserveObject, "shedder.reserve", "shedder: {capacity: 100/s, reserve: {normal: 0.2}}"},
	{&topologyObject, "topology", "topology: {kind: shared}"},
	{&breakerObject, "topology.breaker", "topology: {kind: shared, breaker: {failures: 5, cooldown: 1s}}"},
	{&localTierObject, "topology.local", "topology: {kind: two-tier, local: {rate: 5/s, burst: 2}}"},
	{&regionObject, "topology.regions[0]", "topology: {kind: regions, regions: [{name: a, servers: 1}]}\nclients: [{name: web, api_key: w, region: a, traffic: {pattern: constant, rate: 5/s}}]"},
	{&clientObject, "clients[0]", ""},
	{&patternObject, "clients[0].traffic", ""},
	{&tracePatternObject, "clients[0].traffic", "clients: [{name: web, api_key: w, traffic: {pattern: trace, file: ../replay/testdata/access.log}}]"},
	{&retryObject, "clients[0].retry", "clients: [{name: web, api_key: w, traffic: {pattern: constant, rate: 5/s}, retry: {policy: backoff}}]"},
	{&serviceObject, "clients[0].service", "clients: [{name: web, api_key: w, traffic: {pattern: constant, rate: 5/s}, service: {mean: 1ms}}]"},
	{&traceObject, "trace", "trace: {file: ../replay/testdata/access.log}"},
	{&logFieldsObject, "trace.fields", "trace: {file: ../replay/testdata/access.log, fields: {time: ts}}"},
	{&faultObject, "faults[0]", "faults: [{kind: outage, start: 1s, end: 2s}]"},
	{&expectationObject, "expect[0]", "expect: [{client: web, allowed: {min: 1}}]"},
	{&boundsObject, "expect[0].allowed", "expect: [{client: web, allowed: {min: 1}}]"},
	{&spanObject, "expect[0].during", "expect: [{client: web, allowed: {min: 1}, during: {from: 1s}}]"},
	{&withObject, "expect[0].with", "expect: [{client: web, allowed: {min: 1}, with: {seed: 2}}]"},
}

// The parser reads exactly the table's fields: each field of each object
// is taken by the parser, which reads its value (a value of the wrong
// shape is refused at that field, not as an unknown field), and a name
// the table lacks is refused as unknown. A field put in the table that
// the parser does not read, or a mapping the parser reads through an
// object other than its own, fails here; a field the parser reads that
// the table lacks is refused by record, so no file can use it.
func TestFieldTableIsWhatTheParserReads(t *testing.T) {
	covered := map[*object]bool{}
	for _, c := range fieldContexts {
		covered[c.object] = true
		fields := append(slices.Clone(c.object.fields), field{name: "no_such_field", value: text()})
		for _, f := range fields {
			if f.value.kind == constantValue {
				// trace_pattern's pattern: trace, which is what makes the
				// mapping a trace pattern: any other value is another
				// pattern, whose fields these are not.
				continue
			}
			path := join(c.path, f.name)
			data := withField(t, c.yaml, c.path, f)
			_, err := Read("t.yaml", bytes.NewReader(data))
			e, ok := err.(*Error)
			if !ok {
				t.Errorf("%s: %s with a bad value is read without an error (%v): the parser ignores a field of the table:\n%s", c.object.name, path, err, data)
				continue
			}
			unknown := f.name == "no_such_field"
			if e.Field != path || strings.HasPrefix(e.Msg, "unknown field") != unknown {
				t.Errorf("%s: %s with a bad value: %v (want an error at that field, unknown=%v)", c.object.name, path, err, unknown)
			}
		}
	}
	for _, o := range objects {
		if !covered[o] {
			t.Errorf("object %s has no fieldContexts entry: its fields are not checked against the parser", o.name)
		}
	}
}

// withField returns a scenario (the base one with extra's top-level
// fields in place of its own) in which the mapping at path has field f
// set to a value of the wrong shape.
func withField(t *testing.T, extra, path string, f field) []byte {
	t.Helper()
	const base = "duration: 30s\nlimit: {rate: 10/s, burst: 5}\nclients: [{name: web, api_key: w, traffic: {pattern: constant, rate: 5/s}}]\n"
	var root, over yaml.Node
	if err := yaml.Unmarshal([]byte(base), &root); err != nil {
		t.Fatal(err)
	}
	if err := yaml.Unmarshal([]byte(extra), &over); err != nil {
		t.Fatal(err)
	}
	top := root.Content[0]
	if len(over.Content) > 0 {
		for i := 0; i+1 < len(over.Content[0].Content); i += 2 {
			set(top, over.Content[0].Content[i].Value, over.Content[0].Content[i+1])
		}
	}
	m := top
	for _, step := range strings.FieldsFunc(path, func(r rune) bool { return r == '.' }) {
		key, idx, isList := strings.Cut(strings.TrimSuffix(step, "]"), "[")
		m = get(m, key)
		if isList {
			if idx != "0" {
				t.Fatalf("path %s: only [0] is supported", path)
			}
			m = m.Content[0]
		}
	}
	// A value no reader takes: a word, which is no number, duration,
	// rate, choice, list or mapping; for a text, which takes any scalar, a
	// list.
	bad := &yaml.Node{Kind: yaml.ScalarNode, Style: yaml.DoubleQuotedStyle, Value: "-bad-"}
	if f.value.kind == textValue {
		bad = &yaml.Node{Kind: yaml.SequenceNode, Style: yaml.FlowStyle}
	}
	set(m, f.name, bad)
	out, err := yaml.Marshal(&root)
	if err != nil {
		t.Fatal(err)
	}
	return out
}

func get(m *yaml.Node, key string) *yaml.Node {
	for i := 0; i+1 < len(m.Content); i += 2 {
		if m.Content[i].Value == key {
			return m.Content[i+1]
		}
	}
	return &yaml.Node{Kind: yaml.MappingNode}
}

func set(m *yaml.Node, key string, v *yaml.Node) {
	for i := 0; i+1 < len(m.Content); i += 2 {
		if m.Content[i].Value == key {
			m.Content[i+1] = v
			return
		}
	}
	m.Content = append(m.Content, &yaml.Node{Kind: yaml.ScalarNode, Value: key}, v)
}

func TestReference(t *testing.T) {
	var b bytes.Buffer
	if err := Reference(&b); err != nil {
		t.Fatal(err)
	}
	golden(t, "testdata/reference.golden", b.Bytes())
	for i, line := range strings.Split(b.String(), "\n") {
		if n := len([]rune(line)); n > ReferenceWidth {
			t.Errorf("line %d is %d columns (want at most %d): %q", i+1, n, ReferenceWidth, line)
		}
	}
	// Every object and field is named.
	for _, o := range objects {
		if !strings.Contains(b.String(), "\n"+o.name+": ") {
			t.Errorf("the reference has no heading for %s", o.name)
		}
		for _, f := range o.fields {
			if !strings.Contains(b.String(), " "+f.name+" ") && !strings.Contains(b.String(), " "+f.name+",") && !strings.Contains(b.String(), " "+f.name+"\n") {
				t.Errorf("the reference does not name %s.%s", o.name, f.name)
			}
		}
	}
}

func TestSchemaGolden(t *testing.T) {
	var b bytes.Buffer
	if err := Schema(&b); err != nil {
		t.Fatal(err)
	}
	golden(t, "testdata/scenario.schema.json", b.Bytes())
}

// Every field name the parser's source reads a record by (f.values["x"],
// f.keys["x"], f.has("x"), f.field("x")) is a field of the table: a field
// added to the parser without the table would be refused as unknown in
// every file, and is caught here instead.
func TestParserReadsOnlyTableFields(t *testing.T) {
	known := map[string]bool{}
	for _, o := range objects {
		for _, name := range o.names() {
			known[name] = true
		}
	}
	paths, err := filepath.Glob("*.go")
	if err != nil {
		t.Fatal(err)
	}
	fset := token.NewFileSet()
	read := 0
	for _, path := range paths {
		if strings.HasSuffix(path, "_test.go") {
			continue
		}
		file, err := parser.ParseFile(fset, path, nil, 0)
		if err != nil {
			t.Fatal(err)
		}
		ast.Inspect(file, func(n ast.Node) bool {
			var sel *ast.SelectorExpr
			var arg ast.Expr
			switch n := n.(type) {
			case *ast.IndexExpr:
				sel, _ = n.X.(*ast.SelectorExpr)
				arg = n.Index
			case *ast.CallExpr:
				sel, _ = n.Fun.(*ast.SelectorExpr)
				if len(n.Args) == 1 {
					arg = n.Args[0]
				}
			}
			lit, isLit := arg.(*ast.BasicLit)
			if sel == nil || !isLit || lit.Kind != token.STRING || !slices.Contains([]string{"values", "keys", "has", "field"}, sel.Sel.Name) {
				return true
			}
			name, err := strconv.Unquote(lit.Value)
			if err != nil {
				t.Fatal(err)
			}
			read++
			if !known[name] {
				t.Errorf("%s: the parser reads a field %q that no object of the table has", fset.Position(lit.Pos()), name)
			}
			return true
		})
	}
	if read < 50 {
		t.Errorf("found the parser reading %d fields by name; the search has lost its way", read)
	}
}

// Choices gives a field's choices as the parser checks them, by path; a
// path that names no field, or one without a fixed set, gives none.
func TestChoices(t *testing.T) {
	tests := []struct {
		path string
		want []string
	}{
		{"topology.kind", topologyKinds},
		{"balancer", balancers},
		{"topology.on_error", onErrorPolicies},
		{"topology.clock", clockSources},
		{"topology.store", storeNames},
		{"limit.key", keyKinds},
		{"duration", nil},
		{"topology.nothing", nil},
		{"duration.kind", nil},
	}
	for _, tt := range tests {
		if got := Choices(tt.path); !slices.Equal(got, tt.want) {
			t.Errorf("Choices(%q) = %q, want %q", tt.path, got, tt.want)
		}
	}
	Choices("balancer")[0] = "changed"
	if balancers[0] == "changed" {
		t.Error("Choices returned the parser's own list, which a caller can change")
	}
}
