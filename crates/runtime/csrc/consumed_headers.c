/*
 * Whether a message returned by librdkafka's consumer has Kafka headers, without parsing them.
 *
 * librdkafka keeps a consumed record's header section unparsed (a varint count followed by the
 * headers) and parses it on the first rd_kafka_message_headers() call. For a record without
 * headers the section is the one byte of a zero count, and each call allocates and frees a
 * reader buffer to find that out (the answer is not kept). A sink task asks once per record,
 * and most records have no headers: about a tenth of a sink task's time went there.
 *
 * Compiled by build.rs against the headers of the librdkafka that rdkafka-sys built, so the
 * message layout is the one linked in.
 */
#include "rdkafka_int.h"
#include "rdkafka_msg.h"

/* 1 when the message may have headers (rd_kafka_message_headers() then tells), 0 when it has
 * none: no parsed list, and an unparsed section that is empty or starts with a zero count (the
 * zig-zag varint 0 is the single byte 0x00). */
int tributary_consumed_message_may_have_headers(const rd_kafka_message_t *rkmessage) {
        const rd_kafka_msg_t *rkm =
            rd_kafka_message2msg((rd_kafka_message_t *)rkmessage);
        const rd_kafkap_bytes_t *section;

        if (rkm->rkm_headers)
                return 1;
        if (rkm->rkm_flags & RD_KAFKA_MSG_F_PRODUCER)
                return 0;
        section = &rkm->rkm_u.consumer.binhdrs;
        if (RD_KAFKAP_BYTES_LEN(section) == 0)
                return 0;
        return ((const unsigned char *)section->data)[0] != 0;
}
