// Package plots draws what a simulated run did, from its sim.Result alone
// (never from the simulator's internals), with gonum.org/v1/plot, as PNG
// or SVG written to an io.Writer.
//
// [Timeline] is the figure of one run. Under the title, the run's lesson
// (sim.Headline) and its settings. Time runs left to right in seconds,
// shared by a stack of panels: first the faults, each a labelled bar whose
// window is shaded down through every panel; then one panel per client
// (or per limiter key) showing, step by step, how many requests were
// allowed and rejected, hatched where the fail policy decided them while
// the store was failing, and the retries; then the limiter's state — how
// many requests each key could still make, in each copy of the store, so
// that per-server jars or the two sides of a split brain show as lines
// that part; and last, when some step waited longer than the store's
// round trip, the latency. Reading down one shaded window tells you what
// every client saw during that fault.
//
// Each traffic panel measures what was admitted against what the limit
// allows, in the limit's own terms (see reference): a window algorithm's
// rolling count over its window against the limit per window, with a
// fixed window's boundaries marked; a bucket's burst + rate and its
// refill; and, shaded, whatever got through beyond that — a boundary's
// double burst, jars per server, a partition's two copies. Clients that
// share a key draw the key's count too and say who used the shared quota;
// clients with the same figures step by step share a panel. Where what
// was sent dwarfs what was admitted, the counts are on a log scale, so
// the admitted line still reads against the limit.
//
// [TimelineVs] draws two runs side by side (`ratelim sim --vs`), row by
// row the same client on one y axis.
//
// A replay of an access log is drawn by the same two on the log's own
// clock (Options.Clock: "10:02" rather than 120 s) and titled with what
// the user chose (Options.Caption: the limit as given, the key, the log,
// the window) rather than the simulator's settings a replay did not.
//
// [Sweep], [SweepFigures] and [SweepHeat] draw a sweep: what a run's
// figures do as one field takes each of its values (values as typed,
// evenly spaced, the scenario's own marked), or, over two fields, a heat
// map of one figure. [Frontier] draws `ratelim replay --suggest`: the
// limits that spare a log's ordinary keys, and where each key falls.
//
// [CompareGrid] is the figure of `ratelim compare`: a heat map of
// algorithms by topologies, each cell what was admitted as a multiple of
// what one exact limiter admits, on one colour scale for every grid, with
// each cell's reason as a numbered note.
//
// The colours are the Okabe–Ito palette, which stays distinct under the
// common colour blindnesses, and a meaning keeps its colour everywhere:
// allowed is always bluish green. Legends sit above the panels or beside
// them, never on the data. Text is laid out with room for a font wider
// than Liberation Sans, which an SVG names with fallbacks. [WriteFile]
// writes a figure to a file all or nothing.
package plots
