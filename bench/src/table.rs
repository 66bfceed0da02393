//! A results table rendered as aligned plain text or as Markdown.

use std::fmt::Write;

/// A table: a header row, then rows of a label followed by cells (right-aligned in text).
#[derive(Debug, Clone, Default)]
pub struct Table {
    /// Column titles, the label column's first.
    pub header: Vec<String>,
    /// The rows: label, then one cell per remaining column.
    pub rows: Vec<(String, Vec<String>)>,
}

impl Table {
    /// A table with these column titles.
    pub fn new(header: &[&str]) -> Table {
        Table {
            header: header.iter().map(|h| h.to_string()).collect(),
            rows: Vec::new(),
        }
    }

    /// Appends a row.
    pub fn row(&mut self, label: impl Into<String>, cells: Vec<String>) {
        self.rows.push((label.into(), cells));
    }

    /// Aligned plain text: the label column left-aligned, the others right-aligned.
    pub fn text(&self) -> String {
        let mut widths: Vec<usize> = self.header.iter().map(|h| h.chars().count()).collect();
        for (label, cells) in &self.rows {
            let all = std::iter::once(label).chain(cells);
            for (i, c) in all.enumerate() {
                if i >= widths.len() {
                    widths.push(0);
                }
                widths[i] = widths[i].max(c.chars().count());
            }
        }
        let pad = |s: &str, w: usize, left: bool| {
            let n = w.saturating_sub(s.chars().count());
            if left {
                format!("{s}{}", " ".repeat(n))
            } else {
                format!("{}{s}", " ".repeat(n))
            }
        };
        let line = |cells: Vec<&str>| {
            cells
                .iter()
                .enumerate()
                .map(|(i, c)| pad(c, widths[i], i == 0))
                .collect::<Vec<_>>()
                .join("  ")
                .trim_end()
                .to_string()
        };
        // Writing to a String cannot fail.
        let mut out = String::new();
        writeln!(
            out,
            "{}",
            line(self.header.iter().map(String::as_str).collect())
        )
        .unwrap();
        let rule: Vec<String> = widths.iter().map(|w| "-".repeat(*w)).collect();
        writeln!(out, "{}", rule.join("  ")).unwrap();
        for (label, cells) in &self.rows {
            let all = std::iter::once(label.as_str()).chain(cells.iter().map(String::as_str));
            writeln!(out, "{}", line(all.collect())).unwrap();
        }
        out
    }

    /// A Markdown table (label column left-aligned, the others right-aligned).
    pub fn markdown(&self) -> String {
        // Writing to a String cannot fail.
        let mut out = String::new();
        writeln!(out, "| {} |", self.header.join(" | ")).unwrap();
        writeln!(
            out,
            "|---|{}",
            "---:|".repeat(self.header.len().saturating_sub(1))
        )
        .unwrap();
        for (label, cells) in &self.rows {
            writeln!(out, "| {label} | {} |", cells.join(" | ")).unwrap();
        }
        out
    }
}
