//! Which palette colour each drawn run gets. A run keeps the colour it was given
//! while it stays drawn (drawing another never recolours it); a run drawn anew
//! takes its preferred colour (in a workspace its stable index, W&B's "colour by
//! run") when no drawn run has it, else the next colour used by the fewest drawn
//! runs, so colours repeat only once every colour is taken, and then evenly.

/// The colours given to the runs drawn, by the runs' identities.
#[derive(Debug, Clone, Default)]
pub(crate) struct Colors {
    /// The palette's number of colours the slots were given for.
    n: usize,
    /// (identity, colour index below `n`), one per drawn run.
    slots: Vec<(String, usize)>,
}

impl Colors {
    /// Keep the colours of the runs still drawn, forget the others, and give the
    /// newly drawn ones theirs, in `drawn`'s order: (identity, preferred colour).
    /// Another palette size (`n`) gives every run its colour afresh.
    pub(crate) fn sync(&mut self, drawn: &[(String, usize)], n: usize) {
        let n = n.max(1);
        if n != self.n {
            self.slots.clear();
            self.n = n;
        }
        self.slots
            .retain(|(k, _)| drawn.iter().any(|(d, _)| d == k));
        for (k, pref) in drawn {
            if self.get(k).is_none() {
                let c = self.pick(*pref);
                self.slots.push((k.clone(), c));
            }
        }
    }

    /// The colour given to the run `key`, if it is drawn.
    #[must_use]
    pub(crate) fn get(&self, key: &str) -> Option<usize> {
        self.slots.iter().find(|(k, _)| k == key).map(|&(_, c)| c)
    }

    /// `pref` when no run has a colour used less, else the first colour after it
    /// that is used least.
    fn pick(&self, pref: usize) -> usize {
        let n = self.n.max(1);
        let mut used = vec![0usize; n];
        for &(_, c) in &self.slots {
            used[c % n] += 1;
        }
        let least = used.iter().copied().min().unwrap_or(0);
        (0..n)
            .map(|d| (pref + d) % n)
            .find(|&c| used[c] == least)
            .unwrap_or(pref % n)
    }
}

#[cfg(test)]
mod tests {
    use super::Colors;

    fn drawn(v: &[(&str, usize)]) -> Vec<(String, usize)> {
        v.iter().map(|&(k, p)| (k.to_owned(), p)).collect()
    }

    fn colors(c: &Colors, keys: &[&str]) -> Vec<Option<usize>> {
        keys.iter().map(|k| c.get(k)).collect()
    }

    #[test]
    fn runs_eight_apart_get_different_colours() {
        let mut c = Colors::default();
        c.sync(&drawn(&[("a", 2), ("b", 10)]), 8);
        assert_eq!(colors(&c, &["a", "b"]), [Some(2), Some(3)]);
    }

    #[test]
    fn a_drawn_run_keeps_its_colour_as_others_come_and_go() {
        let mut c = Colors::default();
        c.sync(&drawn(&[("a", 2), ("b", 10)]), 8);
        // Without a, b's preferred colour is free, yet b keeps the one it has.
        c.sync(&drawn(&[("b", 10)]), 8);
        assert_eq!(colors(&c, &["a", "b"]), [None, Some(3)]);
        c.sync(&drawn(&[("b", 10), ("c", 3), ("a", 2)]), 8);
        assert_eq!(colors(&c, &["b", "c", "a"]), [Some(3), Some(4), Some(2)]);
    }

    #[test]
    fn more_runs_than_colours_share_them_evenly() {
        let mut c = Colors::default();
        let keys: Vec<String> = (0..20).map(|i| format!("r{i}")).collect();
        let d: Vec<(String, usize)> = keys.iter().map(|k| (k.clone(), 0)).collect();
        c.sync(&d, 8);
        let mut used = [0; 8];
        for k in &keys {
            used[c.get(k).expect("drawn")] += 1;
        }
        assert_eq!(used, [3, 3, 3, 3, 2, 2, 2, 2]);
    }

    #[test]
    fn another_palette_size_colours_afresh_within_it() {
        let mut c = Colors::default();
        let d = drawn(&[("a", 8), ("b", 9), ("c", 0)]);
        c.sync(&d, 10);
        assert_eq!(colors(&c, &["a", "b", "c"]), [Some(8), Some(9), Some(0)]);
        c.sync(&d, 8);
        assert_eq!(colors(&c, &["a", "b", "c"]), [Some(0), Some(1), Some(2)]);
    }
}
