//! The `pgoutput` logical decoding messages a replication stream carries (protocol version 1,
//! text values), decoded: relations, and the row changes that refer to them. `Begin` and
//! `Commit` are decoded by the replication client.

use tributary_api::{ConnectError, ConnectResult};

/// One column value of a tuple.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum Datum {
    Null,
    /// A TOAST-ed value that did not change (its value is not in the WAL).
    Unchanged,
    Text(String),
}

/// A column of a `Relation` message.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct RelationColumn {
    /// Part of the replica identity.
    pub key: bool,
    pub name: String,
    pub type_oid: u32,
    pub typmod: i32,
}

/// A decoded `pgoutput` message.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum Message {
    /// A table's description, sent before its first change in a session and after it changed.
    Relation {
        id: u32,
        namespace: String,
        name: String,
        /// `REPLICA IDENTITY`: `d` default, `n` nothing, `f` full, `i` index.
        replica_identity: u8,
        columns: Vec<RelationColumn>,
    },
    Insert {
        relation: u32,
        new: Vec<Datum>,
    },
    /// `old` is the old key (`K`, when the key changed) or the whole old row (`O`, identity
    /// FULL), if sent.
    Update {
        relation: u32,
        old: Option<(u8, Vec<Datum>)>,
        new: Vec<Datum>,
    },
    Delete {
        relation: u32,
        old: (u8, Vec<Datum>),
    },
    Truncate {
        relations: Vec<u32>,
    },
    /// Begin, Commit, Message (decoded by the replication client), Origin, Type: handled
    /// elsewhere or not used.
    Other(u8),
}

struct Reader<'a> {
    buf: &'a [u8],
    pos: usize,
}

fn truncated() -> ConnectError {
    ConnectError::connect("a pgoutput message ended early")
}

impl<'a> Reader<'a> {
    fn take(&mut self, n: usize) -> ConnectResult<&'a [u8]> {
        let end = self.pos.checked_add(n).filter(|e| *e <= self.buf.len());
        let end = end.ok_or_else(truncated)?;
        let s = &self.buf[self.pos..end];
        self.pos = end;
        Ok(s)
    }
    fn u8(&mut self) -> ConnectResult<u8> {
        Ok(self.take(1)?[0])
    }
    fn u16(&mut self) -> ConnectResult<u16> {
        Ok(u16::from_be_bytes(
            self.take(2)?.try_into().expect("2 bytes"),
        ))
    }
    fn u32(&mut self) -> ConnectResult<u32> {
        Ok(u32::from_be_bytes(
            self.take(4)?.try_into().expect("4 bytes"),
        ))
    }
    fn i32(&mut self) -> ConnectResult<i32> {
        Ok(self.u32()? as i32)
    }
    fn cstr(&mut self) -> ConnectResult<String> {
        let rest = &self.buf[self.pos..];
        let len = rest.iter().position(|b| *b == 0).ok_or_else(truncated)?;
        let s = String::from_utf8_lossy(&rest[..len]).into_owned();
        self.pos += len + 1;
        Ok(s)
    }
    fn tuple(&mut self) -> ConnectResult<Vec<Datum>> {
        let n = self.u16()?;
        (0..n)
            .map(|_| {
                Ok(match self.u8()? {
                    b'n' => Datum::Null,
                    b'u' => Datum::Unchanged,
                    b't' => {
                        let len = self.u32()? as usize;
                        Datum::Text(String::from_utf8_lossy(self.take(len)?).into_owned())
                    }
                    other => {
                        return Err(ConnectError::connect(format!(
                            "unexpected pgoutput tuple column kind {:?}",
                            other as char
                        )))
                    }
                })
            })
            .collect()
    }
}

/// Decodes one message (an XLogData payload). Errors: a malformed message.
pub fn decode(data: &[u8]) -> ConnectResult<Message> {
    let mut r = Reader { buf: data, pos: 0 };
    let tag = r.u8()?;
    Ok(match tag {
        b'R' => {
            let id = r.u32()?;
            let namespace = r.cstr()?;
            let name = r.cstr()?;
            let replica_identity = r.u8()?;
            let n = r.u16()?;
            let columns = (0..n)
                .map(|_| {
                    Ok(RelationColumn {
                        key: r.u8()? & 1 == 1,
                        name: r.cstr()?,
                        type_oid: r.u32()?,
                        typmod: r.i32()?,
                    })
                })
                .collect::<ConnectResult<Vec<_>>>()?;
            Message::Relation {
                id,
                namespace,
                name,
                replica_identity,
                columns,
            }
        }
        b'I' => {
            let relation = r.u32()?;
            r.u8()?; // 'N'
            Message::Insert {
                relation,
                new: r.tuple()?,
            }
        }
        b'U' => {
            let relation = r.u32()?;
            let mut kind = r.u8()?;
            let mut old = None;
            if kind == b'K' || kind == b'O' {
                old = Some((kind, r.tuple()?));
                kind = r.u8()?;
            }
            if kind != b'N' {
                return Err(ConnectError::connect(
                    "a pgoutput update without a new tuple",
                ));
            }
            Message::Update {
                relation,
                old,
                new: r.tuple()?,
            }
        }
        b'D' => {
            let relation = r.u32()?;
            let kind = r.u8()?;
            Message::Delete {
                relation,
                old: (kind, r.tuple()?),
            }
        }
        b'T' => {
            let n = r.u32()?;
            r.u8()?; // options
            Message::Truncate {
                relations: (0..n).map(|_| r.u32()).collect::<ConnectResult<_>>()?,
            }
        }
        other => Message::Other(other),
    })
}

#[cfg(test)]
mod tests {
    use super::*;

    fn tuple(cols: &[Option<&str>]) -> Vec<u8> {
        let mut b = (cols.len() as u16).to_be_bytes().to_vec();
        for c in cols {
            match c {
                None => b.push(b'n'),
                Some("<u>") => b.push(b'u'),
                Some(t) => {
                    b.push(b't');
                    b.extend((t.len() as u32).to_be_bytes());
                    b.extend(t.as_bytes());
                }
            }
        }
        b
    }

    #[test]
    fn messages_decode() {
        let mut rel = vec![b'R'];
        rel.extend(16385u32.to_be_bytes());
        rel.extend(b"public\0t\0d");
        rel.extend(2u16.to_be_bytes());
        rel.push(1);
        rel.extend(b"id\0");
        rel.extend(23u32.to_be_bytes());
        rel.extend((-1i32).to_be_bytes());
        rel.push(0);
        rel.extend(b"v\0");
        rel.extend(25u32.to_be_bytes());
        rel.extend((-1i32).to_be_bytes());
        let Message::Relation {
            id,
            namespace,
            name,
            replica_identity,
            columns,
        } = decode(&rel).unwrap()
        else {
            panic!()
        };
        assert_eq!(
            (id, namespace.as_str(), name.as_str(), replica_identity),
            (16385, "public", "t", b'd')
        );
        assert!(columns[0].key && !columns[1].key);
        assert_eq!((columns[1].type_oid, columns[1].typmod), (25, -1));

        let mut upd = vec![b'U'];
        upd.extend(16385u32.to_be_bytes());
        upd.push(b'K');
        upd.extend(tuple(&[Some("4"), None]));
        upd.push(b'N');
        upd.extend(tuple(&[Some("5"), Some("<u>")]));
        assert_eq!(
            decode(&upd).unwrap(),
            Message::Update {
                relation: 16385,
                old: Some((b'K', vec![Datum::Text("4".into()), Datum::Null])),
                new: vec![Datum::Text("5".into()), Datum::Unchanged],
            }
        );
        assert!(decode(&upd[..upd.len() - 2]).is_err(), "truncated");

        assert_eq!(decode(b"Y").unwrap(), Message::Other(b'Y'));
    }
}
