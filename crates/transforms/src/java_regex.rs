//! Java regular expressions as `RegexRouter` and `TopicNameMatches` use them: a whole-string
//! match (`Matcher.matches`) and `Matcher.replaceFirst` with Java's replacement syntax
//! (`$1`, `${name}`, `\$` for a literal dollar sign).
//!
//! Patterns are compiled by `fancy-regex`, which accepts the Perl/Java-style syntax Connect
//! users write, lookaround and backreferences included. Topic names are ASCII letters, digits,
//! `.`, `_` and `-`, so the Unicode-aware character classes of Rust's engine match them as
//! Java's ASCII ones do.

use fancy_regex::Regex;

/// A compiled pattern: one for searching, one anchored at both ends for whole matches.
#[derive(Debug, Clone)]
pub struct JavaRegex {
    search: Regex,
    whole: Regex,
}

impl JavaRegex {
    /// Compiles `pattern`; the error describes why it is not a valid expression.
    pub fn new(pattern: &str) -> Result<JavaRegex, String> {
        let search = Regex::new(pattern).map_err(|e| e.to_string())?;
        let whole = Regex::new(&format!(r"\A(?:{pattern})\z")).map_err(|e| e.to_string())?;
        Ok(JavaRegex { search, whole })
    }

    /// Whether the whole of `text` matches (Java's `Matcher.matches()`). A match the engine
    /// gives up on (its backtracking limit) counts as none.
    pub fn matches(&self, text: &str) -> bool {
        self.whole.is_match(text).unwrap_or(false)
    }

    /// `text` with its first match replaced by `replacement` expanded as Java does (Java's
    /// `Matcher.replaceFirst`); `text` itself when nothing matches. Errors carry Java's
    /// message for a malformed replacement (`Illegal group reference`, `No group 2`, …).
    pub fn replace_first(&self, text: &str, replacement: &str) -> Result<String, String> {
        let caps = match self.search.captures(text) {
            Ok(Some(caps)) => caps,
            _ => return Ok(text.to_string()),
        };
        let whole = caps.get(0).expect("group 0 of a match");
        let group_count = self.search.captures_len() - 1;
        let names: Vec<Option<String>> = self
            .search
            .capture_names()
            .map(|n| n.map(str::to_string))
            .collect();
        let group = |i: usize| caps.get(i).map(|m| m.as_str());

        let mut out = String::with_capacity(text.len() + replacement.len());
        out.push_str(&text[..whole.start()]);
        let r: Vec<char> = replacement.chars().collect();
        let mut i = 0;
        while i < r.len() {
            match r[i] {
                '\\' => {
                    i += 1;
                    let c = r
                        .get(i)
                        .ok_or_else(|| "character to be escaped is missing".to_string())?;
                    out.push(*c);
                    i += 1;
                }
                '$' => {
                    i += 1;
                    let Some(&next) = r.get(i) else {
                        return Err("Illegal group reference: group index is missing".into());
                    };
                    let number = if next == '{' {
                        i += 1;
                        let start = i;
                        while i < r.len() && r[i].is_ascii_alphanumeric() {
                            i += 1;
                        }
                        let name: String = r[start..i].iter().collect();
                        if name.is_empty() {
                            return Err("named capturing group has 0 length name".into());
                        }
                        if r.get(i) != Some(&'}') {
                            return Err("named capturing group is missing trailing '}'".into());
                        }
                        if name.starts_with(|c: char| c.is_ascii_digit()) {
                            return Err(format!(
                                "capturing group name {{{name}}} starts with digit character"
                            ));
                        }
                        i += 1;
                        names
                            .iter()
                            .position(|n| n.as_deref() == Some(name.as_str()))
                            .ok_or_else(|| format!("No group with name {{{name}}}"))?
                    } else {
                        let mut number = next
                            .to_digit(10)
                            .ok_or_else(|| "Illegal group reference".to_string())?
                            as usize;
                        i += 1;
                        // Further digits extend the number while it names an existing group.
                        while let Some(d) = r.get(i).and_then(|c| c.to_digit(10)) {
                            let longer = number * 10 + d as usize;
                            if longer > group_count {
                                break;
                            }
                            number = longer;
                            i += 1;
                        }
                        number
                    };
                    if number > group_count {
                        return Err(format!("No group {number}"));
                    }
                    if let Some(g) = group(number) {
                        out.push_str(g);
                    }
                }
                c => {
                    out.push(c);
                    i += 1;
                }
            }
        }
        out.push_str(&text[whole.end()..]);
        Ok(out)
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn replace(pattern: &str, text: &str, replacement: &str) -> Result<String, String> {
        JavaRegex::new(pattern)
            .unwrap()
            .replace_first(text, replacement)
    }

    // Expected strings are what Java 17's Matcher.replaceFirst gives.

    #[test]
    fn replacements_expand_groups_as_java_does() {
        assert_eq!(replace("(.*)-(.*)", "a-b", "$2_$1").unwrap(), "b_a");
        assert_eq!(replace("(a)", "a", "$1a").unwrap(), "aa");
        assert_eq!(replace("(a)", "a", "$10").unwrap(), "a0");
        assert_eq!(replace("(?<x>a)b", "ab", "${x}!").unwrap(), "a!");
        assert_eq!(replace("a", "a", "\\$1").unwrap(), "$1");
        assert_eq!(replace("(a)|(b)", "b", "[$1]").unwrap(), "[]");
        assert_eq!(replace("b", "abc", "X").unwrap(), "aXc");
        assert_eq!(replace("z", "abc", "X").unwrap(), "abc");
        assert_eq!(replace("a|ab", "ab", "X").unwrap(), "Xb");
    }

    #[test]
    fn bad_replacements_fail_with_javas_messages() {
        assert_eq!(
            replace("a", "a", "$").unwrap_err(),
            "Illegal group reference: group index is missing"
        );
        assert_eq!(
            replace("a", "a", "$x").unwrap_err(),
            "Illegal group reference"
        );
        assert_eq!(replace("a", "a", "$1").unwrap_err(), "No group 1");
        assert_eq!(
            replace("a", "a", "\\").unwrap_err(),
            "character to be escaped is missing"
        );
        assert_eq!(
            replace("a", "a", "${y}").unwrap_err(),
            "No group with name {y}"
        );
        assert_eq!(
            replace("a", "a", "${}").unwrap_err(),
            "named capturing group has 0 length name"
        );
        assert_eq!(
            replace("a", "a", "${y").unwrap_err(),
            "named capturing group is missing trailing '}'"
        );
        assert_eq!(
            replace("a", "a", "${1y}").unwrap_err(),
            "capturing group name {1y} starts with digit character"
        );
    }

    #[test]
    fn whole_matches_and_java_syntax() {
        let re = JavaRegex::new("a|ab").unwrap();
        assert!(re.matches("ab"));
        assert!(!re.matches("abc"));
        let re = JavaRegex::new("(?!internal-).*").unwrap();
        assert!(re.matches("orders"));
        assert!(!re.matches("internal-x"));
        assert!(JavaRegex::new("(a)\\1").unwrap().matches("aa"));
        assert!(JavaRegex::new("(").is_err());
    }
}
