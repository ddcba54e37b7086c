package main

import (
	"io"
	"math"

	"github.com/ratelim/ratelim/plots"
)

// maxPlotFigures is the most figures --plot draws of a sweep of one field,
// a panel each (plots.SweepFigures' own bound).
const maxPlotFigures = 6

// plotFigures are the figures --plot draws: --figure's, or by default
// what the table's ratios are, admitted_ratio and peak_ratio (of two
// fields, the heat map draws the first: peak_ratio first then).
func (p *sweepPlan) plotFigures() []sweepFigure {
	if p.figures != nil {
		return p.figures
	}
	if len(p.axes) > 1 {
		return []sweepFigure{{name: "peak_ratio"}, {name: "admitted_ratio"}}
	}
	return []sweepFigure{{name: "admitted_ratio"}, {name: "peak_ratio"}}
}

// plotValue is figure j of row as the plot draws it: --figure's, or the
// default ratio's; NaN for none.
func (p *sweepPlan) plotValue(row SweepRow, j int) float64 {
	if p.figures != nil {
		if v := row.Figures[j]; v != nil {
			return *v
		}
		return math.NaN()
	}
	var v float64
	switch p.plotFigures()[j].name {
	case "admitted_ratio":
		v = row.AdmittedRatio
	case "peak_ratio":
		v = row.PeakRatio
	}
	if v == 0 {
		// No exact figure to divide by (summarise leaves it 0).
		return math.NaN()
	}
	return v
}

// figureUnit is the unit a figure is drawn in.
func figureUnit(name string) string {
	switch name {
	case "admitted_ratio", "peak_ratio":
		return "×"
	case "rejected_pct":
		return "%"
	case "p50_ms", "p99_ms":
		return "ms"
	case "allowed_rate":
		return "/s"
	case "cost_sent", "cost_allowed":
		return "cost"
	}
	return "req"
}

// render draws the sweep: of one field a panel per figure over the values
// as typed (plots.SweepFigures), of two the first figure as a heat map,
// the first field down and the second across (plots.SweepHeat); the
// value, or cell, of the scenario as given (the file and its flags)
// marked.
func (p *sweepPlan) render(w io.Writer, rows []SweepRow, opts plotFlags) error {
	figs := p.plotFigures()
	// The subtitle states the limit, as the table's title does.
	o := opts.options()
	o.Caption = &plots.Caption{Limit: sweepLimitLine(rows)}
	if len(p.axes) == 1 {
		d := plots.SweepFiguresData{Scenario: p.sc.Name, Field: p.axes[0].field, Current: p.current}
		for _, r := range rows {
			d.Values = append(d.Values, r.Values[0])
		}
		for j, f := range figs {
			fig := plots.SweepFigure{Name: f.label(), Unit: figureUnit(f.name)}
			for _, r := range rows {
				fig.Values = append(fig.Values, p.plotValue(r, j))
			}
			d.Figures = append(d.Figures, fig)
		}
		return plots.SweepFigures(w, d, o)
	}
	cols := len(p.axes[1].values)
	d := plots.SweepHeatData{Scenario: p.sc.Name, Figure: figs[0].label(), Unit: figureUnit(figs[0].name),
		RowField: p.axes[0].field, ColField: p.axes[1].field, CurrentRow: -1, CurrentCol: -1}
	for i, r := range rows {
		if i%cols == 0 {
			d.Rows = append(d.Rows, r.Values[0])
			d.Values = append(d.Values, nil)
		}
		if i < cols {
			d.Cols = append(d.Cols, r.Values[1])
		}
		d.Values[len(d.Values)-1] = append(d.Values[len(d.Values)-1], p.plotValue(r, 0))
	}
	if p.current >= 0 {
		d.CurrentRow, d.CurrentCol = p.current/cols, p.current%cols
	}
	return plots.SweepHeat(w, d, o)
}
