// Package replay plays real traffic, an access log read by package trace,
// through the simulator: a client per key of the log, each sending the
// key's requests at the times the log has them (compressed by a speed if
// asked), through any algorithm, topology and fault a scenario can have.
// It answers the question a limit raises before it goes live: what would
// 100/m per API key have done to last Tuesday's traffic — whom would it
// have throttled, when, and how many requests — and which rate and burst
// would have spared every key but the few far busier than the rest
// ([Log.Frontier]), each checked by replaying it.
//
// A log is read through once first ([Scan]), for its keys and its span,
// which a run needs before it starts; each run then reads it again as a
// [sim.Feed]. Memory grows with the log's distinct keys, never with its
// lines. Standard input is copied to a temporary file on the first read,
// for the runs to read it again.
package replay
