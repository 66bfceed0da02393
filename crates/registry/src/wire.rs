//! Confluent's wire format: the magic byte `0`, the schema id as a 4-byte big-endian integer,
//! then the serialized data.

/// The magic byte every record starts with.
pub const MAGIC_BYTE: u8 = 0;

/// A buffer holding the five-byte header for schema `id`, ready for the data.
pub fn header(id: i32) -> Vec<u8> {
    let mut out = Vec::with_capacity(64);
    out.push(MAGIC_BYTE);
    out.extend_from_slice(&id.to_be_bytes());
    out
}

/// The schema id and the data of a record. Errors: a record shorter than the header or
/// starting with another byte (`Unknown magic byte!`, Confluent's message).
pub fn split(bytes: &[u8]) -> Result<(i32, &[u8]), &'static str> {
    match bytes {
        [MAGIC_BYTE, a, b, c, d, rest @ ..] => Ok((i32::from_be_bytes([*a, *b, *c, *d]), rest)),
        _ => Err("Unknown magic byte!"),
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn header_and_split_agree() {
        let mut b = header(0x0102_0304);
        assert_eq!(b, [0, 1, 2, 3, 4]);
        b.push(42);
        assert_eq!(split(&b), Ok((0x0102_0304, &[42u8][..])));
        assert_eq!(split(&[1, 0, 0, 0, 1]), Err("Unknown magic byte!"));
        assert_eq!(split(&[0, 0, 0]), Err("Unknown magic byte!"));
        assert_eq!(split(b"plain text"), Err("Unknown magic byte!"));
    }
}
