// Package trace reads real access logs as a stream of requests, for
// replaying real traffic through a limiter and for choosing its limit.
//
// A [Reader] reads one log — nginx/Apache combined or common format, JSON
// lines, CSV with a header, or an AWS ALB access log, plain or gzipped,
// from a file or standard input — and returns its requests one [Record]
// at a time, in arrival order: each with its time, the limiter key it
// counts against (its client address, user, API key, ... as [Key] says),
// method, path, status and line. Logs are written as responses finish,
// not as requests arrive, so lines are a little out of order; a Reader
// holds requests back for a short window (Options.Reorder) and returns
// them sorted. It streams: memory grows with the requests in that window,
// never with the log, and is bounded for any input (a longest line, a
// longest key, a most requests in the window); no bytes make it panic.
//
// Every line that cannot be read is a [*LineError] naming the file and
// line and what was wanted there ("access.log:1234: status \"OK\" is not
// an HTTP status (want three digits, e.g. 200)"); Options.SkipBad counts
// them instead.
//
// [Peaks] measures, per key, the most requests in any sliding window and
// the smallest token-bucket burst that would have admitted them all.
// [Profile] measures them at several windows and
// rates at once, and [FindOutliers] sets apart the keys far busier than
// the bulk, by a stated robust rule, for choosing a rate and a burst.
//
// [Stats].Resolution is how fine the log's times are (whole seconds for
// nginx's $time_local); Options.Spread spaces a key's requests of one
// tick evenly across it, deterministically, for a log coarser than the
// limit it is replayed through.
//
// The package reads no clock: times come from the log.
package trace
