//! A smoothed metric chart's lines: per drawn run, the smoothed line
//! in the run's colour over its raw line drawn faint (DIM). The smoothed points
//! are those the app keeps (computed from every point logged), downsampled to
//! the chart's x range like any series: zooming picks among the same values,
//! never smooths again. While a run's smoothing is computed its raw line is drawn
//! as usual and the title says `smoothing…`.

use ratatui::style::Modifier;

use crate::store::series::{Point, Series};
use crate::store::Run;
use crate::ui::charts::model::ModelLine;
use crate::ui::charts::smoothing::{label, SmoothedLine};
use crate::ui::App;

/// One chart's smoothing: per drawn series (in the chart's order) its smoothed
/// points to draw, and what the title says.
pub(crate) struct ChartSmoothing {
    /// None: the series is drawn raw (not smoothed, or not computed yet).
    pts: Vec<Option<Vec<Point>>>,
    /// ` · ema 0.6`, ` · ema 0.6 smoothing…` (empty: not smoothed).
    suffix: String,
}

/// A chart drawn in another x than its series' own (`x`, log x): a smoothed
/// series' points in the chart's x, or None where they do not map there.
pub(crate) type MapX<'m> = &'m dyn Fn(&Run, &Series) -> Option<Vec<Point>>;

/// The smoothing of chart `key`, whose series are those of `runs` (in drawn
/// order), drawn over x range `x` in `px` dot columns (or through `map` when the
/// chart is in another x); none for a chart of `grouped` runs (it draws each
/// group's mean and band, not the runs' lines).
pub(crate) fn of_chart<'r>(
    app: &App,
    key: &str,
    runs: impl Iterator<Item = &'r Run>,
    (x, px): ((f64, f64), usize),
    map: Option<MapX<'_>>,
    grouped: bool,
) -> ChartSmoothing {
    let name = label(app.charts.smoothing.of(key)).filter(|_| !grouped);
    let Some(name) = name else {
        return ChartSmoothing {
            pts: Vec::new(),
            suffix: String::new(),
        };
    };
    let (mut pending, mut failed) = (false, false);
    let pts = runs
        .map(|run| match app.smoothed_line(run, key) {
            SmoothedLine::Ready(s) => match map {
                Some(map) => map(run, s),
                None => {
                    let mut out = Vec::with_capacity(px * 2 + 4);
                    s.downsample(x.0, x.1, px, &mut out);
                    Some(out)
                }
            },
            SmoothedLine::Pending => {
                pending = true;
                None
            }
            SmoothedLine::Failed => {
                failed = true;
                None
            }
            SmoothedLine::Off => None,
        })
        .collect();
    let state = if pending {
        " smoothing…"
    } else if failed {
        " (failed)"
    } else {
        ""
    };
    ChartSmoothing {
        pts,
        suffix: format!(" · {name}{state}"),
    }
}

impl ChartSmoothing {
    /// The chart's title with the smoothing named.
    pub(crate) fn title(&self, title: String) -> String {
        if self.suffix.is_empty() {
            title
        } else {
            title + &self.suffix
        }
    }

    /// The chart's lines: each smoothed series' raw line faint beneath, then
    /// the smoothed lines in the series' styles on top (last drawn wins a cell).
    pub(crate) fn lines(self, raw: Vec<ModelLine<'_>>) -> Vec<ModelLine<'_>> {
        if self.pts.iter().all(Option::is_none) {
            return raw;
        }
        let mut top = Vec::new();
        let mut out = Vec::with_capacity(raw.len() * 2);
        let mut pts = self.pts.into_iter();
        for mut line in raw {
            if let Some(Some(p)) = pts.next() {
                top.push(ModelLine {
                    points: p,
                    style: line.style,
                    breaks: line.breaks,
                    mark: line.mark.take(),
                });
                line.style = line.style.add_modifier(Modifier::DIM);
            }
            out.push(line);
        }
        out.extend(top);
        out
    }

    /// The smoothed points drawn of series `i` (tests).
    #[cfg(test)]
    pub(crate) fn points(&self, i: usize) -> Option<&[Point]> {
        self.pts.get(i).and_then(Option::as_deref)
    }
}

#[cfg(test)]
mod tests;
