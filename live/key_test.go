package live

import (
	"context"
	"fmt"
	"maps"
	"net/http"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/ratelim/ratelim/algorithms"
	"github.com/ratelim/ratelim/sim"
)

// The fleet keys a request exactly as the scenario's limit.key says: a
// client that rotates a header the limit does not read stays in its bucket,
// and one that leaves out the header the limit does read is refused with
// 400, never keyed by something else it chose. Each case: a limit of one a
// minute with a burst of 2, six requests.
func TestServeKeysAsTheScenarioSays(t *testing.T) {
	limited := []int{200, 200, 429, 429, 429, 429}
	tests := []struct {
		key    sim.KeyBy
		header func(i int) map[string]string
		want   []int
	}{
		// Keyed by IP: neither an API key nor a user moves the request
		// out of its address's bucket.
		{sim.KeyIP, func(i int) map[string]string { return map[string]string{"X-API-Key": fmt.Sprint("k", i)} }, limited},
		{sim.KeyIP, func(i int) map[string]string { return map[string]string{"X-User": fmt.Sprint("u", i)} }, limited},
		// Keyed by user: a rotating API key does not either.
		{sim.KeyUser, func(i int) map[string]string {
			return map[string]string{"X-User": "alice", "X-API-Key": fmt.Sprint("k", i)}
		}, limited},
		// Keyed by API key: a rotating user does not.
		{sim.KeyAPIKey, func(i int) map[string]string {
			return map[string]string{"X-API-Key": "k", "X-User": fmt.Sprint("u", i)}
		}, limited},
		// Without the attribute the limit reads: 400, whatever else.
		{sim.KeyUser, func(i int) map[string]string { return map[string]string{"X-API-Key": fmt.Sprint("k", i)} }, []int{400, 400, 400, 400, 400, 400}},
		{sim.KeyAPIKey, func(i int) map[string]string { return map[string]string{"X-User": fmt.Sprint("u", i)} }, []int{400, 400, 400, 400, 400, 400}},
		// Auto is the scenario's own precedence: the API key first.
		{sim.KeyAuto, func(i int) map[string]string { return map[string]string{"X-API-Key": fmt.Sprint("k", i%2)} }, []int{200, 200, 200, 200, 429, 429}},
	}
	for _, tt := range tests {
		sent := slices.Sorted(maps.Keys(tt.header(0)))
		t.Run(fmt.Sprintf("key %s, sent %s", tt.key, strings.Join(sent, " ")), func(t *testing.T) {
			sc := sim.Scenario{Name: "key", Duration: time.Minute, Servers: 1, Seed: 1,
				Limit:    sim.Limit{Algorithm: "token-bucket", Key: tt.key, Params: algorithms.Params{Rate: algorithms.Rate{N: 1, Per: time.Minute}, Burst: 2}},
				Topology: sim.Topology{Kind: sim.Local}}
			fleet := startFleet(t, sc, "memory")
			var got []int
			for i := range tt.want {
				req, err := http.NewRequestWithContext(context.Background(), http.MethodGet, fleet.URLs[0]+"/api", nil)
				if err != nil {
					t.Fatal(err)
				}
				for k, v := range tt.header(i) {
					req.Header.Set(k, v)
				}
				resp, err := http.DefaultClient.Do(req)
				if err != nil {
					t.Fatal(err)
				}
				resp.Body.Close()
				got = append(got, resp.StatusCode)
			}
			if !slices.Equal(got, tt.want) {
				t.Errorf("statuses %v, want %v", got, tt.want)
			}
		})
	}
}
