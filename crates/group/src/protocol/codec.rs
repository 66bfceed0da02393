//! Classic (non-flexible) Kafka primitive encodings used inside Connect payloads.
//!
//! Mirrors the subset of `org.apache.kafka.common.protocol.types` that the Connect schemas use:
//! INT16/INT32/INT64 big-endian, STRING (INT16 length, non-nullable), NULLABLE_BYTES (INT32
//! length, -1 = null) and ARRAY (INT32 count, -1 = null for the nullable form). Nothing here
//! is varint- or compact-encoded, even when the surrounding Kafka message is flexible.

use super::ProtocolError;

/// Cursor over a byte slice with the tolerant-read rules of Java's
/// `Schema(TOLERATE_MISSING_FIELDS_WITH_DEFAULTS, ...)`: a field with a default may be absent
/// only when the buffer is exhausted; a field that starts must be complete.
pub(crate) struct Reader<'a> {
    buf: &'a [u8],
    pos: usize,
}

impl<'a> Reader<'a> {
    pub(crate) fn new(buf: &'a [u8]) -> Self {
        Reader { buf, pos: 0 }
    }

    /// True when no bytes are left (a defaulted trailing field may then be omitted).
    pub(crate) fn is_exhausted(&self) -> bool {
        self.pos >= self.buf.len()
    }

    fn take(&mut self, n: usize, field: &'static str) -> Result<&'a [u8], ProtocolError> {
        let remaining = self.buf.len() - self.pos;
        if remaining < n {
            return Err(ProtocolError::Truncated {
                field,
                needed: n,
                remaining,
            });
        }
        let out = &self.buf[self.pos..self.pos + n];
        self.pos += n;
        Ok(out)
    }

    pub(crate) fn i16(&mut self, field: &'static str) -> Result<i16, ProtocolError> {
        let b = self.take(2, field)?;
        Ok(i16::from_be_bytes([b[0], b[1]]))
    }

    pub(crate) fn i32(&mut self, field: &'static str) -> Result<i32, ProtocolError> {
        let b = self.take(4, field)?;
        Ok(i32::from_be_bytes([b[0], b[1], b[2], b[3]]))
    }

    pub(crate) fn i64(&mut self, field: &'static str) -> Result<i64, ProtocolError> {
        let b = self.take(8, field)?;
        let mut a = [0u8; 8];
        a.copy_from_slice(b);
        Ok(i64::from_be_bytes(a))
    }

    /// Non-nullable STRING: negative length is an error (Java `SchemaException`).
    pub(crate) fn string(&mut self, field: &'static str) -> Result<String, ProtocolError> {
        let len = self.i16(field)?;
        if len < 0 {
            return Err(ProtocolError::NegativeLength {
                field,
                length: len as i32,
            });
        }
        let bytes = self.take(len as usize, field)?;
        String::from_utf8(bytes.to_vec()).map_err(|_| ProtocolError::InvalidUtf8 { field })
    }

    /// NULLABLE_BYTES: `None` for length -1; other negative lengths are errors.
    pub(crate) fn nullable_bytes(
        &mut self,
        field: &'static str,
    ) -> Result<Option<&'a [u8]>, ProtocolError> {
        let len = self.i32(field)?;
        match len {
            -1 => Ok(None),
            n if n < 0 => Err(ProtocolError::NegativeLength { field, length: n }),
            n => Ok(Some(self.take(n as usize, field)?)),
        }
    }

    /// ARRAY count. `nullable` selects whether -1 means null (`None`) or is an error.
    pub(crate) fn array_len(
        &mut self,
        field: &'static str,
        nullable: bool,
    ) -> Result<Option<usize>, ProtocolError> {
        let n = self.i32(field)?;
        match n {
            -1 if nullable => Ok(None),
            n if n < 0 => Err(ProtocolError::NegativeLength { field, length: n }),
            n => {
                // Every element is at least 2 bytes (an INT16 string length) or 4 (INT32), so a
                // count larger than the remaining bytes cannot be valid; refuse it before
                // allocating.
                let remaining = self.buf.len() - self.pos;
                if n as usize > remaining {
                    return Err(ProtocolError::Truncated {
                        field,
                        needed: n as usize,
                        remaining,
                    });
                }
                Ok(Some(n as usize))
            }
        }
    }
}

/// Append-only big-endian writer.
#[derive(Default)]
pub(crate) struct Writer {
    pub(crate) buf: Vec<u8>,
}

impl Writer {
    pub(crate) fn i16(&mut self, v: i16) {
        self.buf.extend_from_slice(&v.to_be_bytes());
    }

    pub(crate) fn i32(&mut self, v: i32) {
        self.buf.extend_from_slice(&v.to_be_bytes());
    }

    pub(crate) fn i64(&mut self, v: i64) {
        self.buf.extend_from_slice(&v.to_be_bytes());
    }

    /// Non-nullable STRING; at most 32767 UTF-8 bytes.
    pub(crate) fn string(&mut self, field: &'static str, s: &str) -> Result<(), ProtocolError> {
        let len = s.len();
        if len > i16::MAX as usize {
            return Err(ProtocolError::StringTooLong { field, length: len });
        }
        self.i16(len as i16);
        self.buf.extend_from_slice(s.as_bytes());
        Ok(())
    }

    /// NULLABLE_BYTES.
    pub(crate) fn nullable_bytes(
        &mut self,
        field: &'static str,
        b: Option<&[u8]>,
    ) -> Result<(), ProtocolError> {
        match b {
            None => self.i32(-1),
            Some(b) => {
                self.i32(array_count(field, b.len())?);
                self.buf.extend_from_slice(b);
            }
        }
        Ok(())
    }
}

/// Checks that a length fits an INT32 count.
pub(crate) fn array_count(field: &'static str, n: usize) -> Result<i32, ProtocolError> {
    i32::try_from(n).map_err(|_| ProtocolError::TooManyElements { field, count: n })
}
