package io.tributary.probe;

import java.nio.charset.StandardCharsets;
import java.util.Map;

import org.apache.kafka.common.header.Header;
import org.apache.kafka.common.header.Headers;
import org.apache.kafka.connect.data.Schema;
import org.apache.kafka.connect.data.SchemaAndValue;
import org.apache.kafka.connect.errors.DataException;
import org.apache.kafka.connect.storage.Converter;

/**
 * A Java converter for Tributary's Java plugin tests (crates/cli/tests/hosted/java_plugins.rs) that
 * works only through the record's headers, as a schema-registry converter keeping its schema
 * id in a header does: fromConnectData writes the value's text and adds a header
 * {@code probe.type} naming the schema's type; toConnectData gives the text
 * {@code <probe.type header>:<value>} (or {@code no-header:<value>}). The header-less variants
 * throw, so a runtime that does not pass headers fails.
 */
public class ProbeConverter implements Converter {
    @Override
    public void configure(Map<String, ?> configs, boolean isKey) {
    }

    @Override
    public byte[] fromConnectData(String topic, Schema schema, Object value) {
        throw new DataException("ProbeConverter needs the record's headers");
    }

    @Override
    public byte[] fromConnectData(String topic, Headers headers, Schema schema, Object value) {
        String type = schema == null ? "none" : schema.type().name();
        headers.add("probe.type", type.getBytes(StandardCharsets.UTF_8));
        return value == null ? null : value.toString().getBytes(StandardCharsets.UTF_8);
    }

    @Override
    public SchemaAndValue toConnectData(String topic, byte[] value) {
        throw new DataException("ProbeConverter needs the record's headers");
    }

    @Override
    public SchemaAndValue toConnectData(String topic, Headers headers, byte[] value) {
        Header h = headers.lastHeader("probe.type");
        String tag = h == null ? "no-header" : new String(h.value(), StandardCharsets.UTF_8);
        String text = value == null ? "null" : new String(value, StandardCharsets.UTF_8);
        return new SchemaAndValue(Schema.OPTIONAL_STRING_SCHEMA, tag + ":" + text);
    }
}
