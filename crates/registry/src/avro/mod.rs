//! Avro in Confluent's wire format: the schema mapping of Confluent's `AvroData`
//! ([`schema`]), the binary codec ([`data`]), schema compatibility ([`compat`]) and the
//! converter ([`converter::AvroConverter`]).

pub mod compat;
pub mod converter;
pub mod data;
pub mod schema;
