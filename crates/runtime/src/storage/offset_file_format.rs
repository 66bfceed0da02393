//! Binary format of the standalone-mode source offsets file.
//!
//! Apache Kafka Connect's standalone worker keeps source offsets in the file
//! named by `offset.storage.file.filename`
//! (`org.apache.kafka.connect.storage.FileOffsetBackingStore`). That file holds
//! exactly one object written with Java serialization
//! (`java.io.ObjectOutputStream.writeObject`): a `java.util.HashMap<byte[], byte[]>`.
//! Each key holds the JSON-converter bytes (schemas disabled) of
//! `["<connector>",{<source partition>}]`; each value holds the JSON bytes of
//! the offset map, or is `null`.
//!
//! This module reads and writes that format so that an offsets file can move
//! between Apache Kafka Connect and Tributary in both directions. It
//! implements only the small subset of the Java Object Serialization Stream
//! Protocol that such a file uses:
//!
//! ```text
//! AC ED 00 05                      stream magic, stream version 5
//! 73                               TC_OBJECT
//!   72 "java.util.HashMap"         TC_CLASSDESC, name (u16 length + modified UTF-8)
//!      05 07 DA C1 C3 16 60 D1     serialVersionUID 362498820763181265
//!      03                          SC_WRITE_METHOD | SC_SERIALIZABLE
//!      00 02                       2 fields, primitive fields sorted by name:
//!        46 "loadFactor"           'F' float
//!        49 "threshold"            'I' int
//!      78                          TC_ENDBLOCKDATA (no class annotation)
//!      70                          TC_NULL (no serializable superclass)
//!   3F 40 00 00                    loadFactor = 0.75f
//!   <i32>                          threshold
//!   77 08 <i32 buckets> <i32 size> TC_BLOCKDATA written by HashMap.writeObject
//!   key, value, key, value, ...    `size` pairs, each one of:
//!     75 72 "[B" AC F3 17 F8 06 08 54 E0 02 00 00 78 70 <i32 len> <bytes>
//!                                  TC_ARRAY + new byte[] class descriptor
//!                                  (only for the first array in the stream)
//!     75 71 00 7E 00 02 <i32 len> <bytes>
//!                                  TC_ARRAY + TC_REFERENCE to that descriptor
//!     71 <i32 handle>              TC_REFERENCE to an array written earlier
//!     70                           TC_NULL (null value)
//!   78                             TC_ENDBLOCKDATA (end of HashMap custom data)
//! ```
//!
//! All integers are big-endian. Handles are numbered from `0x7E0000` in the
//! order objects are first written: HashMap class descriptor, the HashMap,
//! the `byte[]` class descriptor, then each array.

use std::fmt;
use std::rc::Rc;

/// One offsets-file entry: the serialized key (`["connector",{partition}]`)
/// and the serialized offset, `None` when Java held a `null` value.
pub type OffsetFileEntry = (Vec<u8>, Option<Vec<u8>>);

// --- Java Object Serialization Stream Protocol constants -------------------

const STREAM_MAGIC: u16 = 0xACED;
const STREAM_VERSION: u16 = 5;

const TC_NULL: u8 = 0x70;
const TC_REFERENCE: u8 = 0x71;
const TC_CLASSDESC: u8 = 0x72;
const TC_OBJECT: u8 = 0x73;
const TC_STRING: u8 = 0x74;
const TC_ARRAY: u8 = 0x75;
const TC_CLASS: u8 = 0x76;
const TC_BLOCKDATA: u8 = 0x77;
const TC_ENDBLOCKDATA: u8 = 0x78;
const TC_RESET: u8 = 0x79;
const TC_BLOCKDATALONG: u8 = 0x7A;
const TC_EXCEPTION: u8 = 0x7B;
const TC_LONGSTRING: u8 = 0x7C;
const TC_PROXYCLASSDESC: u8 = 0x7D;
const TC_ENUM: u8 = 0x7E;

const BASE_WIRE_HANDLE: u32 = 0x7E_0000;

const SC_WRITE_METHOD: u8 = 0x01;
const SC_SERIALIZABLE: u8 = 0x02;
const SC_EXTERNALIZABLE: u8 = 0x04;

const HASHMAP_CLASS: &[u8] = b"java.util.HashMap";
/// serialVersionUID of `java.util.HashMap`.
const HASHMAP_SUID: i64 = 362_498_820_763_181_265;
const BYTE_ARRAY_CLASS: &[u8] = b"[B";
/// serialVersionUID Java computes for the `byte[]` class.
const BYTE_ARRAY_SUID: i64 = -5_984_413_125_824_719_648;

/// `HashMap.DEFAULT_LOAD_FACTOR`.
const DEFAULT_LOAD_FACTOR: f32 = 0.75;
/// `HashMap.DEFAULT_INITIAL_CAPACITY`.
const DEFAULT_INITIAL_CAPACITY: u32 = 16;
/// `HashMap.MAXIMUM_CAPACITY`.
const MAXIMUM_CAPACITY: u32 = 1 << 30;

/// Maximum nesting of class descriptors (superclass chains) accepted while
/// decoding, so hostile input cannot exhaust the stack.
const MAX_CLASS_DESC_DEPTH: usize = 64;

// --- Errors -----------------------------------------------------------------

/// Why an offsets file could not be decoded.
///
/// Every variant that concerns a particular place in the input carries the
/// zero-based byte `offset` where the problem was found.
///
/// [`OffsetFileError::EmptyFile`] is special: Java's
/// `FileOffsetBackingStore` treats a *missing* file as "no offsets", but a
/// zero-length file makes `ObjectInputStream` fail with `EOFException`.
/// Callers that want to be more forgiving than Java can check
/// [`OffsetFileError::is_empty_file`] and treat the file as an empty map.
#[derive(Debug, Clone, PartialEq)]
#[non_exhaustive]
pub enum OffsetFileError {
    /// The input has zero bytes (Java: `EOFException` from the
    /// `ObjectInputStream` constructor). Safe to treat as an empty map.
    EmptyFile,
    /// The input ended early: `needed` more bytes were required at `offset`
    /// to read `what`, but only `available` remained.
    Truncated {
        /// Byte position where the read started.
        offset: usize,
        /// Bytes required.
        needed: usize,
        /// Bytes left in the input.
        available: usize,
        /// What was being read.
        what: &'static str,
    },
    /// The first two bytes are not the serialization magic `0xACED`, so the
    /// file was not written by `ObjectOutputStream`.
    BadMagic {
        /// The two bytes found at offset 0.
        found: u16,
    },
    /// The stream version at offset 2 is not 5.
    UnsupportedVersion {
        /// The version found.
        found: u16,
    },
    /// A type code other than the ones allowed at this point was found.
    UnexpectedTypeCode {
        /// Position of the type code.
        offset: usize,
        /// The byte found.
        found: u8,
        /// What was expected here.
        expected: &'static str,
    },
    /// A class descriptor names a class other than the one this format
    /// allows at this point (for example a `LinkedHashMap` or a `String[]`).
    UnexpectedClass {
        /// Position of the class descriptor.
        offset: usize,
        /// Class name from the stream.
        found: String,
        /// Class required here.
        expected: &'static str,
    },
    /// The `java.util.HashMap` class descriptor carries a serialVersionUID
    /// other than Java's (Java: `InvalidClassException`).
    IncompatibleClass {
        /// Position of the class descriptor.
        offset: usize,
        /// Class name.
        class: String,
        /// serialVersionUID Java requires.
        expected: i64,
        /// serialVersionUID found in the stream.
        found: i64,
    },
    /// A `TC_REFERENCE` names a handle that was never assigned, or one that
    /// refers to an object of the wrong kind.
    InvalidHandle {
        /// Position of the `TC_REFERENCE` type code.
        offset: usize,
        /// The raw wire handle (handles start at `0x7E0000`).
        handle: u32,
        /// What is wrong with it.
        reason: &'static str,
    },
    /// A map key is `null`. Kafka Connect never writes null keys, and a null
    /// key cannot be represented by [`OffsetFileEntry`].
    NullKey {
        /// Position of the `TC_NULL` key.
        offset: usize,
    },
    /// The stream is structurally invalid in some other way.
    Malformed {
        /// Position of the problem.
        offset: usize,
        /// Description of the problem.
        reason: String,
    },
}

impl OffsetFileError {
    /// True for [`OffsetFileError::EmptyFile`]: the caller may treat the
    /// file as holding no offsets.
    pub fn is_empty_file(&self) -> bool {
        matches!(self, OffsetFileError::EmptyFile)
    }

    /// Byte position of the problem, where there is one.
    pub fn offset(&self) -> Option<usize> {
        match self {
            OffsetFileError::EmptyFile => None,
            OffsetFileError::BadMagic { .. } => Some(0),
            OffsetFileError::UnsupportedVersion { .. } => Some(2),
            OffsetFileError::Truncated { offset, .. }
            | OffsetFileError::UnexpectedTypeCode { offset, .. }
            | OffsetFileError::UnexpectedClass { offset, .. }
            | OffsetFileError::IncompatibleClass { offset, .. }
            | OffsetFileError::InvalidHandle { offset, .. }
            | OffsetFileError::NullKey { offset }
            | OffsetFileError::Malformed { offset, .. } => Some(*offset),
        }
    }
}

impl fmt::Display for OffsetFileError {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self {
            OffsetFileError::EmptyFile => {
                write!(f, "offsets file is empty (zero bytes); expected a Java-serialized java.util.HashMap")
            }
            OffsetFileError::Truncated { offset, needed, available, what } => write!(
                f,
                "offsets file truncated at byte {offset}: {what} needs {needed} bytes but only {available} remain"
            ),
            OffsetFileError::BadMagic { found } => write!(
                f,
                "not a Java serialization stream: expected magic 0xACED at byte 0, found 0x{found:04X}"
            ),
            OffsetFileError::UnsupportedVersion { found } => write!(
                f,
                "unsupported Java serialization stream version {found} at byte 2 (expected 5)"
            ),
            OffsetFileError::UnexpectedTypeCode { offset, found, expected } => write!(
                f,
                "unexpected type code 0x{found:02X} ({}) at byte {offset}: expected {expected}",
                type_code_name(*found)
            ),
            OffsetFileError::UnexpectedClass { offset, found, expected } => write!(
                f,
                "unexpected class {found:?} in class descriptor at byte {offset}: expected {expected}"
            ),
            OffsetFileError::IncompatibleClass { offset, class, expected, found } => write!(
                f,
                "class descriptor for {class} at byte {offset} has serialVersionUID {found}, Java's is {expected}"
            ),
            OffsetFileError::InvalidHandle { offset, handle, reason } => write!(
                f,
                "invalid back-reference to handle 0x{handle:08X} at byte {offset}: {reason}"
            ),
            OffsetFileError::NullKey { offset } => write!(
                f,
                "null map key at byte {offset}: offsets file keys must be byte arrays"
            ),
            OffsetFileError::Malformed { offset, reason } => {
                write!(f, "malformed offsets file at byte {offset}: {reason}")
            }
        }
    }
}

impl std::error::Error for OffsetFileError {}

fn type_code_name(code: u8) -> &'static str {
    match code {
        TC_NULL => "TC_NULL",
        TC_REFERENCE => "TC_REFERENCE",
        TC_CLASSDESC => "TC_CLASSDESC",
        TC_OBJECT => "TC_OBJECT",
        TC_STRING => "TC_STRING",
        TC_ARRAY => "TC_ARRAY",
        TC_CLASS => "TC_CLASS",
        TC_BLOCKDATA => "TC_BLOCKDATA",
        TC_ENDBLOCKDATA => "TC_ENDBLOCKDATA",
        TC_RESET => "TC_RESET",
        TC_BLOCKDATALONG => "TC_BLOCKDATALONG",
        TC_EXCEPTION => "TC_EXCEPTION",
        TC_LONGSTRING => "TC_LONGSTRING",
        TC_PROXYCLASSDESC => "TC_PROXYCLASSDESC",
        TC_ENUM => "TC_ENUM",
        _ => "not a type code",
    }
}

// --- Encoding -----------------------------------------------------------------

/// `(threshold, buckets)` that `java.util.HashMap.writeObject` records for a
/// map created with `new HashMap<>()` and then filled with `len` entries by
/// `put` (which is how `FileOffsetBackingStore.save` builds it).
///
/// An untouched map has no table yet: threshold 0, 16 buckets. The first
/// `put` allocates 16 buckets with threshold 12, and the table doubles
/// (threshold too) whenever the size exceeds the threshold.
fn java_hashmap_geometry(len: usize) -> (i32, i32) {
    if len == 0 {
        return (0, DEFAULT_INITIAL_CAPACITY as i32);
    }
    let mut capacity = DEFAULT_INITIAL_CAPACITY;
    let mut threshold = (DEFAULT_INITIAL_CAPACITY as f32 * DEFAULT_LOAD_FACTOR) as u32;
    while len > threshold as usize && capacity < MAXIMUM_CAPACITY {
        capacity <<= 1;
        threshold <<= 1;
    }
    let threshold = if len > threshold as usize {
        i32::MAX
    } else {
        threshold as i32
    };
    (threshold, capacity as i32)
}

fn push_utf(out: &mut Vec<u8>, s: &[u8]) {
    // Only ASCII class and field names are written, for which Java's
    // modified UTF-8 is plain ASCII.
    out.extend_from_slice(&(s.len() as u16).to_be_bytes());
    out.extend_from_slice(s);
}

fn java_len(len: usize, what: &str) -> i32 {
    i32::try_from(len)
        .unwrap_or_else(|_| panic!("{what} {len} exceeds Java's maximum of {}", i32::MAX))
}

/// Serializes `entries` exactly as `ObjectOutputStream.writeObject` writes a
/// `java.util.HashMap<byte[], byte[]>` holding them, i.e. the contents of a
/// Kafka Connect standalone offsets file (`FileOffsetBackingStore`).
///
/// Entries are written in the given order. Java writes them in its hash-table
/// iteration order, which for `byte[]` keys depends on identity hash codes
/// and so differs from run to run; readers (Java's `HashMap.readObject`
/// included) do not depend on the order. Everything else matches what Java
/// writes for a `new HashMap<>()` filled by `put`: load factor 0.75, the
/// threshold and bucket count of a table sized for `entries.len()`, the
/// class descriptors of `java.util.HashMap` and `byte[]` with their
/// serialVersionUIDs, a back-reference (`TC_REFERENCE`) to the `byte[]`
/// class descriptor for every array after the first, and `TC_NULL` for
/// `None` values. Each array is written as its own object, as Java does for
/// distinct array instances.
///
/// Keys are written as given; callers should not pass duplicate keys (Java's
/// `FileOffsetBackingStore` never writes them, because it builds the map from
/// content-keyed buffers).
///
/// # Panics
///
/// If `entries.len()` or the length of any key or value exceeds `i32::MAX`,
/// which Java cannot represent either.
pub fn encode(entries: &[OffsetFileEntry]) -> Vec<u8> {
    let size = java_len(entries.len(), "entry count");
    let (threshold, buckets) = java_hashmap_geometry(entries.len());

    let payload: usize = entries
        .iter()
        .map(|(k, v)| k.len() + v.as_ref().map_or(0, |v| v.len()) + 20)
        .sum();
    let mut out = Vec::with_capacity(128 + payload);

    out.extend_from_slice(&STREAM_MAGIC.to_be_bytes());
    out.extend_from_slice(&STREAM_VERSION.to_be_bytes());

    // The HashMap object and its class descriptor (handle 0x7E0000); the map
    // itself gets handle 0x7E0001.
    out.push(TC_OBJECT);
    out.push(TC_CLASSDESC);
    push_utf(&mut out, HASHMAP_CLASS);
    out.extend_from_slice(&HASHMAP_SUID.to_be_bytes());
    out.push(SC_WRITE_METHOD | SC_SERIALIZABLE);
    out.extend_from_slice(&2u16.to_be_bytes());
    out.push(b'F');
    push_utf(&mut out, b"loadFactor");
    out.push(b'I');
    push_utf(&mut out, b"threshold");
    out.push(TC_ENDBLOCKDATA); // no class annotation
    out.push(TC_NULL); // AbstractMap is not serializable: no superclass descriptor

    // Serializable fields, in descriptor order.
    out.extend_from_slice(&DEFAULT_LOAD_FACTOR.to_bits().to_be_bytes());
    out.extend_from_slice(&threshold.to_be_bytes());

    // Custom data of HashMap.writeObject: bucket count and size as block
    // data, then the key/value objects.
    out.push(TC_BLOCKDATA);
    out.push(8);
    out.extend_from_slice(&buckets.to_be_bytes());
    out.extend_from_slice(&size.to_be_bytes());

    // Handle of the byte[] class descriptor once written: it follows the
    // HashMap class descriptor (0x7E0000) and the HashMap (0x7E0001).
    let byte_array_desc_handle = BASE_WIRE_HANDLE + 2;
    let mut desc_written = false;
    let mut write_array = |out: &mut Vec<u8>, bytes: &[u8]| {
        let len = java_len(bytes.len(), "byte array length");
        out.push(TC_ARRAY);
        if desc_written {
            out.push(TC_REFERENCE);
            out.extend_from_slice(&byte_array_desc_handle.to_be_bytes());
        } else {
            out.push(TC_CLASSDESC);
            push_utf(out, BYTE_ARRAY_CLASS);
            out.extend_from_slice(&BYTE_ARRAY_SUID.to_be_bytes());
            out.push(SC_SERIALIZABLE);
            out.extend_from_slice(&0u16.to_be_bytes());
            out.push(TC_ENDBLOCKDATA);
            out.push(TC_NULL);
            desc_written = true;
        }
        out.extend_from_slice(&len.to_be_bytes());
        out.extend_from_slice(bytes);
    };
    for (key, value) in entries {
        write_array(&mut out, key);
        match value {
            Some(value) => write_array(&mut out, value),
            None => out.push(TC_NULL),
        }
    }
    out.push(TC_ENDBLOCKDATA);
    out
}

// --- Decoding -----------------------------------------------------------------

/// Parses an offsets file written by Java's `FileOffsetBackingStore` (or by
/// [`encode`]): a Java-serialized `java.util.HashMap<byte[], byte[]>`.
///
/// Returns the entries in stream order. Accepted: any such map, including an
/// empty one, `null` values, back-references (`TC_REFERENCE`) to arrays or
/// class descriptors written earlier in the stream, the bucket count and
/// size split over several block-data records (`TC_BLOCKDATA` or
/// `TC_BLOCKDATALONG`), extra block data after the entries, and `TC_RESET`
/// before the map. As in Java, bytes after the map are ignored, the stored
/// threshold and bucket count are not checked, and the `byte[]` class
/// descriptor's serialVersionUID is not checked (Java skips that check for
/// array classes). Since Java's map compares `byte[]` keys by identity, two
/// entries may have equal keys; both are returned, in order, and a caller
/// building a map keyed by content should let the later one win.
///
/// # Errors
///
/// * [`OffsetFileError::EmptyFile`] for zero-length input (Java fails with
///   `EOFException`; callers may treat it as an empty map).
/// * [`OffsetFileError::BadMagic`] / [`OffsetFileError::UnsupportedVersion`]
///   if the input is not a version-5 Java serialization stream.
/// * [`OffsetFileError::Truncated`] if the input ends early.
/// * [`OffsetFileError::UnexpectedTypeCode`] / [`OffsetFileError::UnexpectedClass`]
///   for any other object graph: a top-level object other than a
///   `java.util.HashMap` (including `null` and subclasses such as
///   `LinkedHashMap`), or keys/values that are not `byte[]`.
/// * [`OffsetFileError::IncompatibleClass`] if the `java.util.HashMap`
///   serialVersionUID is not Java's.
/// * [`OffsetFileError::InvalidHandle`] for a back-reference to an unknown
///   handle or to an object of the wrong kind.
/// * [`OffsetFileError::NullKey`] for a `null` key.
/// * [`OffsetFileError::Malformed`] for other inconsistencies (negative
///   lengths or counts, invalid load factor, unexpected class flags or
///   fields, stray block data).
///
/// Never panics. Lengths and counts read from the input are checked against
/// the bytes actually present before anything is allocated for them; an
/// array that Java wrote once and referenced several times is copied into
/// each entry that uses it.
pub fn decode(bytes: &[u8]) -> Result<Vec<OffsetFileEntry>, OffsetFileError> {
    if bytes.is_empty() {
        return Err(OffsetFileError::EmptyFile);
    }
    let mut reader = Reader {
        buf: bytes,
        pos: 0,
        handles: Vec::new(),
    };
    reader.read_stream_header()?;
    reader.read_hashmap()
}

/// A class descriptor as read from the stream.
#[derive(Debug, Clone)]
struct ClassDesc {
    offset: usize,
    name: Vec<u8>,
    suid: i64,
    flags: u8,
    /// `(type code, field name)`
    fields: Vec<(u8, Vec<u8>)>,
    has_super: bool,
}

impl ClassDesc {
    fn display_name(&self) -> String {
        String::from_utf8_lossy(&self.name).into_owned()
    }
}

/// Objects that back-references may name.
#[derive(Debug, Clone)]
enum Handle {
    /// A class descriptor still being read.
    PendingClassDesc,
    ClassDesc(Rc<ClassDesc>),
    /// A string (only class names of object-typed fields).
    String,
    /// The HashMap being read.
    HashMap,
    /// A byte array: range into the input.
    ByteArray(usize, usize),
}

struct Reader<'a> {
    buf: &'a [u8],
    pos: usize,
    handles: Vec<Handle>,
}

impl<'a> Reader<'a> {
    fn remaining(&self) -> usize {
        self.buf.len() - self.pos
    }

    fn take(&mut self, n: usize, what: &'static str) -> Result<&'a [u8], OffsetFileError> {
        if self.remaining() < n {
            return Err(OffsetFileError::Truncated {
                offset: self.pos,
                needed: n,
                available: self.remaining(),
                what,
            });
        }
        let slice = &self.buf[self.pos..self.pos + n];
        self.pos += n;
        Ok(slice)
    }

    fn u8(&mut self, what: &'static str) -> Result<u8, OffsetFileError> {
        Ok(self.take(1, what)?[0])
    }

    fn peek(&self, what: &'static str) -> Result<u8, OffsetFileError> {
        self.buf
            .get(self.pos)
            .copied()
            .ok_or(OffsetFileError::Truncated {
                offset: self.pos,
                needed: 1,
                available: 0,
                what,
            })
    }

    fn u16(&mut self, what: &'static str) -> Result<u16, OffsetFileError> {
        let b = self.take(2, what)?;
        Ok(u16::from_be_bytes([b[0], b[1]]))
    }

    fn i32(&mut self, what: &'static str) -> Result<i32, OffsetFileError> {
        let b = self.take(4, what)?;
        Ok(i32::from_be_bytes([b[0], b[1], b[2], b[3]]))
    }

    fn i64(&mut self, what: &'static str) -> Result<i64, OffsetFileError> {
        let b = self.take(8, what)?;
        let mut a = [0u8; 8];
        a.copy_from_slice(b);
        Ok(i64::from_be_bytes(a))
    }

    /// A `writeUTF` string: u16 length and modified UTF-8 bytes (kept raw).
    fn utf(&mut self, what: &'static str) -> Result<Vec<u8>, OffsetFileError> {
        let len = self.u16(what)? as usize;
        Ok(self.take(len, what)?.to_vec())
    }

    fn malformed(&self, offset: usize, reason: impl Into<String>) -> OffsetFileError {
        OffsetFileError::Malformed {
            offset,
            reason: reason.into(),
        }
    }

    fn assign(&mut self, handle: Handle) -> usize {
        self.handles.push(handle);
        self.handles.len() - 1
    }

    /// Reads a `TC_REFERENCE` body (the type code is already consumed at
    /// `offset`) and returns the referenced handle.
    fn reference(&mut self, offset: usize) -> Result<(u32, Handle), OffsetFileError> {
        let handle = self.i32("back-reference handle")? as u32;
        let index = handle.wrapping_sub(BASE_WIRE_HANDLE) as usize;
        match self.handles.get(index) {
            // Cheap clone: descriptors are shared, arrays are ranges.
            Some(h) if handle >= BASE_WIRE_HANDLE => Ok((handle, h.clone())),
            _ => Err(OffsetFileError::InvalidHandle {
                offset,
                handle,
                reason: "no object with this handle has been read yet",
            }),
        }
    }

    fn read_stream_header(&mut self) -> Result<(), OffsetFileError> {
        if self.buf.len() < 2 {
            // A single byte cannot even hold the magic; report it as a
            // truncation unless it already differs from the magic.
            if self.buf[0] != (STREAM_MAGIC >> 8) as u8 {
                return Err(OffsetFileError::BadMagic {
                    found: u16::from(self.buf[0]) << 8,
                });
            }
        }
        let magic = self.u16("stream magic")?;
        if magic != STREAM_MAGIC {
            return Err(OffsetFileError::BadMagic { found: magic });
        }
        let version = self.u16("stream version")?;
        if version != STREAM_VERSION {
            return Err(OffsetFileError::UnsupportedVersion { found: version });
        }
        Ok(())
    }

    /// Skips class annotation / custom data up to and including
    /// `TC_ENDBLOCKDATA`. Only block data is allowed in it.
    fn skip_to_end_block(&mut self, context: &'static str) -> Result<(), OffsetFileError> {
        loop {
            let offset = self.pos;
            match self.u8(context)? {
                TC_ENDBLOCKDATA => return Ok(()),
                TC_BLOCKDATA => {
                    let len = self.u8("block data length")? as usize;
                    self.take(len, "block data")?;
                }
                TC_BLOCKDATALONG => {
                    let len = self.block_long_len(offset)?;
                    self.take(len, "block data")?;
                }
                found => {
                    return Err(OffsetFileError::UnexpectedTypeCode {
                        offset,
                        found,
                        expected: "block data or TC_ENDBLOCKDATA (objects are not allowed here)",
                    })
                }
            }
        }
    }

    fn block_long_len(&mut self, offset: usize) -> Result<usize, OffsetFileError> {
        let len = self.i32("block data length")?;
        usize::try_from(len)
            .map_err(|_| self.malformed(offset, format!("negative block data length {len}")))
    }

    /// Reads a class descriptor reference: new (`TC_CLASSDESC`),
    /// back-reference, or `TC_NULL` (returns `None`).
    fn read_class_desc(&mut self, depth: usize) -> Result<Option<Rc<ClassDesc>>, OffsetFileError> {
        let offset = self.pos;
        match self.u8("class descriptor")? {
            TC_NULL => Ok(None),
            TC_REFERENCE => match self.reference(offset)? {
                (_, Handle::ClassDesc(desc)) => Ok(Some(desc)),
                (handle, other) => Err(OffsetFileError::InvalidHandle {
                    offset,
                    handle,
                    reason: match other {
                        Handle::PendingClassDesc => "class descriptor refers to itself",
                        _ => "expected a class descriptor",
                    },
                }),
            },
            TC_CLASSDESC => self.read_new_class_desc(offset, depth).map(Some),
            found => Err(OffsetFileError::UnexpectedTypeCode {
                offset,
                found,
                expected: "a class descriptor (TC_CLASSDESC, TC_REFERENCE or TC_NULL)",
            }),
        }
    }

    /// Body of a `TC_CLASSDESC` whose type code at `offset` was consumed.
    fn read_new_class_desc(
        &mut self,
        offset: usize,
        depth: usize,
    ) -> Result<Rc<ClassDesc>, OffsetFileError> {
        if depth >= MAX_CLASS_DESC_DEPTH {
            return Err(self.malformed(offset, "class descriptors nested too deeply"));
        }
        // Java assigns the descriptor's handle before reading its body.
        let index = self.assign(Handle::PendingClassDesc);
        let name = self.utf("class name")?;
        let suid = self.i64("serialVersionUID")?;
        let flags = self.u8("class descriptor flags")?;
        let field_count = self.u16("field count")?;
        let mut fields = Vec::new();
        for _ in 0..field_count {
            let type_offset = self.pos;
            let type_code = self.u8("field type code")?;
            let field_name = self.utf("field name")?;
            match type_code {
                b'B' | b'C' | b'D' | b'F' | b'I' | b'J' | b'S' | b'Z' => {}
                b'[' | b'L' => {
                    // Object-typed field: its type is a string object.
                    let string_offset = self.pos;
                    match self.u8("field type name")? {
                        TC_STRING => {
                            self.utf("field type name")?;
                            self.assign(Handle::String);
                        }
                        TC_LONGSTRING => {
                            let len = self.i64("field type name length")?;
                            let len = usize::try_from(len).map_err(|_| {
                                self.malformed(
                                    string_offset,
                                    format!("invalid string length {len}"),
                                )
                            })?;
                            self.take(len, "field type name")?;
                            self.assign(Handle::String);
                        }
                        TC_REFERENCE => match self.reference(string_offset)? {
                            (_, Handle::String) => {}
                            (handle, _) => {
                                return Err(OffsetFileError::InvalidHandle {
                                    offset: string_offset,
                                    handle,
                                    reason: "expected a string (field type name)",
                                })
                            }
                        },
                        found => {
                            return Err(OffsetFileError::UnexpectedTypeCode {
                                offset: string_offset,
                                found,
                                expected: "a string holding the field's type name",
                            })
                        }
                    }
                }
                other => {
                    return Err(self.malformed(
                        type_offset,
                        format!(
                            "invalid field type code 0x{other:02X} for field {:?}",
                            String::from_utf8_lossy(&field_name)
                        ),
                    ))
                }
            }
            fields.push((type_code, field_name));
        }
        self.skip_to_end_block("class annotation")?;
        let super_desc = self.read_class_desc(depth + 1)?;
        let desc = Rc::new(ClassDesc {
            offset,
            name,
            suid,
            flags,
            fields,
            has_super: super_desc.is_some(),
        });
        self.handles[index] = Handle::ClassDesc(Rc::clone(&desc));
        Ok(desc)
    }

    /// The top-level object, which must be a `java.util.HashMap<byte[], byte[]>`.
    fn read_hashmap(&mut self) -> Result<Vec<OffsetFileEntry>, OffsetFileError> {
        // ObjectOutputStream.reset() may precede the object.
        while self.peek("top-level object")? == TC_RESET {
            self.pos += 1;
            self.handles.clear();
        }
        let offset = self.pos;
        match self.u8("top-level object")? {
            TC_OBJECT => {}
            found => {
                return Err(OffsetFileError::UnexpectedTypeCode {
                    offset,
                    found,
                    expected: "TC_OBJECT holding a java.util.HashMap",
                })
            }
        }
        let desc_offset = self.pos;
        let desc = self
            .read_class_desc(0)?
            .ok_or_else(|| self.malformed(desc_offset, "object has a null class descriptor"))?;
        self.check_hashmap_desc(&desc)?;
        self.assign(Handle::HashMap);

        // Serializable fields, in descriptor order. Java matches them by name
        // and type; a missing loadFactor reads as 0 and is rejected below.
        let mut load_factor = 0.0f32;
        for (type_code, name) in &desc.fields {
            let size = match type_code {
                b'B' | b'Z' => 1,
                b'C' | b'S' => 2,
                b'I' | b'F' => 4,
                b'J' | b'D' => 8,
                _ => unreachable!("object fields rejected by check_hashmap_desc"),
            };
            let value = self.take(size, "HashMap field value")?;
            if *type_code == b'F' && name == b"loadFactor" {
                load_factor =
                    f32::from_bits(u32::from_be_bytes([value[0], value[1], value[2], value[3]]));
            }
        }
        if load_factor.is_nan() || load_factor <= 0.0 {
            return Err(self.malformed(
                self.pos,
                format!("illegal HashMap load factor {load_factor}"),
            ));
        }

        // HashMap.readObject: bucket count (ignored) and size from block data.
        let mut block = BlockData { remaining: 0 };
        let _buckets = block.read_i32(self, "HashMap bucket count")?;
        let size_offset = self.pos;
        let size = block.read_i32(self, "HashMap size")?;
        let size = usize::try_from(size)
            .map_err(|_| self.malformed(size_offset, format!("illegal HashMap size {size}")))?;

        // Each entry needs at least 2 bytes; do not trust `size` further.
        let mut entries = Vec::with_capacity(size.min(self.remaining() / 2));
        for _ in 0..size {
            block.expect_exhausted(self)?;
            let key_offset = self.pos;
            let key = self
                .read_byte_array_or_null("a byte[] map key")?
                .ok_or(OffsetFileError::NullKey { offset: key_offset })?;
            let value = self.read_byte_array_or_null("a byte[] map value or null")?;
            entries.push((key, value));
        }

        // Any further custom data is skipped up to TC_ENDBLOCKDATA, as Java does.
        let rest = block.remaining;
        self.take(rest, "HashMap custom data")?;
        self.skip_to_end_block("end of HashMap data (TC_ENDBLOCKDATA)")?;
        Ok(entries)
    }

    fn check_hashmap_desc(&self, desc: &ClassDesc) -> Result<(), OffsetFileError> {
        if desc.name != HASHMAP_CLASS {
            return Err(OffsetFileError::UnexpectedClass {
                offset: desc.offset,
                found: desc.display_name(),
                expected: "java.util.HashMap",
            });
        }
        if desc.suid != HASHMAP_SUID {
            return Err(OffsetFileError::IncompatibleClass {
                offset: desc.offset,
                class: desc.display_name(),
                expected: HASHMAP_SUID,
                found: desc.suid,
            });
        }
        if desc.flags & SC_EXTERNALIZABLE != 0
            || desc.flags & SC_SERIALIZABLE == 0
            || desc.flags & SC_WRITE_METHOD == 0
        {
            return Err(self.malformed(
                desc.offset,
                format!(
                    "java.util.HashMap class descriptor has flags 0x{:02X}; expected SC_SERIALIZABLE | SC_WRITE_METHOD (0x03)",
                    desc.flags
                ),
            ));
        }
        if let Some((_, name)) = desc.fields.iter().find(|(t, _)| *t == b'[' || *t == b'L') {
            return Err(self.malformed(
                desc.offset,
                format!(
                    "java.util.HashMap class descriptor has unexpected object field {:?}",
                    String::from_utf8_lossy(name)
                ),
            ));
        }
        if desc.has_super {
            return Err(self.malformed(
                desc.offset,
                "java.util.HashMap class descriptor has a serializable superclass; expected none",
            ));
        }
        Ok(())
    }

    /// A `byte[]` (new or back-referenced) or `null`.
    fn read_byte_array_or_null(
        &mut self,
        expected: &'static str,
    ) -> Result<Option<Vec<u8>>, OffsetFileError> {
        let offset = self.pos;
        match self.u8(expected)? {
            TC_NULL => Ok(None),
            TC_REFERENCE => match self.reference(offset)? {
                (_, Handle::ByteArray(start, end)) => Ok(Some(self.buf[start..end].to_vec())),
                (handle, other) => Err(OffsetFileError::InvalidHandle {
                    offset,
                    handle,
                    reason: match other {
                        Handle::PendingClassDesc | Handle::ClassDesc(_) => {
                            "refers to a class descriptor, expected a byte array"
                        }
                        Handle::String => "refers to a string, expected a byte array",
                        Handle::HashMap | Handle::ByteArray(..) => {
                            "refers to the java.util.HashMap, expected a byte array"
                        }
                    },
                }),
            },
            TC_ARRAY => {
                let desc_offset = self.pos;
                let desc = self.read_class_desc(0)?.ok_or_else(|| {
                    self.malformed(desc_offset, "array has a null class descriptor")
                })?;
                if desc.name != BYTE_ARRAY_CLASS {
                    return Err(OffsetFileError::UnexpectedClass {
                        offset: desc.offset,
                        found: desc.display_name(),
                        expected: "byte[] (\"[B\")",
                    });
                }
                if desc.flags & SC_SERIALIZABLE == 0 || !desc.fields.is_empty() || desc.has_super {
                    return Err(self.malformed(
                        desc.offset,
                        "byte[] class descriptor must be serializable, with no fields and no superclass",
                    ));
                }
                let len_offset = self.pos;
                let len = self.i32("byte array length")?;
                let len = usize::try_from(len).map_err(|_| {
                    self.malformed(len_offset, format!("negative byte array length {len}"))
                })?;
                let start = self.pos;
                self.take(len, "byte array contents")?;
                self.assign(Handle::ByteArray(start, start + len));
                Ok(Some(self.buf[start..start + len].to_vec()))
            }
            found => Err(OffsetFileError::UnexpectedTypeCode {
                offset,
                found,
                expected,
            }),
        }
    }
}

/// Primitive data read in block-data mode, which may span several
/// `TC_BLOCKDATA` / `TC_BLOCKDATALONG` records.
struct BlockData {
    /// Unread bytes left in the current record.
    remaining: usize,
}

impl BlockData {
    fn read_i32(
        &mut self,
        reader: &mut Reader<'_>,
        what: &'static str,
    ) -> Result<i32, OffsetFileError> {
        let mut bytes = [0u8; 4];
        let mut filled = 0;
        while filled < 4 {
            if self.remaining == 0 {
                let offset = reader.pos;
                self.remaining = match reader.u8(what)? {
                    TC_BLOCKDATA => reader.u8("block data length")? as usize,
                    TC_BLOCKDATALONG => reader.block_long_len(offset)?,
                    found => {
                        return Err(OffsetFileError::UnexpectedTypeCode {
                            offset,
                            found,
                            expected: "block data holding the HashMap bucket count and size",
                        })
                    }
                };
                continue;
            }
            let n = self.remaining.min(4 - filled);
            bytes[filled..filled + n].copy_from_slice(reader.take(n, what)?);
            filled += n;
            self.remaining -= n;
        }
        Ok(i32::from_be_bytes(bytes))
    }

    /// Before an object is read, no primitive data may be pending (Java:
    /// `OptionalDataException`).
    fn expect_exhausted(&self, reader: &Reader<'_>) -> Result<(), OffsetFileError> {
        if self.remaining > 0 {
            return Err(reader.malformed(
                reader.pos,
                format!(
                    "{} bytes of unread block data where a map key was expected",
                    self.remaining
                ),
            ));
        }
        Ok(())
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn unhex(s: &str) -> Vec<u8> {
        (0..s.len())
            .step_by(2)
            .map(|i| u8::from_str_radix(&s[i..i + 2], 16).unwrap())
            .collect()
    }

    fn entry(k: &str, v: Option<&str>) -> OffsetFileEntry {
        (k.as_bytes().to_vec(), v.map(|v| v.as_bytes().to_vec()))
    }

    // Golden vectors: bytes written by Java 17's ObjectOutputStream for a
    // HashMap<byte[], byte[]>, produced by conformance/java/OffsetFileVectors.java.

    /// `new HashMap<>()` with no entries.
    const JAVA_EMPTY: &str = "aced0005737200116a6176612e7574696c2e486173684d61700507dac1c31660d103000246000a6c6f6164466163746f724900097468726573686f6c6478703f400000000000007708000000100000000078";

    /// One entry.
    const JAVA_ONE: &str = "aced0005737200116a6176612e7574696c2e486173684d61700507dac1c31660d103000246000a6c6f6164466163746f724900097468726573686f6c6478703f4000000000000c77080000001000000001757200025b42acf317f8060854e002000078700000002a5b2266696c652d736f75726365222c7b2266696c656e616d65223a222f746d702f696e2e747874227d5d7571007e00020000000f7b22706f736974696f6e223a34327d78";

    /// Three entries, one with a null value (entries in the order this Java
    /// run iterated them).
    const JAVA_SEVERAL_WITH_NULL: &str = "aced0005737200116a6176612e7574696c2e486173684d61700507dac1c31660d103000246000a6c6f6164466163746f724900097468726573686f6c6478703f4000000000000c77080000001000000003757200025b42acf317f8060854e002000078700000001e5b226a646263222c7b227461626c65223a22637573746f6d657273227d5d707571007e00020000001b5b226a646263222c7b227461626c65223a226f7264657273227d5d7571007e0002000000157b22696e6372656d656e74696e67223a313030317d7571007e0002000000345b226d6972726f72222c7b22636c7573746572223a2261222c22706172746974696f6e223a332c22746f706963223a2274227d5d7571007e00020000000c7b226f6666736574223a377d78";

    /// Same byte[] instances used several times: Java writes TC_REFERENCE
    /// back-references to arrays (one value shared by two keys; one array
    /// used as both key and value).
    const JAVA_SHARED_ARRAYS: &str = "aced0005737200116a6176612e7574696c2e486173684d61700507dac1c31660d103000246000a6c6f6164466163746f724900097468726573686f6c6478703f4000000000000c77080000001000000003757200025b42acf317f8060854e00200007870000000085b2262222c7b7d5d7571007e00020000000f7b22736861726564223a747275657d7571007e0002000000085b2261222c7b7d5d71007e00047571007e00020000000b5b2273656c66222c7b7d5d71007e000678";

    fn several_with_null_entries() -> Vec<OffsetFileEntry> {
        vec![
            entry(r#"["jdbc",{"table":"customers"}]"#, None),
            entry(
                r#"["jdbc",{"table":"orders"}]"#,
                Some(r#"{"incrementing":1001}"#),
            ),
            entry(
                r#"["mirror",{"cluster":"a","partition":3,"topic":"t"}]"#,
                Some(r#"{"offset":7}"#),
            ),
        ]
    }

    #[test]
    fn decodes_java_empty_map() {
        assert_eq!(decode(&unhex(JAVA_EMPTY)).unwrap(), vec![]);
    }

    #[test]
    fn decodes_java_one_entry() {
        assert_eq!(
            decode(&unhex(JAVA_ONE)).unwrap(),
            vec![entry(
                r#"["file-source",{"filename":"/tmp/in.txt"}]"#,
                Some(r#"{"position":42}"#)
            )]
        );
    }

    #[test]
    fn decodes_java_several_with_null() {
        assert_eq!(
            decode(&unhex(JAVA_SEVERAL_WITH_NULL)).unwrap(),
            several_with_null_entries()
        );
    }

    #[test]
    fn decodes_java_shared_array_references() {
        let shared = Some(r#"{"shared":true}"#);
        assert_eq!(
            decode(&unhex(JAVA_SHARED_ARRAYS)).unwrap(),
            vec![
                entry(r#"["b",{}]"#, shared),
                entry(r#"["a",{}]"#, shared),
                entry(r#"["self",{}]"#, Some(r#"["self",{}]"#)),
            ]
        );
    }

    #[test]
    fn encodes_byte_identical_to_java_for_same_order() {
        assert_eq!(encode(&[]), unhex(JAVA_EMPTY));
        assert_eq!(encode(&decode(&unhex(JAVA_ONE)).unwrap()), unhex(JAVA_ONE));
        assert_eq!(
            encode(&several_with_null_entries()),
            unhex(JAVA_SEVERAL_WITH_NULL)
        );
    }

    #[test]
    fn hashmap_geometry_matches_java() {
        assert_eq!(java_hashmap_geometry(0), (0, 16));
        assert_eq!(java_hashmap_geometry(1), (12, 16));
        assert_eq!(java_hashmap_geometry(12), (12, 16));
        assert_eq!(java_hashmap_geometry(13), (24, 32));
        assert_eq!(java_hashmap_geometry(20), (24, 32)); // Java-written "twenty" case
        assert_eq!(java_hashmap_geometry(24), (24, 32));
        assert_eq!(java_hashmap_geometry(25), (48, 64));
        assert_eq!(java_hashmap_geometry(1000), (1536, 2048));
        assert_eq!(java_hashmap_geometry(805_306_368), (805_306_368, 1 << 30));
        assert_eq!(java_hashmap_geometry(805_306_369), (i32::MAX, 1 << 30));
    }

    #[test]
    fn encode_writes_geometry_and_size() {
        let entries: Vec<OffsetFileEntry> = (0..20)
            .map(|i| (format!("k{i}").into_bytes(), Some(vec![i as u8])))
            .collect();
        let bytes = encode(&entries);
        // threshold follows loadFactor (0x3F400000) right after the descriptor.
        let lf = bytes
            .windows(4)
            .position(|w| w == [0x3F, 0x40, 0, 0])
            .unwrap();
        assert_eq!(&bytes[lf + 4..lf + 8], &24i32.to_be_bytes());
        assert_eq!(
            &bytes[lf + 8..lf + 18],
            &[TC_BLOCKDATA, 8, 0, 0, 0, 32, 0, 0, 0, 20]
        );
        assert_eq!(decode(&bytes).unwrap(), entries);
    }

    /// xorshift64* — deterministic, dependency-free.
    struct Rng(u64);
    impl Rng {
        fn next(&mut self) -> u64 {
            self.0 ^= self.0 >> 12;
            self.0 ^= self.0 << 25;
            self.0 ^= self.0 >> 27;
            self.0.wrapping_mul(0x2545_F491_4F6C_DD1D)
        }
        fn below(&mut self, n: u64) -> u64 {
            self.next() % n
        }
        fn bytes(&mut self) -> Vec<u8> {
            let len = match self.below(10) {
                0 => 0,
                1 => 256 + self.below(2000) as usize, // beyond one block / u8 length
                _ => self.below(64) as usize,
            };
            (0..len).map(|_| self.next() as u8).collect()
        }
    }

    fn random_entries(rng: &mut Rng) -> Vec<OffsetFileEntry> {
        let n = match rng.below(8) {
            0 => 0,
            1 => 10 + rng.below(60) as usize, // crosses the 12/24/48 thresholds
            _ => rng.below(14) as usize,
        };
        (0..n)
            .map(|_| {
                let key = rng.bytes();
                let value = if rng.below(4) == 0 {
                    None
                } else {
                    Some(rng.bytes())
                };
                (key, value)
            })
            .collect()
    }

    #[test]
    fn round_trips_random_entries() {
        let mut rng = Rng(0x9E37_79B9_7F4A_7C15);
        for _ in 0..500 {
            let entries = random_entries(&mut rng);
            let bytes = encode(&entries);
            assert_eq!(decode(&bytes).unwrap(), entries);
            // Re-encoding the decoded entries is stable.
            assert_eq!(encode(&decode(&bytes).unwrap()), bytes);
        }
    }

    #[test]
    fn round_trips_large_array() {
        let big = (0..70_000u32).map(|i| (i * 7) as u8).collect::<Vec<_>>();
        let entries = vec![
            (big.clone(), Some(big.clone())),
            (vec![], None),
            (vec![], Some(vec![])),
        ];
        assert_eq!(decode(&encode(&entries)).unwrap(), entries);
    }

    #[test]
    fn empty_input_is_distinct_error() {
        let err = decode(&[]).unwrap_err();
        assert_eq!(err, OffsetFileError::EmptyFile);
        assert!(err.is_empty_file());
        assert_eq!(err.offset(), None);
        assert!(!decode(&[0xAC]).unwrap_err().is_empty_file());
    }

    #[test]
    fn every_truncation_is_an_error() {
        let mut rng = Rng(42);
        let mut streams = vec![
            unhex(JAVA_EMPTY),
            unhex(JAVA_SEVERAL_WITH_NULL),
            unhex(JAVA_SHARED_ARRAYS),
        ];
        streams.extend((0..20).map(|_| encode(&random_entries(&mut rng))));
        for stream in streams {
            for len in 1..stream.len() {
                match decode(&stream[..len]) {
                    Err(OffsetFileError::Truncated {
                        offset,
                        needed,
                        available,
                        ..
                    }) => {
                        assert!(
                            offset <= len && available < needed,
                            "{offset} {needed} {available} {len}"
                        );
                    }
                    other => panic!("prefix of length {len}: {other:?}"),
                }
            }
        }
    }

    #[test]
    fn rejects_wrong_magic_and_version() {
        let mut bytes = unhex(JAVA_ONE);
        bytes[0] = 0x7B; // e.g. a JSON file
        assert_eq!(
            decode(&bytes).unwrap_err(),
            OffsetFileError::BadMagic { found: 0x7BED }
        );
        assert_eq!(
            decode(b"{").unwrap_err(),
            OffsetFileError::BadMagic { found: 0x7B00 }
        );
        let mut bytes = unhex(JAVA_ONE);
        bytes[3] = 4;
        assert_eq!(
            decode(&bytes).unwrap_err(),
            OffsetFileError::UnsupportedVersion { found: 4 }
        );
        let msg = decode(b"hello world").unwrap_err().to_string();
        assert!(msg.contains("0xACED"), "{msg}");
    }

    /// Replaces the first occurrence of `from` with `to`.
    fn patch(bytes: &[u8], from: &[u8], to: &[u8]) -> Vec<u8> {
        let at = bytes
            .windows(from.len())
            .position(|w| w == from)
            .expect("pattern present");
        let mut out = bytes[..at].to_vec();
        out.extend_from_slice(to);
        out.extend_from_slice(&bytes[at + from.len()..]);
        out
    }

    #[test]
    fn rejects_other_top_level_objects() {
        // null
        assert!(matches!(
            decode(&[0xAC, 0xED, 0, 5, TC_NULL]).unwrap_err(),
            OffsetFileError::UnexpectedTypeCode {
                offset: 4,
                found: TC_NULL,
                ..
            }
        ));
        // a String
        assert!(matches!(
            decode(&[0xAC, 0xED, 0, 5, TC_STRING, 0, 1, b'x']).unwrap_err(),
            OffsetFileError::UnexpectedTypeCode {
                offset: 4,
                found: TC_STRING,
                ..
            }
        ));
        // a bare byte[]
        let array = unhex("aced0005757200025b42acf317f8060854e0020000787000000000");
        assert!(matches!(
            decode(&array).unwrap_err(),
            OffsetFileError::UnexpectedTypeCode { offset: 4, .. }
        ));
        // a different class name of the same length
        let other = patch(&unhex(JAVA_ONE), b"java.util.HashMap", b"java.util.TreeMap");
        let err = decode(&other).unwrap_err();
        assert_eq!(
            err,
            OffsetFileError::UnexpectedClass {
                offset: 5,
                found: "java.util.TreeMap".into(),
                expected: "java.util.HashMap"
            }
        );
        assert!(err.to_string().contains("byte 5"), "{err}");
    }

    #[test]
    fn rejects_wrong_serial_version_uid() {
        let bytes = patch(
            &unhex(JAVA_ONE),
            &HASHMAP_SUID.to_be_bytes(),
            &1i64.to_be_bytes(),
        );
        assert!(matches!(
            decode(&bytes).unwrap_err(),
            OffsetFileError::IncompatibleClass {
                found: 1,
                expected: HASHMAP_SUID,
                ..
            }
        ));
    }

    #[test]
    fn rejects_non_byte_array_elements() {
        // int[] instead of byte[] (same name length).
        let bytes = patch(&unhex(JAVA_ONE), b"\x00\x02[B", b"\x00\x02[I");
        assert!(matches!(
            decode(&bytes).unwrap_err(),
            OffsetFileError::UnexpectedClass { .. }
        ));
        // A string as the key.
        let mut bytes = encode(&[]);
        let end = bytes.len() - 1;
        bytes[end - 4..end].copy_from_slice(&1i32.to_be_bytes()); // size = 1
        bytes.truncate(end);
        bytes.extend_from_slice(&[TC_STRING, 0, 1, b'k', TC_NULL, TC_ENDBLOCKDATA]);
        assert!(matches!(
            decode(&bytes).unwrap_err(),
            OffsetFileError::UnexpectedTypeCode {
                found: TC_STRING,
                ..
            }
        ));
    }

    #[test]
    fn rejects_null_key() {
        let mut bytes = encode(&[]);
        let end = bytes.len() - 1;
        bytes[end - 4..end].copy_from_slice(&1i32.to_be_bytes());
        bytes.truncate(end);
        let key_at = bytes.len();
        bytes.extend_from_slice(&[TC_NULL, TC_NULL, TC_ENDBLOCKDATA]);
        assert_eq!(
            decode(&bytes).unwrap_err(),
            OffsetFileError::NullKey { offset: key_at }
        );
    }

    #[test]
    fn rejects_bad_handles() {
        let one = unhex(JAVA_ONE);
        // The value's descriptor reference 0x7E0002 -> 0x7E0009 (unassigned).
        let bad = patch(
            &one,
            &[TC_REFERENCE, 0, 0x7E, 0, 2],
            &[TC_REFERENCE, 0, 0x7E, 0, 9],
        );
        assert!(matches!(
            decode(&bad).unwrap_err(),
            OffsetFileError::InvalidHandle {
                handle: 0x7E0009,
                ..
            }
        ));
        // Reference to the HashMap's handle where a class descriptor belongs.
        let bad = patch(
            &one,
            &[TC_REFERENCE, 0, 0x7E, 0, 2],
            &[TC_REFERENCE, 0, 0x7E, 0, 1],
        );
        assert!(matches!(
            decode(&bad).unwrap_err(),
            OffsetFileError::InvalidHandle {
                handle: 0x7E0001,
                ..
            }
        ));
        // Handle below the base.
        let bad = patch(
            &one,
            &[TC_REFERENCE, 0, 0x7E, 0, 2],
            &[TC_REFERENCE, 0, 0, 0, 0],
        );
        assert!(matches!(
            decode(&bad).unwrap_err(),
            OffsetFileError::InvalidHandle { handle: 0, .. }
        ));
        // A value that references the map itself.
        let shared = unhex(JAVA_SHARED_ARRAYS);
        let bad = patch(
            &shared,
            &[TC_REFERENCE, 0, 0x7E, 0, 4],
            &[TC_REFERENCE, 0, 0x7E, 0, 1],
        );
        let err = decode(&bad).unwrap_err();
        assert!(
            matches!(
                err,
                OffsetFileError::InvalidHandle {
                    handle: 0x7E0001,
                    ..
                }
            ),
            "{err}"
        );
    }

    #[test]
    fn rejects_negative_counts_and_lengths() {
        let mut bytes = encode(&[]);
        let end = bytes.len() - 1;
        bytes[end - 4..end].copy_from_slice(&(-1i32).to_be_bytes());
        assert!(decode(&bytes)
            .unwrap_err()
            .to_string()
            .contains("illegal HashMap size -1"));

        let bytes = patch(
            &unhex(JAVA_ONE),
            &[0x78, 0x70, 0, 0, 0, 0x2a],
            &[0x78, 0x70, 0xFF, 0xFF, 0xFF, 0xFF],
        );
        assert!(decode(&bytes)
            .unwrap_err()
            .to_string()
            .contains("negative byte array length"));

        // Huge length with few bytes behind it: truncation, not allocation.
        let bytes = patch(
            &unhex(JAVA_ONE),
            &[0x78, 0x70, 0, 0, 0, 0x2a],
            &[0x78, 0x70, 0x7F, 0xFF, 0xFF, 0xFF],
        );
        assert!(matches!(
            decode(&bytes).unwrap_err(),
            OffsetFileError::Truncated {
                needed: 0x7FFF_FFFF,
                ..
            }
        ));

        // Huge size with no entries behind it.
        let mut bytes = encode(&[]);
        let end = bytes.len() - 1;
        bytes[end - 4..end].copy_from_slice(&i32::MAX.to_be_bytes());
        assert!(matches!(
            decode(&bytes).unwrap_err(),
            OffsetFileError::UnexpectedTypeCode { .. }
        ));
    }

    #[test]
    fn rejects_illegal_load_factor() {
        for lf in [0.0f32, -1.0, f32::NAN] {
            let bytes = patch(&unhex(JAVA_ONE), &[0x78, 0x70, 0x3F, 0x40, 0, 0], &{
                let mut p = vec![0x78, 0x70];
                p.extend_from_slice(&lf.to_bits().to_be_bytes());
                p
            });
            assert!(
                decode(&bytes)
                    .unwrap_err()
                    .to_string()
                    .contains("load factor"),
                "{lf}"
            );
        }
    }

    #[test]
    fn accepts_block_data_variants_reset_and_trailing_bytes() {
        let entries = several_with_null_entries();
        let java = unhex(JAVA_SEVERAL_WITH_NULL);
        let block = [TC_BLOCKDATA, 8, 0, 0, 0, 16, 0, 0, 0, 3];

        // Bucket count and size split over two records, one of them long.
        let split = patch(
            &java,
            &block,
            &[
                TC_BLOCKDATA,
                3,
                0,
                0,
                0,
                TC_BLOCKDATALONG,
                0,
                0,
                0,
                0,
                TC_BLOCKDATA,
                5,
                16,
                0,
                0,
                0,
                3,
            ],
        );
        assert_eq!(decode(&split).unwrap(), entries);

        // Extra block data after the entries is skipped, as Java does.
        let mut extra = java.clone();
        extra.pop();
        extra.extend_from_slice(&[
            TC_BLOCKDATA,
            2,
            1,
            2,
            TC_BLOCKDATALONG,
            0,
            0,
            0,
            1,
            9,
            TC_ENDBLOCKDATA,
        ]);
        assert_eq!(decode(&extra).unwrap(), entries);

        // TC_RESET before the object.
        let mut reset = java[..4].to_vec();
        reset.push(TC_RESET);
        reset.extend_from_slice(&java[4..]);
        assert_eq!(decode(&reset).unwrap(), entries);

        // Trailing bytes after the object are ignored, like Java's
        // FileOffsetBackingStore, which reads a single object.
        let mut trailing = java.clone();
        trailing.extend_from_slice(b"garbage");
        assert_eq!(decode(&trailing).unwrap(), entries);

        // Unread block data where an object is expected (Java: OptionalDataException).
        let long_block = patch(
            &java,
            &block,
            &[TC_BLOCKDATA, 9, 0, 0, 0, 16, 0, 0, 0, 3, 0],
        );
        assert!(decode(&long_block)
            .unwrap_err()
            .to_string()
            .contains("unread block data"));

        // An object inside the class annotation is not allowed.
        let annotated = patch(&java, b"threshold\x78\x70", b"threshold\x70\x78\x70");
        assert!(matches!(
            decode(&annotated).unwrap_err(),
            OffsetFileError::UnexpectedTypeCode { .. }
        ));
    }

    #[test]
    fn mutated_and_random_inputs_never_panic() {
        let mut rng = Rng(7);
        let mut seeds = vec![
            unhex(JAVA_EMPTY),
            unhex(JAVA_ONE),
            unhex(JAVA_SEVERAL_WITH_NULL),
            unhex(JAVA_SHARED_ARRAYS),
        ];
        seeds.extend((0..10).map(|_| encode(&random_entries(&mut rng))));
        for seed in &seeds {
            // Every single-byte change to a few interesting values.
            for i in 0..seed.len().min(400) {
                for b in [
                    0x00,
                    0x70,
                    0x71,
                    0x72,
                    0x75,
                    0x77,
                    0x78,
                    0x7E,
                    0xFF,
                    seed[i] ^ 1,
                ] {
                    let mut m = seed.clone();
                    m[i] = b;
                    decode(&m).ok(); // any outcome but a panic passes
                }
            }
            // Random multi-byte mutations.
            for _ in 0..300 {
                let mut m = seed.clone();
                for _ in 0..1 + rng.below(4) {
                    let i = rng.below(m.len() as u64) as usize;
                    m[i] = rng.next() as u8;
                }
                decode(&m).ok(); // any outcome but a panic passes
            }
        }
        for _ in 0..2000 {
            let len = rng.below(64) as usize;
            let mut m: Vec<u8> = (0..len).map(|_| rng.next() as u8).collect();
            if len >= 4 && rng.below(2) == 0 {
                m[..4].copy_from_slice(&[0xAC, 0xED, 0, 5]);
            }
            decode(&m).ok(); // any outcome but a panic passes
        }
    }

    #[test]
    fn errors_report_positions() {
        let one = unhex(JAVA_ONE);
        // The key array starts at 81 (TC_ARRAY); its 42 bytes start at 104.
        let err = decode(&one[..110]).unwrap_err();
        assert_eq!(err.offset(), Some(104));
        let msg = err.to_string();
        assert!(
            msg.contains("byte 104") && msg.contains("byte array contents"),
            "{msg}"
        );
        let err = decode(&patch(&one, b"\x00\x02[B", b"\x00\x02[I")).unwrap_err();
        assert_eq!(err.offset(), Some(82)); // the array's TC_CLASSDESC
    }
}
