package web

import "encoding/json"

// Response is what one Run shows, as the page reads it (JSON, the field
// names the page is written against). On failure Error is set and, if
// the file itself read, Scenario and Controls, so the page can keep its
// controls while it shows the error; nothing else is.
type Response struct {
	Error    *ErrorView    `json:"error,omitempty"`
	Scenario *ScenarioView `json:"scenario,omitempty"`
	Controls []Control     `json:"controls,omitempty"`
	// Result is run A's result, the same JSON value `ratelim sim --format
	// json` writes, for the page to read: encoded in the Response it is
	// compacted, so its bytes are not the CLI's (and JavaScript rounds a
	// seed past 2^53). ResultJSON is the CLI's bytes exactly, as a string:
	// what a "download JSON" offers, byte-identical to `ratelim sim …
	// --format json` run with Command.
	Result     json.RawMessage `json:"result,omitempty"`
	ResultJSON string          `json:"resultJSON,omitempty"`
	// Table is the CLI's table output for run A, expectations under it.
	Table        string            `json:"table,omitempty"`
	Headline     string            `json:"headline,omitempty"`
	Findings     []FindingView     `json:"findings,omitempty"`
	Expectations []ExpectationView `json:"expectations,omitempty"`
	// Timeline is run A drawn as plots.Timeline draws it, as SVG.
	Timeline string `json:"timeline,omitempty"`
	// Command is the command line that reproduces run A.
	Command  string        `json:"command,omitempty"`
	Question *QuestionView `json:"question,omitempty"`
	Vs       *VsView       `json:"vs,omitempty"`
	// Notice says what the run changed to fit the tab, "" when nothing:
	// the step it was drawn at when the file's was too fine for MaxSteps
	// or MaxMemory ("drawn at step 100ms: 300s at the file's 1ms would be
	// 300,000 steps"). Command then carries that --step.
	Notice string `json:"notice,omitempty"`
	// DurationS is run A's length in seconds, what Frame's t ranges over.
	DurationS float64 `json:"durationS,omitempty"`
}

// ErrorView is an error a user can act on: Text as the CLI prints it
// (after "ratelim: "), and, for a scenario file's error, its file, line
// (0 when no line is to blame) and field split out. A setting's error
// that names a line of the file ("--set X: limits[1].burst (line 37):
// ...") has that file and line, its Field still the setting's flag.
type ErrorView struct {
	Text  string `json:"text"`
	File  string `json:"file,omitempty"`
	Line  int    `json:"line,omitempty"`
	Field string `json:"field,omitempty"`
}

// ScenarioView is the scenario as loaded.
type ScenarioView struct {
	Name    string `json:"name"`
	Summary string `json:"summary"`
	// Lesson is the finding kind the file says leads (its lesson:), or "".
	Lesson string `json:"lesson"`
	// File is the name errors give it: a built-in's name, else FileName.
	File string `json:"file"`
	// Source is the file's text as given.
	Source string `json:"source"`
	// DurationS and StepS are the run's, or the file's when it did not run.
	DurationS float64 `json:"durationS"`
	StepS     float64 `json:"stepS"`
	// Clients are the clients' names, expanded (bastion-1 … bastion-8):
	// the first 1,000 of ClientCount.
	Clients     []string `json:"clients"`
	ClientCount int      `json:"clientCount"`
}

// FindingView is one of the run's findings (sim.Finding): its kind, who
// it is about (a client's name or a key, "" for the run), its text.
type FindingView struct {
	Kind    string `json:"kind"`
	Subject string `json:"subject"`
	Text    string `json:"text"`
}

// ExpectationView is one of the file's expect: lines: its claim, whether
// it held, or Skipped when it needs other runs (a with:), which the
// playground does not make.
type ExpectationView struct {
	Text    string `json:"text"`
	OK      bool   `json:"ok"`
	Skipped bool   `json:"skipped"`
}

// QuestionView is what the file asks a class before the run, and the
// run's answer. Ask is the question with its placeholders filled from
// the file as run A's settings made it (scenarios.Question.Text).
// Choices are the clients to pick from, for a pick.
type QuestionView struct {
	Ask     string     `json:"ask"`
	Pick    string     `json:"pick"`
	Choices []string   `json:"choices,omitempty"`
	Answer  AnswerView `json:"answer"`
}

// AnswerView is the run's answer to the question: the number (for a
// question with no pick), the clients tied at the extreme (for a pick),
// and the text the page shows.
type AnswerView struct {
	Value   float64  `json:"value"`
	Clients []string `json:"clients,omitempty"`
	// AllTied: a pick every client ties at (none to name; Text says so).
	AllTied bool   `json:"allTied,omitempty"`
	Text    string `json:"text"`
}

// VsView is run B beside run A, as `ratelim sim --vs` shows them.
type VsView struct {
	LabelA string `json:"labelA"`
	LabelB string `json:"labelB"`
	// Timeline is plots.TimelineVs of A and B, as SVG.
	Timeline string `json:"timeline"`
	// Rows are what the CLI prints under "── A vs B ──".
	Rows string `json:"rows"`
	// Result is run B's result, as Response.Result is A's (the same
	// value, compacted), and ResultJSON its bytes exactly as `ratelim sim
	// … --format json` writes run B alone.
	Result     json.RawMessage `json:"result"`
	ResultJSON string          `json:"resultJSON"`
	// Command reproduces the side by side.
	Command string `json:"command"`
}

// FrameView is run A as it stood at T seconds: its timeline so far on
// the whole run's axes, and each client's counts so far.
type FrameView struct {
	T        float64      `json:"t"`
	Timeline string       `json:"timeline"`
	Clients  []ClientView `json:"clients"`
}

// ClientView is one client's counts at a frame.
type ClientView struct {
	Name     string `json:"name"`
	Sent     int64  `json:"sent"`
	Allowed  int64  `json:"allowed"`
	Rejected int64  `json:"rejected"`
}

// BuiltinInfo names a built-in scenario for the page's picker.
type BuiltinInfo struct {
	Name    string `json:"name"`
	Summary string `json:"summary"`
	Lesson  string `json:"lesson"`
}
