package importrule

import (
	"bytes"
	"encoding/json"
	"errors"
	"io"
	"os"
	"os/exec"
	"slices"
	"strings"
	"testing"
)

// load is the module's packages and everything they depend on, as `go
// list -deps` sees them (test files excluded).
func load(t *testing.T) Graph {
	t.Helper()
	if _, err := exec.LookPath("go"); err != nil {
		t.Skip("no go command to list the packages with:", err)
	}
	g := Graph{Imports: map[string][]string{}, Standard: map[string]bool{}}
	// Listed for this platform and for the browser's (GOOS=js
	// GOARCH=wasm), each package's imports the union of both: web/wasm
	// builds for the browser alone, and a file built for one platform
	// alone is held to the rules too.
	for _, env := range [][]string{nil, {"GOOS=js", "GOARCH=wasm"}} {
		cmd := exec.Command("go", "list", "-deps", "-json=ImportPath,Imports,Standard", Module+"/...")
		cmd.Env = append(os.Environ(), env...)
		var stderr bytes.Buffer
		cmd.Stderr = &stderr
		out, err := cmd.Output()
		if err != nil {
			t.Fatalf("go list %v: %v\n%s", env, err, stderr.Bytes())
		}
		dec := json.NewDecoder(bytes.NewReader(out))
		for {
			var p struct {
				ImportPath string
				Imports    []string
				Standard   bool
			}
			if err := dec.Decode(&p); errors.Is(err, io.EOF) {
				break
			} else if err != nil {
				t.Fatalf("go list's output: %v", err)
			}
			imports := g.Imports[p.ImportPath]
			for _, imp := range p.Imports {
				if !slices.Contains(imports, imp) {
					imports = append(imports, imp)
				}
			}
			g.Imports[p.ImportPath] = imports // the key set even with none: the package exists
			g.Standard[p.ImportPath] = p.Standard
		}
	}
	return g
}

// The module keeps its layering: every rule of the package doc holds.
func TestModuleKeepsItsLayering(t *testing.T) {
	g := load(t)
	if len(g.Imports[Module+"/sim"]) == 0 {
		t.Fatalf("go list listed no imports for sim: %d packages", len(g.Imports))
	}
	for _, b := range Check(g, Rules, TestHelpers) {
		t.Error(b)
	}
}

// graph builds a Graph from "a -> b c" lines of module-relative names;
// a name with a dot is outside the module, one without a slash outside
// it and standard ("fmt").
func graph(lines ...string) Graph {
	g := Graph{Imports: map[string][]string{}, Standard: map[string]bool{}}
	full := func(p string) string {
		switch {
		case strings.Contains(p, "."):
			return p
		case !strings.Contains(p, "/") && slices.Contains([]string{"fmt", "time", "net"}, p):
			g.Standard[p] = true
			return p
		}
		return Module + "/" + p
	}
	for _, l := range lines {
		from, to, _ := strings.Cut(l, "->")
		f := full(strings.TrimSpace(from))
		g.Imports[f] = append(g.Imports[f], nil...)
		for _, d := range strings.Fields(to) {
			g.Imports[f] = append(g.Imports[f], full(d))
			if _, ok := g.Imports[full(d)]; !ok {
				g.Imports[full(d)] = nil
			}
		}
	}
	return g
}

// Check finds each kind of broken rule and names the chain of imports
// that breaks it; on a graph that keeps the rules it finds nothing.
func TestCheckNamesTheForbiddenEdge(t *testing.T) {
	good := []string{
		"algorithms -> fmt time algorithms/internal/exact",
		"algorithms/internal/exact -> time",
		"algorithms/peers -> algorithms algorithms/internal/exact",
		"routecost -> fmt",
		"store -> algorithms",
		"store/redisstore -> algorithms store github.com/redis/go-redis/v9 github.com/alicebob/miniredis/v2",
		"topology -> algorithms",
		"route -> algorithms store topology",
		"sim -> algorithms algorithms/peers store topology route internal/escape",
		"internal/escape -> fmt",
		"internal/words -> fmt github.com/dustin/go-humanize",
		"internal/syncbuf -> fmt",
		"httplimit -> routecost store github.com/prometheus/client_golang/prometheus",
		"replay -> sim routecost",
		"scenarios -> replay sim",
		"scenarios/scenariotest -> scenarios",
		"live -> httplimit sim store/redisstore",
		"report -> sim", "plots -> sim", "tui -> sim", "cmd/ratelim -> live scenarios simrun store/redisstore probe",
		"simrun -> scenarios report sim internal/escape",
		"probe -> fmt time",
		"web -> simrun scenarios report plots sim",
		"web/wasm -> web",
		"web/site -> web/static internal/outfile fmt", "web/site/internal/gen -> web/site internal/outfile", "web/static -> fmt",
	}
	if broken := Check(graph(good...), Rules, TestHelpers); len(broken) != 0 {
		t.Fatalf("a graph that keeps the rules broke them:\n%s", strings.Join(broken, "\n"))
	}
	for _, tc := range []struct {
		name  string
		edits []string // lines added to good
		want  string
	}{
		{"the loader links the middleware", []string{"replay -> httplimit"},
			"forbidden import: scenarios -> replay -> httplimit (scenarios must not depend on httplimit"},
		{"prometheus in the loader", []string{"replay -> github.com/prometheus/client_golang/prometheus"},
			"forbidden import: replay -> github.com/prometheus/client_golang/prometheus (replay must not"},
		{"an internal helper runs back up", []string{"internal/escape -> scenarios"},
			"forbidden import: internal/escape -> scenarios (internal/escape may depend on [internal/...] only"},
		{"the probe links the fleet", []string{"probe -> live"},
			"forbidden import: probe -> live (probe may depend on [internal/...] only"},
		{"the words import the simulator", []string{"internal/words -> sim"},
			"forbidden import: internal/words -> sim (internal/words may depend on [] only"},
		{"the words import another internal package", []string{"internal/words -> internal/escape"},
			"forbidden import: internal/words -> internal/escape (internal/words may depend on [] only"},
		{"algorithms imports a third-party package", []string{"algorithms -> github.com/x/y"},
			"forbidden import: algorithms -> github.com/x/y (algorithms must not depend on third-party"},
		{"the arithmetic imports its user", []string{"algorithms/internal/exact -> algorithms"},
			"forbidden import: algorithms/internal/exact -> algorithms (algorithms/internal/exact may depend on [] only"},
		{"the way to a decision imports the simulator", []string{"route -> sim"},
			"forbidden import: route -> sim"},
		{"a peer model imports a store", []string{"algorithms/peers -> store"},
			"forbidden import: algorithms/peers -> store (algorithms/peers may depend on [algorithms] only"},
		{"the simulator imports a view", []string{"sim -> report"},
			"forbidden import: sim -> report (sim may depend on"},
		{"a store imports the simulator", []string{"store -> sim"},
			"forbidden import: store -> sim (store may depend on [algorithms] only"},
		{"a view links the Redis driver", []string{"plots -> store/redisstore"},
			"forbidden import: plots -> store/redisstore -> github.com/redis/go-redis/v9 (plots must not depend on github.com/redis/go-redis/..."},
		{"the loader links miniredis", []string{"scenarios -> github.com/alicebob/miniredis/v2"},
			"forbidden import: scenarios -> github.com/alicebob/miniredis/v2 (scenarios must not depend on github.com/alicebob/miniredis/..."},
		{"the store links the Redis client again", []string{"store -> github.com/redis/go-redis/v9"},
			"forbidden import: store -> github.com/redis/go-redis/v9 (store must not depend on github.com/redis/go-redis/..."},
		{"the simulator imports the driver", []string{"sim -> store/redisstore"},
			"forbidden import: sim -> store/redisstore (sim may depend on"},
		{"the driver imports the simulator", []string{"store/redisstore -> sim"},
			"forbidden import: store/redisstore -> sim (store/redisstore may depend on [algorithms store] only"},
		{"the browser's pipeline links the terminal", []string{"simrun -> tui"},
			"forbidden import: simrun -> tui (simrun must not depend on tui"},
		{"the browser's pipeline starts processes", []string{"report -> os/exec"},
			"forbidden import: simrun -> report -> os/exec (simrun must not depend on os/exec"},
		{"the browser's pipeline links Redis", []string{"simrun -> store/redisstore"},
			"forbidden import: simrun -> store/redisstore"},
		{"the playground links the fleet", []string{"web -> live"},
			"forbidden import: web -> live (web must not depend on live"},
		{"the bridge links the CLI", []string{"web/wasm -> cmd/ratelim"},
			"forbidden import: web/wasm -> cmd/ratelim (web/wasm must not depend on cmd/..."},
		{"the playground's site links the simulator", []string{"web/site -> simrun"},
			"forbidden import: web/site -> simrun (web/site may depend on [web/site web/static internal/...] only"},
		{"the page's files import a package", []string{"web/static -> internal/escape"},
			"forbidden import: web/static -> internal/escape (web/static may depend on [] only"},
		{"the simulator forgets the peers", nil, ""},
		{"a program imports a test helper", []string{"live -> internal/syncbuf"},
			"forbidden import: live -> internal/syncbuf (a test helper"},
		{"a test helper outside tests", []string{"sim -> scenarios/scenariotest"},
			"forbidden import: sim -> scenarios/scenariotest (a test helper"},
	} {
		lines := append(slices.Clone(good), tc.edits...)
		if tc.want == "" { // the simulator without the peers
			lines = slices.DeleteFunc(lines, func(l string) bool { return strings.HasPrefix(l, "sim ->") })
			lines = append(lines, "sim -> algorithms store topology")
			tc.want = "missing import: sim does not depend on algorithms/peers"
		}
		broken := Check(graph(lines...), Rules, TestHelpers)
		if !slices.ContainsFunc(broken, func(b string) bool { return strings.Contains(b, tc.want) }) {
			t.Errorf("%s: Check found\n\t%s\nwant a line containing %q", tc.name, strings.Join(broken, "\n\t"), tc.want)
		}
	}
	// A rule about a package that is not there holds for nothing: it is
	// reported, so that moving a package moves its rule too.
	moved := slices.DeleteFunc(slices.Clone(good), func(l string) bool { return strings.HasPrefix(l, "routecost") })
	moved = slices.DeleteFunc(moved, func(l string) bool { return strings.HasPrefix(l, "httplimit") || strings.HasPrefix(l, "replay") })
	moved = append(moved, "replay -> sim", "httplimit -> store")
	broken := Check(graph(moved...), Rules, TestHelpers)
	if !slices.ContainsFunc(broken, func(b string) bool { return strings.Contains(b, "rule for routecost: no such package") }) {
		t.Errorf("a rule for a missing package was not reported: %q", broken)
	}
}
