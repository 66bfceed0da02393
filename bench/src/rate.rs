//! Throughput over time from samples of a growing total (records produced so far), as taken
//! every few hundred milliseconds while a pipeline runs.

/// One sample: seconds relative to a reference instant (negative before it) and the total.
#[derive(Debug, Clone, Copy, PartialEq)]
pub struct Sample {
    /// Seconds since the reference instant (negative before it).
    pub t: f64,
    /// The running total at that moment.
    pub total: u64,
}

/// A rate over a time window.
#[derive(Debug, Clone, Copy, PartialEq)]
pub struct WindowRate {
    /// Start of the window (seconds, as in [`Sample::t`]).
    pub from: f64,
    /// End of the window.
    pub to: f64,
    /// Units per second over the window.
    pub per_sec: f64,
}

/// The average rate between the first sample at or after `from` and the last sample at or
/// before `to`; `None` with fewer than two such samples.
pub fn average_rate(samples: &[Sample], from: f64, to: f64) -> Option<WindowRate> {
    let inside: Vec<&Sample> = samples
        .iter()
        .filter(|s| s.t >= from && s.t <= to)
        .collect();
    let (first, last) = (inside.first()?, inside.last()?);
    rate(first, last)
}

/// The lowest rate over any window of at least `window` seconds that starts at a sample at or
/// after `from` and ends at the first sample `window` seconds later, at or before `to`; `None`
/// when no such window exists.
pub fn lowest_window(samples: &[Sample], from: f64, to: f64, window: f64) -> Option<WindowRate> {
    let mut lowest: Option<WindowRate> = None;
    for (i, a) in samples.iter().enumerate() {
        if a.t < from {
            continue;
        }
        let Some(b) = samples[i + 1..].iter().find(|b| b.t - a.t >= window) else {
            break;
        };
        if b.t > to {
            break;
        }
        if let Some(r) = rate(a, b) {
            if lowest.is_none_or(|l| r.per_sec < l.per_sec) {
                lowest = Some(r);
            }
        }
    }
    lowest
}

/// How far `low` is below `steady`, in percent of `steady` (0 when it is not below).
pub fn dip_percent(steady: f64, low: f64) -> f64 {
    if steady <= 0.0 {
        return 0.0;
    }
    ((steady - low) / steady * 100.0).max(0.0)
}

fn rate(a: &Sample, b: &Sample) -> Option<WindowRate> {
    let dt = b.t - a.t;
    (dt > 0.0).then(|| WindowRate {
        from: a.t,
        to: b.t,
        per_sec: b.total.saturating_sub(a.total) as f64 / dt,
    })
}

#[cfg(test)]
mod tests {
    use super::*;

    fn samples(rates: &[(f64, u64)]) -> Vec<Sample> {
        rates
            .iter()
            .map(|&(t, total)| Sample { t, total })
            .collect()
    }

    #[test]
    fn steady_and_lowest_window() {
        // 100/s from -2 to 0, a pause from 0 to 1, then 100/s again.
        let s = samples(&[
            (-2.0, 0),
            (-1.0, 100),
            (0.0, 200),
            (0.5, 200),
            (1.0, 200),
            (2.0, 300),
            (3.0, 400),
        ]);
        let steady = average_rate(&s, -2.0, 0.0).unwrap();
        assert_eq!(steady.per_sec, 100.0);
        let low = lowest_window(&s, 0.0, 3.0, 1.0).unwrap();
        assert_eq!(low.per_sec, 0.0);
        assert_eq!((low.from, low.to), (0.0, 1.0));
        assert_eq!(dip_percent(steady.per_sec, low.per_sec), 100.0);
        let later = lowest_window(&s, 1.0, 3.0, 1.0).unwrap();
        assert_eq!(later.per_sec, 100.0);
    }

    #[test]
    fn too_few_samples() {
        let s = samples(&[(0.0, 0), (0.5, 10)]);
        assert!(average_rate(&s, 1.0, 2.0).is_none());
        assert!(lowest_window(&s, 0.0, 5.0, 1.0).is_none());
        assert_eq!(dip_percent(0.0, 5.0), 0.0);
        assert_eq!(dip_percent(10.0, 12.0), 0.0);
    }
}
