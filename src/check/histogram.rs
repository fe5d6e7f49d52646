//! The class histogram, drawn with Unicode block characters: one bar per class when
//! there are few, equal-width buckets of ids when there are many, and the values outside
//! the valid range (flagged) after them.

use super::stats::Stats;
use crate::render::style::Palette;

/// Classes shown one per bar up to this many; above it, ids are bucketed.
const MAX_BARS: usize = 32;
const BUCKETS: usize = 16;
const BAR_WIDTH: usize = 40;

#[derive(Debug, Clone, PartialEq, Eq)]
pub enum Flag {
    Valid,
    OutOfRange,
    Ignored,
}

#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Bar {
    pub label: String,
    pub count: u64,
    pub flag: Flag,
}

/// The bars for the integer values of `stats`, given the exclusive bound (if any) and the
/// ignore index.
pub fn bars(stats: &Stats, bound: Option<i64>, ignore: Option<i64>) -> Vec<Bar> {
    let hist = &stats.hist;
    let last_seen = hist.iter().rposition(|&c| c > 0).map(|i| i as i64 + 1).unwrap_or(0);
    let span = bound.unwrap_or(last_seen).clamp(0, hist.len() as i64) as usize;
    let flag = |v: i64| {
        if Some(v) == ignore {
            Flag::Ignored
        } else if v < 0 || bound.is_some_and(|b| v >= b) {
            Flag::OutOfRange
        } else {
            Flag::Valid
        }
    };
    let mut bars = Vec::new();
    if span <= MAX_BARS {
        for (v, &c) in hist.iter().enumerate().take(span) {
            bars.push(Bar { label: v.to_string(), count: c, flag: flag(v as i64) });
        }
    } else {
        let per = span.div_ceil(BUCKETS);
        for start in (0..span).step_by(per) {
            let end = (start + per).min(span);
            let count: u64 = hist[start..end].iter().sum();
            if count == 0 {
                continue;
            }
            bars.push(Bar { label: format!("{start}–{}", end - 1), count, flag: Flag::Valid });
        }
    }
    // Values in the dense histogram past the bound, then those outside it.
    let mut extra: Vec<(i64, u64)> =
        hist.iter().enumerate().skip(span).filter(|(_, &c)| c > 0).map(|(v, &c)| (v as i64, c)).collect();
    extra.extend(stats.rare.outside.distinct.iter().map(|(&v, &c)| (v, c)));
    extra.sort();
    let shown = if extra.len() > 8 {
        let mut by_count = extra.clone();
        by_count.sort_by_key(|e| std::cmp::Reverse(e.1));
        by_count.truncate(8);
        by_count.sort();
        by_count
    } else {
        extra.clone()
    };
    for (v, c) in &shown {
        bars.push(Bar { label: v.to_string(), count: *c, flag: flag(*v) });
    }
    let rest: u64 = extra.iter().filter(|e| !shown.contains(e)).map(|e| e.1).sum::<u64>()
        + if stats.rare.outside.overflowed { 1 } else { 0 };
    if rest > 0 {
        bars.push(Bar { label: "other".to_string(), count: rest, flag: Flag::OutOfRange });
    }
    bars
}

/// Draws the bars, one per line.
pub fn draw(bars: &[Bar], p: &Palette) -> String {
    let total: u64 = bars.iter().map(|b| b.count).sum();
    let peak = bars.iter().map(|b| b.count).max().unwrap_or(0).max(1);
    let label_width = bars.iter().map(|b| b.label.chars().count()).max().unwrap_or(1);
    let count_width = bars.iter().map(|b| super::checks::thousands(b.count).len()).max().unwrap_or(1);
    let mut out = String::new();
    for b in bars {
        let eighths = (b.count as u128 * (BAR_WIDTH as u128 * 8) / peak as u128) as usize;
        let eighths = if b.count > 0 { eighths.max(1) } else { 0 };
        let mut bar = "█".repeat(eighths / 8);
        if eighths % 8 > 0 {
            bar.push(['▏', '▎', '▍', '▌', '▋', '▊', '▉'][eighths % 8 - 1]);
        }
        let pad = BAR_WIDTH + 1 - bar.chars().count();
        let (colour, note) = match b.flag {
            Flag::Valid => (p.help, ""),
            Flag::OutOfRange => (p.error, "  ← out of range"),
            Flag::Ignored => (p.dim, "  (ignored)"),
        };
        let pct = if total > 0 { b.count as f64 * 100.0 / total as f64 } else { 0.0 };
        out.push_str(&format!(
            "  {:>label_width$} │{colour}{bar}{}{:pad$}{:>count_width$} {:>5.1}%{note}\n",
            b.label,
            p.reset,
            "",
            super::checks::thousands(b.count),
            pct,
        ));
    }
    out
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::check::stats::{Bounds, Pos};

    #[test]
    fn flags_values_past_the_bound_and_the_ignore_index() {
        let b = Bounds { upper: Some(3), ignore: Some(255), max_positions: None, row_patterns: false };
        let mut s = Stats::new(&b, 0);
        s.ints(&[0i64, 1, 1, 2, 3, 255, -1], &b, &|i| Pos::row(i as u64));
        let bars = bars(&s, Some(3), Some(255));
        let got: Vec<(String, u64, Flag)> = bars.into_iter().map(|b| (b.label, b.count, b.flag)).collect();
        assert_eq!(
            got,
            vec![
                ("0".into(), 1, Flag::Valid),
                ("1".into(), 2, Flag::Valid),
                ("2".into(), 1, Flag::Valid),
                ("-1".into(), 1, Flag::OutOfRange),
                ("3".into(), 1, Flag::OutOfRange),
                ("255".into(), 1, Flag::Ignored),
            ]
        );
        let text = draw(&[Bar { label: "0".into(), count: 4, flag: Flag::Valid }], &Palette::new(false));
        assert!(text.contains(&"█".repeat(40)), "{text}");
    }

    #[test]
    fn buckets_many_classes() {
        let b = Bounds { upper: Some(1000), ignore: None, max_positions: None, row_patterns: false };
        let mut s = Stats::new(&b, 0);
        let vals: Vec<i64> = (0..1000).collect();
        s.ints(&vals, &b, &|i| Pos::row(i as u64));
        let bars = bars(&s, Some(1000), None);
        assert_eq!(bars.len(), 16);
        assert!(bars.iter().all(|b| b.count > 0));
        assert_eq!(bars.iter().map(|b| b.count).sum::<u64>(), 1000);
        assert_eq!(bars[0].label, "0–62");
    }
}
