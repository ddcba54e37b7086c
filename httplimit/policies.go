package httplimit

import (
	"errors"
	"fmt"
	"math/bits"
	"net/http"
	"strconv"
	"strings"
	"time"

	"github.com/ratelim/ratelim/algorithms"
)

// Quota is one named policy of a key with several limits, as the RateLimit
// fields state it: Limit requests per Window, under Name. [Config.Policies]
// lists a key's policies; [QuotasOf] gives them for an [algorithms.Multi];
// [ReadFields] returns the ones an answer's RateLimit-Policy lists (Shadow
// and ShadowUntil then zero: a client is never told of a shadowed one).
type Quota struct {
	// Name names the policy in RateLimit-Policy and RateLimit: printable
	// ASCII, sent as a Structured Field String; distinct among a key's.
	Name string
	// Limit is q, the requests (in cost units) the policy allows per
	// Window: 1 or more.
	Limit int64
	// Window is w, rounded up to whole seconds; 0 leaves w out.
	Window time.Duration
	// Shadow says the policy is in shadow mode (a dark launch): while it
	// is, it is not listed in RateLimit-Policy, since clients must not
	// pace themselves by a limit that is not enforced. ShadowUntil, when
	// not the zero time, is the instant of the Clock it begins to enforce.
	// They must say what the limiter's own policies say (QuotasOf copies
	// them): the limiter decides; these only choose what is listed.
	Shadow      bool
	ShadowUntil time.Time
}

// QuotasOf returns one Quota per policy of alg, in order, for
// [Config.Policies]: each policy's limit and window as [QuotaOf] gives them
// for its algorithm, its name, and its shadow state. A Multi's ShadowUntil
// is read as Unix microseconds, the instants the middleware decides at
// ([algorithms.FromTime] of the Clock): what a Multi built for a live
// server holds (sim's NewAlgorithmAt with the server's start and origin 0).
// An algorithm that is not a Multi gives one Quota named
// [DefaultPolicyName]; nil gives none.
func QuotasOf(alg algorithms.Algorithm) []Quota {
	if alg == nil {
		return nil
	}
	m, ok := alg.(*algorithms.Multi)
	if !ok {
		limit, window := QuotaOf(alg)
		return []Quota{{Name: DefaultPolicyName, Limit: limit, Window: window}}
	}
	ps := m.Policies()
	out := make([]Quota, len(ps))
	for i, p := range ps {
		limit, window := QuotaOf(p.Algorithm)
		out[i] = Quota{Name: p.Name, Limit: limit, Window: window, Shadow: p.Shadow}
		if p.Shadow && p.ShadowUntil != 0 {
			out[i].ShadowUntil = time.UnixMicro(int64(p.ShadowUntil)).UTC()
		}
	}
	return out
}

// policySet is the middleware's view of a key's several policies
// (Config.Policies), with every RateLimit-Policy value it may send made
// once: one per set of listed policies, and the policies that may be
// shadowed are the only ones whose listing varies, so at most 2^k values
// for k shadowable policies (k ≤ algorithms.MaxLimits).
type policySet struct {
	quotas     []policyQuota
	all        uint // a bit per policy
	shadowable uint // a bit per policy with Shadow set
	// policyValues[listed] is the RateLimit-Policy value listing the
	// policies whose bits are set in listed; made for every listed that
	// is all minus a subset of shadowable.
	policyValues []string
}

// policyQuota is one policy's fixed part, quoted and formatted once.
type policyQuota struct {
	quotedName  string
	limit       int64
	limitValue  string // limit, formatted
	item        string // its RateLimit-Policy member: "name";q=..;w=..
	shadow      bool
	shadowUntil algorithms.Time // 0: for good
}

// newPolicySet checks qs as [New] does and makes their values.
func newPolicySet(qs []Quota) (*policySet, error) {
	if len(qs) > algorithms.MaxLimits {
		return nil, fmt.Errorf("httplimit: Config.Policies has %d policies (want at most %d)", len(qs), algorithms.MaxLimits)
	}
	s := &policySet{quotas: make([]policyQuota, len(qs)), all: 1<<len(qs) - 1}
	seen := make(map[string]bool, len(qs))
	for i, q := range qs {
		if q.Name == "" {
			return nil, fmt.Errorf("httplimit: Config.Policies[%d] has no name (want one for the RateLimit fields)", i)
		}
		if seen[q.Name] {
			return nil, fmt.Errorf("httplimit: Config.Policies names %q twice (want distinct names)", q.Name)
		}
		seen[q.Name] = true
		quoted, err := quoteSFString(q.Name)
		if err != nil {
			return nil, err
		}
		if q.Limit < 1 {
			return nil, fmt.Errorf("httplimit: Config.Policies[%d] (%q) has Limit %d (want 1 or more: q is what RateLimit-Policy states)", i, q.Name, q.Limit)
		}
		if q.Window < 0 {
			return nil, fmt.Errorf("httplimit: Config.Policies[%d] (%q) has Window %s (want 0, for none, or more)", i, q.Name, q.Window)
		}
		quota := newQuota(quoted, min(q.Limit, maxSFInteger), ceilSeconds(q.Window))
		pq := policyQuota{quotedName: quoted, limit: quota.limit, limitValue: quota.limitValue,
			item: quota.policyValue, shadow: q.Shadow}
		if q.Shadow {
			s.shadowable |= 1 << i
			if !q.ShadowUntil.IsZero() {
				// The instant the limiter compares with: FromTime of the
				// Clock, as a Multi's ShadowUntil is.
				pq.shadowUntil = max(algorithms.FromTime(q.ShadowUntil), 1)
			}
		}
		s.quotas[i] = pq
	}
	s.policyValues = make([]string, 1<<len(qs))
	// Every subset of shadowable, the empty one included (the loop's
	// last step).
	for sub := s.shadowable; ; sub = (sub - 1) & s.shadowable {
		s.policyValues[s.all&^sub] = s.policyValue(s.all &^ sub)
		if sub == 0 {
			break
		}
	}
	return s, nil
}

// policyValue joins the members of the policies in listed, in order.
func (s *policySet) policyValue(listed uint) string {
	var b strings.Builder
	for i := range s.quotas {
		if listed&(1<<i) == 0 {
			continue
		}
		if b.Len() > 0 {
			b.WriteString(", ")
		}
		b.WriteString(s.quotas[i].item)
	}
	return b.String()
}

// shadowedAt returns a bit per policy in shadow mode at now, by the rule a
// Multi applies.
func (s *policySet) shadowedAt(now algorithms.Time) uint {
	var shadowed uint
	for rest := s.shadowable; rest != 0; rest &= rest - 1 {
		i := bits.TrailingZeros(rest)
		if u := s.quotas[i].shadowUntil; u == 0 || now < u {
			shadowed |= 1 << i
		}
	}
	return shadowed
}

// write sets the RateLimit fields for d, decided at now, on h, and returns
// the Retry-After of a refusal (0 for an admission). It reports false, and
// writes nothing, when no policy enforces at now and d admitted: there is
// then no limit to pace by.
//
// RateLimit-Policy lists the policies enforcing at now; RateLimit names the
// binding one (d.Binding), with r and t its remaining and its reset on an
// admission, and r=0 and t = Retry-After on a refusal; the -06 trio carries
// the same numbers. A binding policy that is not enforcing by this view
// (Config.Policies disagreeing with the limiter's) is listed all the same,
// so that RateLimit always names a listed policy.
func (s *policySet) write(h http.Header, d algorithms.Decision, now algorithms.Time) (retryAfter int64, ok bool) {
	listed := s.all &^ s.shadowedAt(now)
	if listed == 0 && d.Allowed {
		return 0, false
	}
	b := d.Binding
	if b < 0 || b >= len(s.quotas) {
		b = 0 // a limiter that is not a Multi: its one limit
	}
	listed |= 1 << b
	q := &s.quotas[b]
	var remaining, reset int64
	if d.Allowed {
		remaining = min(max(d.Remaining, 0), q.limit)
		resetAfter := d.BindingResetAfter
		if len(s.quotas) == 1 {
			// The one limit's reset: a Multi of one gives it in both,
			// a plain algorithm in ResetAfter only.
			resetAfter = d.ResetAfter
		}
		reset = ceilSeconds(resetAfter)
	} else {
		retryAfter = max(ceilSeconds(d.RetryAfter), 1)
		reset = retryAfter
	}
	setFields(h, s.policyValues[listed], q.quotedName, q.limitValue, remaining, reset)
	return retryAfter, true
}

// checkPolicies refuses a Config that sets Policies beside the fields
// they replace.
func checkPolicies(cfg Config) error {
	switch {
	case cfg.Limit != 0 || cfg.Window != 0 || cfg.PolicyName != "":
		return errors.New("httplimit: Config.Policies replaces Limit, Window and PolicyName (want one or the other)")
	}
	return nil
}

// setFields sets the five RateLimit fields on h: the draft's
// RateLimit-Policy (policy, already formatted) and RateLimit for the policy
// quotedName, and the -06 trio.
func setFields(h http.Header, policy, quotedName, limit string, remaining, reset int64) {
	r, t := strconv.FormatInt(remaining, 10), strconv.FormatInt(reset, 10)
	// One backing array for the five values: one allocation, not five.
	v := [...]string{policy, quotedName + ";r=" + r + ";t=" + t, limit, r, t}
	vs := v[:]
	h[fieldPolicy] = vs[0:1:1]
	h[fieldRateLimit] = vs[1:2:2]
	h[fieldLimit] = vs[2:3:3]
	h[fieldRemaining] = vs[3:4:4]
	h[fieldReset] = vs[4:5:5]
}
