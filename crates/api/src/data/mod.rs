//! Connect's data model (`org.apache.kafka.connect.data`): schemas, values, structs and the
//! logical types Decimal, Date, Time and Timestamp; [`values::parse_string`] (Connect's
//! `Values.parseString`) and [`date_format::JavaDateFormat`] (Java's `SimpleDateFormat`).

pub mod date_format;
pub mod java_fmt;
pub mod java_hash_map;
mod logical;
mod schema;
mod value;
pub mod values;

pub use logical::{logical_physical_type, Date, Decimal, Time, Timestamp};
pub use schema::{Field, Schema, SchemaBuilder, SchemaRef, SchemaType};
pub use value::{SchemaAndValue, Struct, Value};
