//! JAAS configuration text as Kafka reads it: the `sasl.jaas.config` value (Kafka's
//! `JaasConfig`: one or more `LoginModuleClass flag key=value ...;` entries) and JAAS files with
//! named contexts (`KafkaConnect { ...; };`, read by Connect's basic-auth REST extension).
//!
//! Values are words or double-quoted strings (a backslash escapes the next character inside
//! quotes); `//` and `/* */` comments are skipped, as Java's `StreamTokenizer` does.

use std::collections::BTreeMap;

/// One login module entry.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct LoginModule {
    /// The fully qualified class name, e.g.
    /// `org.apache.kafka.common.security.scram.ScramLoginModule`.
    pub class: String,
    /// `required`, `requisite`, `sufficient` or `optional` (lower case).
    pub flag: String,
    /// The options, in name order.
    pub options: BTreeMap<String, String>,
}

impl LoginModule {
    /// The class name without its package (`ScramLoginModule`).
    pub fn simple_name(&self) -> &str {
        self.class.rsplit('.').next().unwrap_or(&self.class)
    }
}

/// A parse error, with the offending position's text.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
#[error("{0}")]
pub struct JaasError(pub String);

#[derive(Debug, Clone, PartialEq, Eq)]
enum Token {
    Word(String),
    Quoted(String),
    Punct(char),
}

fn tokenize(text: &str) -> Result<Vec<Token>, JaasError> {
    let mut out = Vec::new();
    let chars: Vec<char> = text.chars().collect();
    let mut i = 0;
    while i < chars.len() {
        let c = chars[i];
        if c.is_whitespace() {
            i += 1;
        } else if c == '/' && chars.get(i + 1) == Some(&'/') {
            while i < chars.len() && chars[i] != '\n' {
                i += 1;
            }
        } else if c == '/' && chars.get(i + 1) == Some(&'*') {
            i += 2;
            while i + 1 < chars.len() && !(chars[i] == '*' && chars[i + 1] == '/') {
                i += 1;
            }
            i += 2;
        } else if c == '"' {
            let mut s = String::new();
            i += 1;
            loop {
                match chars.get(i) {
                    None => return Err(JaasError("unterminated quoted value".into())),
                    Some('"') => {
                        i += 1;
                        break;
                    }
                    Some('\\') => {
                        if let Some(n) = chars.get(i + 1) {
                            s.push(*n);
                        }
                        i += 2;
                    }
                    Some(ch) => {
                        s.push(*ch);
                        i += 1;
                    }
                }
            }
            out.push(Token::Quoted(s));
        } else if matches!(c, ';' | '=' | '{' | '}') {
            out.push(Token::Punct(c));
            i += 1;
        } else {
            let start = i;
            while i < chars.len()
                && !chars[i].is_whitespace()
                && !matches!(chars[i], ';' | '=' | '{' | '}' | '"')
            {
                i += 1;
            }
            out.push(Token::Word(chars[start..i].iter().collect()));
        }
    }
    Ok(out)
}

fn parse_modules(
    tokens: &[Token],
    pos: &mut usize,
    in_context: bool,
) -> Result<Vec<LoginModule>, JaasError> {
    let mut modules = Vec::new();
    loop {
        match tokens.get(*pos) {
            None => return Ok(modules),
            Some(Token::Punct('}')) if in_context => return Ok(modules),
            Some(Token::Word(class)) => {
                let class = class.clone();
                *pos += 1;
                let flag = match tokens.get(*pos) {
                    Some(Token::Word(f)) => f.to_ascii_lowercase(),
                    _ => {
                        return Err(JaasError(format!(
                            "login module {class}: a control flag (required, requisite, sufficient or optional) must follow the class name"
                        )))
                    }
                };
                if !["required", "requisite", "sufficient", "optional"].contains(&flag.as_str()) {
                    return Err(JaasError(format!(
                        "login module {class}: invalid control flag {flag}"
                    )));
                }
                *pos += 1;
                let mut options = BTreeMap::new();
                loop {
                    match tokens.get(*pos) {
                        Some(Token::Punct(';')) => {
                            *pos += 1;
                            break;
                        }
                        Some(Token::Word(name)) => {
                            let name = name.clone();
                            if tokens.get(*pos + 1) != Some(&Token::Punct('=')) {
                                return Err(JaasError(format!(
                                    "login module {class}: option {name} has no value"
                                )));
                            }
                            let value = match tokens.get(*pos + 2) {
                                Some(Token::Word(v)) | Some(Token::Quoted(v)) => v.clone(),
                                _ => {
                                    return Err(JaasError(format!(
                                        "login module {class}: option {name} has no value"
                                    )))
                                }
                            };
                            options.insert(name, value);
                            *pos += 3;
                        }
                        None => {
                            return Err(JaasError(format!(
                                "login module {class}: the entry must end with ';'"
                            )))
                        }
                        Some(t) => {
                            return Err(JaasError(format!(
                                "login module {class}: unexpected {t:?}"
                            )))
                        }
                    }
                }
                modules.push(LoginModule {
                    class,
                    flag,
                    options,
                });
            }
            Some(t) => {
                return Err(JaasError(format!(
                    "unexpected {t:?} where a login module class was expected"
                )))
            }
        }
    }
}

/// Parses a `sasl.jaas.config` value: one or more login modules. Kafka requires exactly one
/// for a client; [`single_module`] checks that.
pub fn parse_modules_text(text: &str) -> Result<Vec<LoginModule>, JaasError> {
    let tokens = tokenize(text)?;
    let mut pos = 0;
    let modules = parse_modules(&tokens, &mut pos, false)?;
    if modules.is_empty() {
        return Err(JaasError("no login module".into()));
    }
    Ok(modules)
}

/// The one login module of a `sasl.jaas.config` value (Kafka refuses zero or several).
pub fn single_module(text: &str) -> Result<LoginModule, JaasError> {
    let mut modules = parse_modules_text(text)?;
    if modules.len() != 1 {
        return Err(JaasError(format!(
            "must contain exactly one login module, found {}",
            modules.len()
        )));
    }
    Ok(modules.remove(0))
}

/// Parses a JAAS file: `Name { module flag opts; ... };` contexts, by name.
pub fn parse_file(text: &str) -> Result<BTreeMap<String, Vec<LoginModule>>, JaasError> {
    let tokens = tokenize(text)?;
    let mut pos = 0;
    let mut contexts = BTreeMap::new();
    while let Some(t) = tokens.get(pos) {
        let Token::Word(name) = t else {
            return Err(JaasError(format!(
                "unexpected {t:?} where a context name was expected"
            )));
        };
        let name = name.clone();
        if tokens.get(pos + 1) != Some(&Token::Punct('{')) {
            return Err(JaasError(format!("context {name}: '{{' expected")));
        }
        pos += 2;
        let modules = parse_modules(&tokens, &mut pos, true)?;
        if tokens.get(pos) != Some(&Token::Punct('}')) {
            return Err(JaasError(format!("context {name}: '}}' expected")));
        }
        pos += 1;
        if tokens.get(pos) == Some(&Token::Punct(';')) {
            pos += 1;
        }
        contexts.insert(name, modules);
    }
    Ok(contexts)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_scram_module_as_java_writes_it() {
        let m = single_module(
            r#"org.apache.kafka.common.security.scram.ScramLoginModule required username="connect" password="p;a\"s s";"#,
        )
        .unwrap();
        assert_eq!(m.simple_name(), "ScramLoginModule");
        assert_eq!(m.flag, "required");
        assert_eq!(m.options["username"], "connect");
        assert_eq!(m.options["password"], "p;a\"s s");
    }

    #[test]
    fn unquoted_values_comments_and_several_lines() {
        let m = single_module(
            "/* oauth */ org.apache.kafka.common.security.oauthbearer.OAuthBearerLoginModule Required\n  unsecuredLoginStringClaim_sub=connect // the principal\n  unsecuredLoginLifetimeSeconds=\"60\";",
        )
        .unwrap();
        assert_eq!(m.flag, "required");
        assert_eq!(m.options["unsecuredLoginStringClaim_sub"], "connect");
        assert_eq!(m.options["unsecuredLoginLifetimeSeconds"], "60");
    }

    #[test]
    fn malformed_values_are_refused() {
        assert!(single_module("org.x.PlainLoginModule required username=\"a\"").is_err());
        assert!(single_module("org.x.PlainLoginModule username=\"a\";").is_err());
        assert!(single_module("org.x.PlainLoginModule required username;").is_err());
        assert!(single_module("").is_err());
        assert!(single_module("a required; b required;").is_err());
    }

    #[test]
    fn a_jaas_file_with_contexts() {
        let f = parse_file(
            "KafkaConnect {\n  org.apache.kafka.connect.rest.basic.auth.extension.PropertyFileLoginModule required\n  file=\"/etc/connect.password\";\n};\nOther { a.B optional; };",
        )
        .unwrap();
        assert_eq!(
            f["KafkaConnect"][0].options["file"],
            "/etc/connect.password"
        );
        assert_eq!(f["Other"][0].flag, "optional");
    }
}
