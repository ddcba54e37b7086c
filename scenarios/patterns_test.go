package scenarios

import (
	"testing"

	"github.com/ratelim/ratelim/sim"
)

// TestEveryPatternFieldIsRead: each field a pattern of the simulator's
// reads (sim.Patterns) has an example for the error that says it is
// missing, and a reader in the decoder: a pattern added in sim with a new
// field fails here until the decoder learns it.
func TestEveryPatternFieldIsRead(t *testing.T) {
	for _, p := range sim.Patterns() {
		for _, field := range p.Fields {
			if fieldExample[field] == "" {
				t.Errorf("pattern %s reads %s, which has no example (fieldExample)", p.Name, field)
			}
		}
		{
			yaml := "name: x\nduration: 30s\nlimit: {algorithm: token-bucket, rate: 10/s, burst: 10}\nclients:\n  - name: c\n    api_key: k\n    traffic: {pattern: " + string(p.Name)
			for _, f := range p.Fields {
				yaml += ", " + f + ": " + fieldExample[f]
			}
			yaml += "}\n"
			if _, err := Parse("pattern.yaml", []byte(yaml)); err != nil {
				t.Errorf("pattern %s with every field it reads, each at its example: %v", p.Name, err)
			}
		}
	}
}
