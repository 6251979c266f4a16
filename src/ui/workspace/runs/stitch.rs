//! The segments of a resumed run drawn as one: each cut where the next begins,
//! and read again when a cut learnt late drops rows it has already charted.

use std::path::{Path, PathBuf};

use super::{compared_run, Runs};
use crate::store::{stitch, Run};
use crate::ui::workspace::cx::WsCx;
use crate::ui::{Cmd, Shown};

impl Runs {
    /// Keep the segments of the drawn resumed runs (of the run `only` when given)
    /// from overlapping on the step axis: each is cut at the smallest first step
    /// of the segments after it (see [`crate::store::stitch`]). Known before a
    /// segment is read, the cut applies as its rows are folded; a segment that has
    /// already charted rows its new cut drops (its reader came first) is read again.
    pub(crate) fn restitch(&mut self, cx: &mut WsCx, only: Option<&str>) {
        let Some(ws) = self.workspace.as_deref() else {
            return;
        };
        let mut keys: Vec<&str> = Vec::new();
        let tags = self
            .main_tag
            .iter()
            .chain(self.compare.iter().filter_map(|c| c.ws.as_ref()));
        for t in tags.filter(|t| t.segments > 1) {
            if only.is_none_or(|k| k == t.key) && !keys.contains(&t.key.as_str()) {
                keys.push(&t.key);
            }
        }
        let main = cx.shown.main_run_dir();
        let mut moves: Vec<(PathBuf, Option<f64>)> = Vec::new();
        for r in keys.iter().filter_map(|k| ws.run(k)) {
            let runs: Vec<Option<&Run>> = r
                .segments
                .iter()
                .map(|s| self.segment_run(cx.shown, &s.dir, main.as_deref()))
                .collect();
            let firsts: Vec<Option<f64>> = runs
                .iter()
                .map(|run| run.and_then(|run| run.stitch.first))
                .collect();
            for ((s, run), cut) in r.segments.iter().zip(&runs).zip(stitch::cuts(&firsts)) {
                if run.is_some_and(|run| run.stitch.cut != cut) {
                    moves.push((s.dir.clone(), cut));
                }
            }
        }
        for (dir, cut) in moves {
            // The main run (None), or compared run i.
            let at = if main.as_deref() == Some(dir.as_path()) {
                None
            } else if let Some(i) = self.is_compared(&dir) {
                Some(i)
            } else {
                continue;
            };
            let was = self.segment_mut(cx.shown, at).stitch;
            if was.rereads_for(cut) {
                match at {
                    None => {
                        self.restart_main(cx);
                    }
                    Some(i) => self.reread_compared(cx, i),
                }
                // Its first row is the same: the segments before it keep their cut
                // while it is read again.
                self.segment_mut(cx.shown, at).stitch.first = was.first;
            }
            self.segment_mut(cx.shown, at).stitch.cut = cut;
        }
    }

    /// A batch came for the main run: its segments' cuts again.
    pub(crate) fn restitch_main(&mut self, cx: &mut WsCx) {
        let key = self.main_tag.as_ref().map(|t| t.key.clone());
        self.restitch(cx, key.as_deref());
    }

    /// The runs read from the segments of the main run `main`, oldest first (by
    /// start; `main` among them): their system samples and console lines are the
    /// run's, as their rows are. `main` alone when it is no resumed run's segment.
    pub(crate) fn segments_of_main<'a>(&'a self, main: &'a Run) -> Vec<&'a Run> {
        let Some(key) = self
            .main_tag
            .as_ref()
            .filter(|t| t.segments > 1)
            .map(|t| t.key.as_str())
        else {
            return vec![main];
        };
        let mut runs: Vec<&Run> = std::iter::once(main)
            .chain(
                self.compare
                    .iter()
                    .filter(|c| c.ws.as_ref().is_some_and(|t| t.key == key))
                    .map(|c| &c.run),
            )
            .collect();
        // Stable: a segment not read yet (no start) first, with nothing to show.
        runs.sort_by_key(|r| r.info.start_time);
        runs
    }

    /// The run read from segment directory `dir`: the main run or a compared one.
    fn segment_run<'a>(
        &'a self,
        shown: &'a Shown,
        dir: &Path,
        main: Option<&Path>,
    ) -> Option<&'a Run> {
        if main == Some(dir) {
            return Some(&shown.run);
        }
        self.is_compared(dir).map(|i| &self.compare[i].run)
    }

    /// The main run (None), or compared run `i`.
    fn segment_mut<'a>(&'a mut self, shown: &'a mut Shown, at: Option<usize>) -> &'a mut Run {
        match at.and_then(|i| self.compare.get_mut(i)) {
            Some(c) => &mut c.run,
            None => &mut shown.run,
        }
    }

    /// Read compared run `i` again from its first byte, into an empty run.
    fn reread_compared(&mut self, cx: &mut WsCx, i: usize) {
        let tag = cx.shown.new_tag();
        let cap = cx.shown.max_points / 2;
        let c = &mut self.compare[i];
        cx.asks.cmd(Cmd::StopReader { tag: c.tag });
        c.tag = tag;
        c.run = compared_run(c.budget, cap);
        cx.asks.cmd(Cmd::StartReader {
            path: c.dir.clone(),
            tag,
        });
        cx.asks.refresh();
    }
}
