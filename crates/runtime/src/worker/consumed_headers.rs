//! The Kafka headers of a consumed message, without librdkafka's parse of an empty header
//! section on every call.
//!
//! librdkafka parses a consumed record's headers on the first `rd_kafka_message_headers()`
//! call; for a record without headers it allocates and frees a reader buffer on every call to
//! find none (about a tenth of a sink task's time on records without headers). The shim in
//! `csrc/consumed_headers.c`, compiled against the librdkafka that is linked in, answers "no
//! headers" from the unparsed section's first byte; only records that have some are parsed.

use rdkafka::message::{BorrowedHeaders, BorrowedMessage, Message};

#[allow(unsafe_code)]
mod ffi {
    extern "C" {
        /// 0 when the consumed message has no headers; 1 when it may have some
        /// (`rd_kafka_message_headers` then tells).
        pub fn tributary_consumed_message_may_have_headers(
            message: *const rdkafka_sys::RDKafkaMessage,
        ) -> std::os::raw::c_int;
    }
}

/// The message's headers as [`Message::headers`] gives them: `None` when it has none.
#[allow(unsafe_code)]
pub fn headers<'a>(msg: &'a BorrowedMessage<'_>) -> Option<&'a BorrowedHeaders> {
    // SAFETY: `msg.ptr()` is a message librdkafka returned to this consumer, alive while `msg`
    // is borrowed; the shim only reads its fields.
    let may_have = unsafe { ffi::tributary_consumed_message_may_have_headers(msg.ptr()) } != 0;
    if may_have {
        msg.headers()
    } else {
        None
    }
}
