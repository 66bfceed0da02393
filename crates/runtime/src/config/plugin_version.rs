//! KIP-891's plugin version requirements (`connector.plugin.version`,
//! `key.converter.plugin.version`, `transforms.<alias>.plugin.version`, …) as Connect reads them
//! with Maven's `VersionRange.createFromVersionSpec`: `latest`, an exact version, or ranges in
//! Maven's notation (`[1.0,2.0)`, `[1.0,)`, `(,1.0]`, `[1.0]`, several separated by commas).
//! Versions compare as Maven's `ComparableVersion` does for the forms plugins use: numeric parts
//! by value (`1.10 > 1.9`, trailing zeros ignored: `1.0 == 1`), pre-release qualifiers before the
//! release (`1.0-SNAPSHOT < 1.0`, `alpha < beta < milestone < rc < snapshot`), `Final`/`GA` as
//! the release, other qualifiers after it.

use std::cmp::Ordering;

/// Whether the requirement `setting` accepts a plugin of `version`: `latest`, the same version,
/// or a range containing it. An unparseable range accepts nothing.
pub fn version_accepted(setting: &str, version: &str) -> bool {
    let s = setting.trim();
    if s == "latest" {
        return true;
    }
    if !s.starts_with(['[', '(']) {
        return compare(s, version) == Ordering::Equal;
    }
    match parse_ranges(s) {
        Some(ranges) => ranges.iter().any(|r| r.contains(version)),
        None => false,
    }
}

/// A requirement as Connect prints its `VersionRange` in messages: a plain version becomes the
/// exact range `[v]` (Connect turns a soft requirement into a hard one), a range stays as
/// written.
pub fn range_display(setting: &str) -> String {
    let s = setting.trim();
    if s.starts_with(['[', '(']) || s == "latest" {
        s.to_string()
    } else {
        format!("[{s}]")
    }
}

/// One restriction: bounds (`None`: unbounded) and whether each is inclusive.
struct Range<'a> {
    lower: Option<(&'a str, bool)>,
    upper: Option<(&'a str, bool)>,
}

impl Range<'_> {
    fn contains(&self, v: &str) -> bool {
        let above = self.lower.is_none_or(|(l, inclusive)| match compare(v, l) {
            Ordering::Greater => true,
            Ordering::Equal => inclusive,
            Ordering::Less => false,
        });
        let below = self.upper.is_none_or(|(u, inclusive)| match compare(v, u) {
            Ordering::Less => true,
            Ordering::Equal => inclusive,
            Ordering::Greater => false,
        });
        above && below
    }
}

/// `[a,b)`-style ranges separated by commas; `None` when malformed.
fn parse_ranges(s: &str) -> Option<Vec<Range<'_>>> {
    let mut out = Vec::new();
    let mut rest = s.trim();
    while !rest.is_empty() {
        let open = rest.chars().next()?;
        if open != '[' && open != '(' {
            return None;
        }
        let end = rest.find([']', ')'])?;
        let close = rest[end..].chars().next()?;
        let inner = &rest[1..end];
        let range = match inner.split_once(',') {
            None => {
                // `[1.0]`: exactly that version.
                let v = inner.trim();
                if open != '[' || close != ']' || v.is_empty() {
                    return None;
                }
                Range {
                    lower: Some((v, true)),
                    upper: Some((v, true)),
                }
            }
            Some((lo, hi)) => {
                let (lo, hi) = (lo.trim(), hi.trim());
                if hi.contains(',') {
                    return None;
                }
                Range {
                    lower: (!lo.is_empty()).then_some((lo, open == '[')),
                    upper: (!hi.is_empty()).then_some((hi, close == ']')),
                }
            }
        };
        out.push(range);
        rest = rest[end + 1..].trim_start();
        if let Some(r) = rest.strip_prefix(',') {
            rest = r.trim_start();
            if rest.is_empty() {
                return None;
            }
        }
    }
    (!out.is_empty()).then_some(out)
}

/// One item of a version's qualifier: a number, or a word.
#[derive(PartialEq, Eq)]
enum Item {
    Number(u64),
    Word(String),
}

/// Where a qualifier word sorts: the pre-release words of Maven before the release (`alpha` <
/// `beta` < `milestone` < `rc` < `snapshot`), words meaning the release itself (`final`, `ga`,
/// `release`) at it, and any other word after it.
fn word_rank(w: &str) -> (i32, &str) {
    match w {
        "alpha" | "a" => (-5, ""),
        "beta" | "b" => (-4, ""),
        "milestone" | "m" => (-3, ""),
        "rc" | "cr" => (-2, ""),
        "snapshot" => (-1, ""),
        "" | "final" | "ga" | "release" => (0, ""),
        other => (1, other),
    }
}

/// A version as its leading numbers (trailing zeros dropped) and the qualifier items after
/// them (release words dropped).
fn items(v: &str) -> (Vec<u64>, Vec<Item>) {
    let mut numbers = Vec::new();
    let mut qualifier = Vec::new();
    // Items split at `.` and `-`, and where digits meet letters (`rc1` is `rc`, `1`).
    let tokens = v.split(['.', '-']).flat_map(|t| {
        let t = t.trim();
        let mut runs: Vec<&str> = Vec::new();
        let mut start = 0;
        for (i, c) in t.char_indices().skip(1) {
            let prev = t[..i].chars().next_back().unwrap_or(c);
            if prev.is_ascii_digit() != c.is_ascii_digit() {
                runs.push(&t[start..i]);
                start = i;
            }
        }
        runs.push(&t[start..]);
        runs
    });
    for token in tokens {
        let token = token.to_ascii_lowercase();
        match token.parse::<u64>() {
            Ok(n) if qualifier.is_empty() => numbers.push(n),
            Ok(n) => qualifier.push(Item::Number(n)),
            Err(_) if word_rank(&token).0 == 0 => {}
            Err(_) => qualifier.push(Item::Word(token)),
        }
    }
    while numbers.last() == Some(&0) {
        numbers.pop();
    }
    (numbers, qualifier)
}

/// Where a qualifier sorts against the release: before (pre-release), or after.
fn qualifier_side(q: &[Item]) -> Ordering {
    match q.first() {
        None => Ordering::Equal,
        Some(Item::Word(w)) if word_rank(w).0 < 0 => Ordering::Less,
        Some(_) => Ordering::Greater,
    }
}

/// Compares two versions as described in the module documentation.
pub fn compare(a: &str, b: &str) -> Ordering {
    let (an, aq) = items(a);
    let (bn, bq) = items(b);
    let by_release = (0..an.len().max(bn.len()))
        .map(|i| an.get(i).unwrap_or(&0).cmp(bn.get(i).unwrap_or(&0)))
        .find(|o| o.is_ne())
        .unwrap_or(Ordering::Equal);
    if by_release.is_ne() {
        return by_release;
    }
    let sides = qualifier_side(&aq).cmp(&qualifier_side(&bq));
    if sides.is_ne() {
        return sides;
    }
    for (x, y) in aq.iter().zip(&bq) {
        let o = match (x, y) {
            (Item::Number(x), Item::Number(y)) => x.cmp(y),
            (Item::Word(x), Item::Word(y)) => word_rank(x).cmp(&word_rank(y)),
            (Item::Number(_), Item::Word(_)) => Ordering::Greater,
            (Item::Word(_), Item::Number(_)) => Ordering::Less,
        };
        if o.is_ne() {
            return o;
        }
    }
    aq.len().cmp(&bq.len())
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn versions_compare_as_maven_orders_plugin_versions() {
        assert_eq!(compare("1.10", "1.9"), Ordering::Greater);
        assert_eq!(compare("1.0", "1"), Ordering::Equal);
        assert_eq!(compare("4.1.1", "4.1.0"), Ordering::Greater);
        assert_eq!(compare("1.0-SNAPSHOT", "1.0"), Ordering::Less);
        assert_eq!(compare("3.6.1.Final", "3.6.1"), Ordering::Equal);
        assert_eq!(compare("2.0-beta-1", "2.0-alpha-2"), Ordering::Greater);
        assert_eq!(compare("2.0-rc1", "2.0"), Ordering::Less);
        assert_eq!(compare("2.0-sp1", "2.0"), Ordering::Greater);
    }

    #[test]
    fn requirements_accept_the_versions_they_name() {
        assert!(version_accepted("latest", "0.1.0"));
        assert!(version_accepted(" 4.1.1 ", "4.1.1"));
        assert!(!version_accepted("4.1.2", "4.1.1"));
        assert!(version_accepted("[4.0,5.0)", "4.1.1"));
        assert!(!version_accepted("[4.0,4.1)", "4.1.1"));
        assert!(version_accepted("[4.1.1]", "4.1.1"));
        assert!(!version_accepted("(4.1.1,)", "4.1.1"));
        assert!(version_accepted("[4.1.1,)", "4.1.1"));
        assert!(version_accepted("(,4.1.1]", "4.1.1"));
        assert!(!version_accepted("(,4.1.1)", "4.1.1"));
        assert!(version_accepted("[1.0,2.0),[4.0,)", "4.1.1"));
        assert!(!version_accepted("[1.0,2.0),[5.0,)", "4.1.1"));
    }

    #[test]
    fn malformed_ranges_accept_nothing() {
        for bad in ["[4.0,5.0", "[4.0,5.0),", "(4.1.1)", "[,]x", "[1,2,3]", "[]"] {
            assert!(!version_accepted(bad, "4.1.1"), "{bad}");
        }
    }
}
