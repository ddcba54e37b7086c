package probe

import "slices"

// BucketMismatches is how many of rec's answers on the probe's own key a
// token bucket of rate (per second) and burst decides otherwise, refused
// requests not spending tokens: what the live tests hold the truth to
// when the probe names something else. FitSlack is the most mismatches
// the analysis counts as fitting as well as its best.
func BucketMismatches(rec Recording, rate float64, burst int64) int {
	obs := slices.Clone(rec.Obs)
	sortBySent(obs)
	ds, _ := ownDecisions(obs)
	return mismatches(candidate{family: familyBucket}, params{rate: rate, burst: burst}, ds, len(ds))
}

// ConcurrencyMismatches is how many of rec's answers on the probe's own
// key a limit of limit requests in flight decides otherwise, with the
// margin the analysis allows such a fit.
func ConcurrencyMismatches(rec Recording, limit int64) int {
	obs := slices.Clone(rec.Obs)
	sortBySent(obs)
	ds, _ := ownDecisions(obs)
	c := candidate{family: familyConcurrency}
	return mismatches(c, params{limit: limit, margin: concurrencyMargin(ds)}, ds, len(ds))
}

// FitSlack is fitSlack: the mismatches within which two fits of n
// decisions fit as well.
func FitSlack(n int) int { return fitSlack(n) }
