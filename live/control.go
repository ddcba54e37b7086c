// The control plane: the fleet's control listener, on loopback and apart
// from the API ports, where a load run in another process applies the
// scenario's faults (FaultPath, behind the fleet's token), and
// RemoteFaults, that run's side of it.

package live

import (
	"crypto/rand"
	"crypto/subtle"
	"encoding/hex"
	"fmt"
	"io"
	"net"
	"net/http"
	"net/url"
	"strconv"
	"strings"

	"github.com/ratelim/ratelim/sim"
)

// listenControl starts the control listener on addr, which must be
// loopback, and draws the fleet's token.
func (f *Fleet) listenControl(addr string) error {
	host, _, err := net.SplitHostPort(addr)
	if err != nil || !isLoopback(host) {
		return optionError("Control", "%q is not a loopback host:port (want e.g. 127.0.0.1:0)", addr)
	}
	ln, err := net.Listen("tcp", addr)
	if err != nil {
		return optionError("Control", "%w", err)
	}
	var b [16]byte
	rand.Read(b[:])
	f.Token = hex.EncodeToString(b[:])
	f.ControlURL = "http://" + ln.Addr().String()
	mux := http.NewServeMux()
	mux.Handle(FaultPath, f.faultHandler())
	f.serve(newHTTPServer(mux, 0), ln)
	return nil
}

// FaultPath is where a fleet takes a scenario's faults from a load run in
// another process: POST with kind, start (1 or 0) and, for a partition,
// groups ("0,1|2,3"), for a crash, servers ("1,2"), and the header Authorization: Bearer TOKEN. It is
// served on the control listener only (Fleet.ControlURL, loopback), never
// on an API port.
const FaultPath = "/ratelim/fault"

// faultHandler serves FaultPath: a request without the fleet's token is
// refused with 401 before anything else of it is read (the token is
// compared in constant time), one that is not a POST with 405, a fault
// that does not parse or that Fault refuses with 400 and why; an applied
// one is answered 204.
func (f *Fleet) faultHandler() http.Handler {
	want := []byte("Bearer " + f.Token)
	return http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		if subtle.ConstantTimeCompare([]byte(r.Header.Get("Authorization")), want) != 1 {
			http.Error(w, "a fault needs the fleet's token (Authorization: Bearer TOKEN, as 'ratelim serve' printed it)", http.StatusUnauthorized)
			return
		}
		if r.Method != http.MethodPost {
			http.Error(w, "POST a fault", http.StatusMethodNotAllowed)
			return
		}
		fault, start, err := parseFault(r.URL.Query())
		if err == nil {
			err = f.Fault(fault, start)
		}
		if err != nil {
			http.Error(w, err.Error(), http.StatusBadRequest)
			return
		}
		w.WriteHeader(http.StatusNoContent)
	})
}

// parseFault reads a fault and its edge (start true for its beginning)
// from FaultPath's query, as RemoteFaults writes it. It reads the form
// only; Fault holds the fault to the fleet's servers (sim.Fault.Check).
func parseFault(q url.Values) (sim.Fault, bool, error) {
	f := sim.Fault{Kind: sim.FaultKind(q.Get("kind"))}
	if !f.Kind.Known() {
		return f, false, fmt.Errorf("unknown fault kind %q", f.Kind)
	}
	for _, n := range strings.Split(q.Get("servers"), ",") {
		if n = strings.TrimSpace(n); n == "" {
			continue
		}
		i, err := strconv.Atoi(n)
		if err != nil {
			return f, false, fmt.Errorf("servers: %q is not a server number (want e.g. 1,2)", n)
		}
		f.Servers = append(f.Servers, i)
	}
	for _, g := range strings.Split(q.Get("groups"), "|") {
		if g == "" {
			continue
		}
		var group []int
		for _, n := range strings.Split(g, ",") {
			i, err := strconv.Atoi(strings.TrimSpace(n))
			if err != nil {
				return f, false, fmt.Errorf("groups: %q is not a server number (want e.g. 0,1|2,3)", n)
			}
			group = append(group, i)
		}
		f.Groups = append(f.Groups, group)
	}
	switch q.Get("start") {
	case "1":
		return f, true, nil
	case "0":
		return f, false, nil
	}
	return f, false, fmt.Errorf("start: %q is neither 1 (the fault begins) nor 0 (it ends)", q.Get("start"))
}

// RemoteFaults returns an OnFault for a load run that applies faults to a
// fleet in another process through FaultPath on its control URL, with its
// token.
func RemoteFaults(client *http.Client, control, token string) func(sim.Fault, bool) error {
	target := control
	return func(f sim.Fault, start bool) error {
		q := url.Values{"kind": {string(f.Kind)}, "start": {"0"}}
		if start {
			q.Set("start", "1")
		}
		var groups []string
		for _, g := range f.Groups {
			var ns []string
			for _, n := range g {
				ns = append(ns, strconv.Itoa(n))
			}
			groups = append(groups, strings.Join(ns, ","))
		}
		if len(groups) > 0 {
			q.Set("groups", strings.Join(groups, "|"))
		}
		if f.Kind == sim.Crash {
			var ns []string
			for _, n := range f.Servers {
				ns = append(ns, strconv.Itoa(n))
			}
			q.Set("servers", strings.Join(ns, ","))
		}
		req, err := http.NewRequest(http.MethodPost, strings.TrimSuffix(target, "/")+FaultPath+"?"+q.Encode(), nil)
		if err != nil {
			return err
		}
		req.Header.Set("Authorization", "Bearer "+token)
		resp, err := client.Do(req)
		if err != nil {
			return err
		}
		defer resp.Body.Close()
		if resp.StatusCode != http.StatusNoContent {
			body, _ := io.ReadAll(io.LimitReader(resp.Body, 200))
			return fmt.Errorf("%s refused the fault: %s %s", target, resp.Status, strings.TrimSpace(string(body)))
		}
		return nil
	}
}
