//! The JSON tree as Jackson holds it for Connect, its parser (Jackson's reading rules as
//! Connect configures them) and its writer (Jackson's number and string formatting).

use super::*;

/// A JSON value as Jackson's tree model holds it, with the number node kinds Connect's
/// coercions depend on.
#[derive(Debug, Clone, PartialEq)]
pub(super) enum Node {
    Null,
    Bool(bool),
    /// An integer that fits in 32 bits (`IntNode`).
    Int(i32),
    /// An integer that fits in 64 bits (`LongNode`).
    Long(i64),
    /// A larger integer (`BigIntegerNode`).
    BigInt(BigInt),
    /// A number with a fraction or exponent, kept exact (`DecimalNode`).
    Decimal(Decimal),
    Float(f32),
    Double(f64),
    Text(String),
    Binary(Vec<u8>),
    Array(Vec<Node>),
    /// Entries in insertion order; keys are unique.
    Object(Vec<(String, Node)>),
}

/// The value of `key` in an object's entries.
pub(super) fn get<'a>(entries: &'a [(String, Node)], key: &str) -> Option<&'a Node> {
    entries.iter().find(|(k, _)| k == key).map(|(_, v)| v)
}

/// Sets `key`, replacing an existing entry in place (as `LinkedHashMap.put` does).
pub(super) fn set(entries: &mut Vec<(String, Node)>, key: &str, value: Node) {
    match entries.iter_mut().find(|(k, _)| k == key) {
        Some(e) => e.1 = value,
        None => entries.push((key.to_string(), value)),
    }
}

impl Node {
    pub(super) fn get(&self, key: &str) -> Option<&Node> {
        match self {
            Node::Object(entries) => get(entries, key),
            _ => None,
        }
    }

    pub(super) fn is_integral(&self) -> bool {
        matches!(self, Node::Int(_) | Node::Long(_) | Node::BigInt(_))
    }

    pub(super) fn is_number(&self) -> bool {
        matches!(
            self,
            Node::Int(_)
                | Node::Long(_)
                | Node::BigInt(_)
                | Node::Decimal(_)
                | Node::Float(_)
                | Node::Double(_)
        )
    }

    /// Jackson's node type name (`JsonNodeType`), as Connect's messages show it.
    pub(super) fn node_type(&self) -> &'static str {
        match self {
            Node::Null => "NULL",
            Node::Bool(_) => "BOOLEAN",
            Node::Text(_) => "STRING",
            Node::Binary(_) => "BINARY",
            Node::Array(_) => "ARRAY",
            Node::Object(_) => "OBJECT",
            _ => "NUMBER",
        }
    }

    /// `JsonNode.intValue()`: numbers narrowed as Java casts them, 0 for non-numbers.
    pub(super) fn int_value(&self) -> i32 {
        self.long_value() as i32
    }

    /// `JsonNode.longValue()`: numbers narrowed as Java casts them, 0 for non-numbers.
    pub(super) fn long_value(&self) -> i64 {
        match self {
            Node::Int(v) => *v as i64,
            Node::Long(v) => *v,
            Node::BigInt(v) => low_i64(v),
            Node::Decimal(d) => decimal_low_i64(d),
            Node::Float(v) => *v as i64,
            Node::Double(v) => *v as i64,
            _ => 0,
        }
    }

    /// `JsonNode.floatValue()`.
    pub(super) fn float_value(&self) -> f32 {
        match self {
            Node::Int(v) => *v as f32,
            Node::Long(v) => *v as f32,
            Node::BigInt(v) => v.to_string().parse().unwrap_or(0.0),
            Node::Decimal(d) => d.to_string().parse().unwrap_or(0.0),
            Node::Float(v) => *v,
            Node::Double(v) => *v as f32,
            _ => 0.0,
        }
    }

    /// `JsonNode.doubleValue()`.
    pub(super) fn double_value(&self) -> f64 {
        match self {
            Node::Int(v) => *v as f64,
            Node::Long(v) => *v as f64,
            Node::BigInt(v) => v.to_string().parse().unwrap_or(0.0),
            Node::Decimal(d) => d.to_string().parse().unwrap_or(0.0),
            Node::Float(v) => *v as f64,
            Node::Double(v) => *v,
            _ => 0.0,
        }
    }

    /// `JsonNode.decimalValue()` of a number node.
    pub(super) fn decimal_value(&self) -> Decimal {
        match self {
            Node::Int(v) => Decimal::new(*v, 0),
            Node::Long(v) => Decimal::new(*v, 0),
            Node::BigInt(v) => Decimal::new(v.clone(), 0),
            Node::Decimal(d) => d.clone(),
            Node::Float(v) => Decimal::parse(&float_to_string(*v)).unwrap_or(Decimal::new(0, 0)),
            Node::Double(v) => Decimal::parse(&double_to_string(*v)).unwrap_or(Decimal::new(0, 0)),
            _ => Decimal::new(0, 0),
        }
    }

    /// `JsonNode.binaryValue()`: base64-decoded text, the bytes of a binary node, `None` for
    /// anything else; `Err` for text that is not base64.
    pub(super) fn binary_value(&self) -> Result<Option<Vec<u8>>, ()> {
        match self {
            Node::Binary(b) => Ok(Some(b.clone())),
            Node::Text(t) => {
                let cleaned: String = t.chars().filter(|c| *c > ' ').collect();
                BASE64_READ
                    .decode(cleaned.as_bytes())
                    .map(Some)
                    .map_err(|_| ())
            }
            _ => Ok(None),
        }
    }

    /// `JsonNode.asText()`: the string of a text node, the JSON text of scalars.
    pub(super) fn as_text(&self) -> String {
        match self {
            Node::Text(t) => t.clone(),
            Node::Null => "null".into(),
            Node::Binary(b) => STANDARD.encode(b),
            Node::Array(_) | Node::Object(_) => String::new(),
            scalar => {
                let mut out = Vec::new();
                write_node(&mut out, scalar);
                String::from_utf8(out).unwrap_or_default()
            }
        }
    }
}

/// Base64 as Jackson reads it: standard alphabet, padding required, trailing bits ignored.
pub(super) const BASE64_READ: GeneralPurpose = GeneralPurpose::new(
    &alphabet::STANDARD,
    GeneralPurposeConfig::new()
        .with_decode_allow_trailing_bits(true)
        .with_decode_padding_mode(DecodePaddingMode::RequireCanonical),
);

// -------------------------------------------------------------------- writing

pub(super) fn write_node(out: &mut Vec<u8>, node: &Node) {
    match node {
        Node::Null => out.extend_from_slice(b"null"),
        Node::Bool(b) => out.extend_from_slice(if *b { b"true" } else { b"false" }),
        Node::Int(v) => out.extend_from_slice(v.to_string().as_bytes()),
        Node::Long(v) => out.extend_from_slice(v.to_string().as_bytes()),
        Node::BigInt(v) => out.extend_from_slice(v.to_string().as_bytes()),
        Node::Decimal(d) => out.extend_from_slice(d.to_string().as_bytes()),
        Node::Float(v) => write_number_text(out, float_to_string(*v)),
        Node::Double(v) => write_number_text(out, double_to_string(*v)),
        Node::Text(s) => write_string(out, s),
        Node::Binary(b) => {
            out.push(b'"');
            out.extend_from_slice(STANDARD.encode(b).as_bytes());
            out.push(b'"');
        }
        Node::Array(items) => {
            out.push(b'[');
            for (i, item) in items.iter().enumerate() {
                if i > 0 {
                    out.push(b',');
                }
                write_node(out, item);
            }
            out.push(b']');
        }
        Node::Object(entries) => {
            out.push(b'{');
            for (i, (k, v)) in entries.iter().enumerate() {
                if i > 0 {
                    out.push(b',');
                }
                write_string(out, k);
                out.push(b':');
                write_node(out, v);
            }
            out.push(b'}');
        }
    }
}

/// Jackson quotes the non-finite numbers (`QUOTE_NON_NUMERIC_NUMBERS`).
pub(super) fn write_number_text(out: &mut Vec<u8>, text: String) {
    if text.ends_with("Infinity") || text == "NaN" {
        out.push(b'"');
        out.extend_from_slice(text.as_bytes());
        out.push(b'"');
    } else {
        out.extend_from_slice(text.as_bytes());
    }
}

/// A JSON string with Jackson's escaping (`tributary_api::data::java_fmt::write_json_string`).
pub(super) fn write_string(out: &mut Vec<u8>, s: &str) {
    tributary_api::data::java_fmt::write_json_string(out, s);
}

// -------------------------------------------------------------------- parsing

/// How deeply arrays and objects may nest (Jackson's default stream constraint).
pub(super) const MAX_DEPTH: usize = 1000;

/// How many digits a number may have (Jackson's default `maxNumberLength`).
pub(super) const MAX_NUMBER_LENGTH: usize = 1000;

/// Parses the first JSON value of `bytes` and ignores whatever follows it (Jackson's
/// `readTree`). `Ok(None)` for input holding only whitespace (Jackson's missing node).
pub(super) fn parse_json(bytes: &[u8]) -> Result<Option<Node>, String> {
    let mut p = Parser { b: bytes, i: 0 };
    p.skip_ws();
    if p.i >= p.b.len() {
        return Ok(None);
    }
    p.value(0).map(Some)
}

/// Where the JSON value starting at `start` ends (exclusive), found by matching brackets
/// outside strings, without parsing or checking it; `None` when the bytes end first. Only for
/// text that is then parsed, or compared with text that was.
pub(super) fn skip_json_value(b: &[u8], start: usize) -> Option<usize> {
    let mut i = start;
    let mut depth = 0usize;
    loop {
        match *b.get(i)? {
            b'"' => {
                i += 1;
                loop {
                    match *b.get(i)? {
                        b'\\' => i += 2,
                        b'"' => break,
                        _ => i += 1,
                    }
                }
                i += 1;
            }
            b'{' | b'[' => {
                depth += 1;
                i += 1;
            }
            b'}' | b']' => {
                depth = depth.checked_sub(1)?;
                i += 1;
            }
            _ if depth == 0 => {
                // A scalar: up to the next delimiter.
                i += 1;
                while b.get(i).is_some_and(|c| {
                    !matches!(c, b',' | b'}' | b']' | b' ' | b'\t' | b'\n' | b'\r')
                }) {
                    i += 1;
                }
                return Some(i);
            }
            _ => i += 1,
        }
        if depth == 0 {
            return Some(i);
        }
    }
}

pub(super) struct Parser<'a> {
    /// The input.
    pub(super) b: &'a [u8],
    /// The position of the next byte to read.
    pub(super) i: usize,
}

impl Parser<'_> {
    /// Steps over each of `tokens` in turn, white space allowed before and after each;
    /// `None` when the bytes at the cursor are not the next token.
    pub(super) fn tokens(&mut self, tokens: &[&[u8]]) -> Option<()> {
        for token in tokens {
            self.skip_ws();
            if !self.b[self.i.min(self.b.len())..].starts_with(token) {
                return None;
            }
            self.i += token.len();
        }
        self.skip_ws();
        Some(())
    }

    pub(super) fn skip_ws(&mut self) {
        while self.i < self.b.len() && matches!(self.b[self.i], b' ' | b'\t' | b'\n' | b'\r') {
            self.i += 1;
        }
    }

    pub(super) fn peek(&self) -> Option<u8> {
        self.b.get(self.i).copied()
    }

    pub(super) fn err<T>(&self, what: &str) -> Result<T, String> {
        Err(format!("{what} at byte {}", self.i))
    }

    pub(super) fn literal(&mut self, word: &[u8], node: Node) -> Result<Node, String> {
        if self.b[self.i..].starts_with(word) {
            self.i += word.len();
            Ok(node)
        } else {
            self.err("unrecognized token")
        }
    }

    pub(super) fn value(&mut self, depth: usize) -> Result<Node, String> {
        if depth > MAX_DEPTH {
            return self.err("nesting too deep");
        }
        match self.peek() {
            Some(b'{') => {
                self.i += 1;
                let mut entries: Vec<(String, Node)> = Vec::new();
                self.skip_ws();
                if self.peek() == Some(b'}') {
                    self.i += 1;
                    return Ok(Node::Object(entries));
                }
                loop {
                    self.skip_ws();
                    if self.peek() != Some(b'"') {
                        return self.err("expected field name");
                    }
                    let key = self.string()?;
                    self.skip_ws();
                    if self.peek() != Some(b':') {
                        return self.err("expected ':'");
                    }
                    self.i += 1;
                    self.skip_ws();
                    let v = self.value(depth + 1)?;
                    set(&mut entries, &key, v);
                    self.skip_ws();
                    match self.peek() {
                        Some(b',') => self.i += 1,
                        Some(b'}') => {
                            self.i += 1;
                            return Ok(Node::Object(entries));
                        }
                        _ => return self.err("expected ',' or '}'"),
                    }
                }
            }
            Some(b'[') => {
                self.i += 1;
                let mut items = Vec::new();
                self.skip_ws();
                if self.peek() == Some(b']') {
                    self.i += 1;
                    return Ok(Node::Array(items));
                }
                loop {
                    self.skip_ws();
                    items.push(self.value(depth + 1)?);
                    self.skip_ws();
                    match self.peek() {
                        Some(b',') => self.i += 1,
                        Some(b']') => {
                            self.i += 1;
                            return Ok(Node::Array(items));
                        }
                        _ => return self.err("expected ',' or ']'"),
                    }
                }
            }
            Some(b'"') => Ok(Node::Text(self.string()?)),
            Some(b't') => self.literal(b"true", Node::Bool(true)),
            Some(b'f') => self.literal(b"false", Node::Bool(false)),
            Some(b'n') => self.literal(b"null", Node::Null),
            Some(c) if c == b'-' || c.is_ascii_digit() => self.number(),
            _ => self.err("unexpected character"),
        }
    }

    pub(super) fn number(&mut self) -> Result<Node, String> {
        let start = self.i;
        if self.peek() == Some(b'-') {
            self.i += 1;
        }
        let digits = |p: &mut Self| {
            let s = p.i;
            while p.peek().is_some_and(|c| c.is_ascii_digit()) {
                p.i += 1;
            }
            p.i - s
        };
        let int_len = digits(self);
        if int_len == 0 {
            return self.err("expected digit");
        }
        let mut is_float = false;
        let mut frac_len = 0;
        if self.peek() == Some(b'.') {
            self.i += 1;
            is_float = true;
            frac_len = digits(self);
            if frac_len == 0 {
                return self.err("expected fraction digit");
            }
        }
        let mut exp_len = 0;
        if matches!(self.peek(), Some(b'e' | b'E')) {
            self.i += 1;
            is_float = true;
            if matches!(self.peek(), Some(b'+' | b'-')) {
                self.i += 1;
            }
            exp_len = digits(self);
            if exp_len == 0 {
                return self.err("expected exponent digit");
            }
        }
        // Jackson's StreamReadConstraints: at most 1000 digits (integer, fraction and exponent
        // digits together), refused before any arithmetic on the number.
        let length = int_len + frac_len + exp_len;
        if length > MAX_NUMBER_LENGTH {
            return Err(format!(
                "Number value length ({length}) exceeds the maximum allowed ({MAX_NUMBER_LENGTH}, from `StreamReadConstraints.getMaxNumberLength()`)"
            ));
        }
        let text = std::str::from_utf8(&self.b[start..self.i]).expect("ASCII");
        if is_float {
            return Decimal::parse(text)
                .map(Node::Decimal)
                .map_err(|e| e.to_string());
        }
        let v: BigInt = text.parse().map_err(|_| "bad integer".to_string())?;
        Ok(match i64::try_from(&v) {
            Ok(l) => match i32::try_from(l) {
                Ok(i) => Node::Int(i),
                Err(_) => Node::Long(l),
            },
            Err(_) => Node::BigInt(v),
        })
    }

    pub(super) fn hex4(&mut self) -> Result<u16, String> {
        let Some(h) = self.b.get(self.i..self.i + 4) else {
            return self.err("truncated escape");
        };
        let s = std::str::from_utf8(h).map_err(|_| "bad escape".to_string())?;
        let v = u16::from_str_radix(s, 16).map_err(|_| format!("bad escape at byte {}", self.i))?;
        self.i += 4;
        Ok(v)
    }

    /// A string; the cursor is on the opening quote.
    pub(super) fn string(&mut self) -> Result<String, String> {
        self.i += 1;
        let mut out: Vec<u8> = Vec::new();
        let mut units: Vec<u16> = Vec::new();
        let flush = |out: &mut Vec<u8>, units: &mut Vec<u16>| {
            if !units.is_empty() {
                let s: String = char::decode_utf16(units.drain(..))
                    .map(|r| r.unwrap_or('\u{fffd}'))
                    .collect();
                out.extend_from_slice(s.as_bytes());
            }
        };
        loop {
            let Some(c) = self.peek() else {
                return self.err("unterminated string");
            };
            self.i += 1;
            match c {
                b'"' => break,
                b'\\' => {
                    let Some(e) = self.peek() else {
                        return self.err("unterminated escape");
                    };
                    self.i += 1;
                    if e == b'u' {
                        units.push(self.hex4()?);
                        continue;
                    }
                    flush(&mut out, &mut units);
                    out.push(match e {
                        b'"' => b'"',
                        b'\\' => b'\\',
                        b'/' => b'/',
                        b'b' => 8,
                        b'f' => 12,
                        b'n' => b'\n',
                        b'r' => b'\r',
                        b't' => b'\t',
                        _ => return self.err("unrecognized escape"),
                    });
                }
                c if c < 0x20 => return self.err("unescaped control character"),
                c => {
                    flush(&mut out, &mut units);
                    out.push(c);
                }
            }
        }
        flush(&mut out, &mut units);
        String::from_utf8(out).map_err(|_| "invalid UTF-8".to_string())
    }
}
