//! The `.proto` files Confluent's Protobuf schemas import besides `google/protobuf/*.proto`
//! (which `protox` provides), written from their public definitions (package, message and
//! field names and numbers), so that schemas compile without a network.

/// `google/type/date.proto`: a calendar date.
pub const GOOGLE_TYPE_DATE: &str = r#"syntax = "proto3";
package google.type;

message Date {
  int32 year = 1;
  int32 month = 2;
  int32 day = 3;
}
"#;

/// `google/type/timeofday.proto`: a time of day.
pub const GOOGLE_TYPE_TIME_OF_DAY: &str = r#"syntax = "proto3";
package google.type;

message TimeOfDay {
  int32 hours = 1;
  int32 minutes = 2;
  int32 seconds = 3;
  int32 nanos = 4;
}
"#;

/// `confluent/type/decimal.proto`: Confluent's decimal (unscaled two's-complement big-endian
/// bytes, precision, scale).
pub const CONFLUENT_TYPE_DECIMAL: &str = r#"syntax = "proto3";
package confluent.type;

message Decimal {
  bytes value = 1;
  uint32 precision = 2;
  int32 scale = 3;
}
"#;

/// `confluent/meta.proto`: the `(confluent.*_meta)` options (doc, params, tags, rules).
pub const CONFLUENT_META: &str = r#"syntax = "proto3";
package confluent;

import "google/protobuf/descriptor.proto";

message Meta {
  string doc = 1;
  map<string, string> params = 2;
  repeated string tags = 3;
  repeated Rule rules = 4;
}
message Rule {
  string name = 1;
  string doc = 2;
  string expr = 3;
  string sql = 4;
}

extend google.protobuf.FileOptions {
  Meta file_meta = 1088;
}
extend google.protobuf.MessageOptions {
  Meta message_meta = 1088;
}
extend google.protobuf.FieldOptions {
  Meta field_meta = 1088;
}
extend google.protobuf.EnumOptions {
  Meta enum_meta = 1088;
}
extend google.protobuf.EnumValueOptions {
  Meta enum_value_meta = 1088;
}
"#;

/// The embedded file of an import name.
pub fn embedded(name: &str) -> Option<&'static str> {
    match name {
        "google/type/date.proto" => Some(GOOGLE_TYPE_DATE),
        "google/type/timeofday.proto" => Some(GOOGLE_TYPE_TIME_OF_DAY),
        "confluent/type/decimal.proto" => Some(CONFLUENT_TYPE_DECIMAL),
        "confluent/meta.proto" => Some(CONFLUENT_META),
        _ => None,
    }
}
