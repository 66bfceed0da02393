/*
 * Live vectors of Connect's primitive converters (org.apache.kafka.connect.converters:
 * ShortConverter, IntegerConverter, LongConverter, FloatConverter, DoubleConverter and
 * BooleanConverter), run by crates/runtime/tests/conformance_vectors.rs against the Connect jars of
 * scripts/connect-java, which compares Tributary's converters with them.
 *
 * Input, one case per line on stdin: `<name>\t<converter class>\t<op>\t<schema>\t<arg>`.
 * - op `from`: fromConnectData with schema `<schema>` (`none`, or a Schema.Type name, optional)
 *   and the value `<arg>` = `<type>:<text>` (`null:`, `int16:-2`, `int32:1`, `int64:1`,
 *   `float32bits:<hex>`, `float64bits:<hex>`, `boolean:true`, `string:x`);
 * - op `to`: toConnectData of the bytes `<arg>` (hex, or `null`).
 * Output, one line per case: `<name>\t<result>`: for `from` the bytes in hex, `null`, or
 * `ERR <message>`; for `to` `<schema type> <optional> <value>` (floats as their raw bits in
 * hex) or `ERR <message><cause's message>`.
 */

import java.io.BufferedReader;
import java.io.InputStreamReader;
import java.nio.charset.StandardCharsets;
import java.util.HashMap;

import org.apache.kafka.connect.data.Schema;
import org.apache.kafka.connect.data.SchemaAndValue;
import org.apache.kafka.connect.data.SchemaBuilder;
import org.apache.kafka.connect.storage.Converter;

public class PrimitiveConverterVectors {
    static String hex(byte[] bytes) {
        if (bytes == null) {
            return "null";
        }
        StringBuilder out = new StringBuilder();
        for (byte b : bytes) {
            out.append(String.format("%02x", b));
        }
        return out.toString();
    }

    static byte[] unhex(String text) {
        if (text.equals("null")) {
            return null;
        }
        byte[] out = new byte[text.length() / 2];
        for (int i = 0; i < out.length; i++) {
            out[i] = (byte) Integer.parseInt(text.substring(2 * i, 2 * i + 2), 16);
        }
        return out;
    }

    static Object value(String arg) {
        int colon = arg.indexOf(':');
        String type = arg.substring(0, colon);
        String text = arg.substring(colon + 1);
        switch (type) {
            case "null": return null;
            case "int16": return Short.parseShort(text);
            case "int32": return Integer.parseInt(text);
            case "int64": return Long.parseLong(text);
            case "float32bits": return Float.intBitsToFloat((int) Long.parseLong(text, 16));
            case "float64bits": return Double.longBitsToDouble(Long.parseUnsignedLong(text, 16));
            case "boolean": return Boolean.parseBoolean(text);
            case "string": return text;
            default: throw new IllegalArgumentException(type);
        }
    }

    static String shown(Object value) {
        if (value instanceof Float) {
            return String.format("%08x", Float.floatToRawIntBits((Float) value));
        }
        if (value instanceof Double) {
            return String.format("%016x", Double.doubleToRawLongBits((Double) value));
        }
        return String.valueOf(value);
    }

    public static void main(String[] args) throws Exception {
        BufferedReader in = new BufferedReader(new InputStreamReader(System.in, StandardCharsets.UTF_8));
        String line;
        while ((line = in.readLine()) != null) {
            if (line.isEmpty()) {
                continue;
            }
            String[] f = line.split("\t", -1);
            Converter converter = (Converter) Class.forName(f[1]).getDeclaredConstructor().newInstance();
            converter.configure(new HashMap<>(), false);
            String result;
            try {
                if (f[2].equals("from")) {
                    Schema schema = f[3].equals("none") ? null
                        : SchemaBuilder.type(Schema.Type.valueOf(f[3])).optional().build();
                    result = hex(converter.fromConnectData("t", schema, value(f[4])));
                } else {
                    SchemaAndValue sv = converter.toConnectData("t", unhex(f[4]));
                    result = sv.schema().type() + " " + sv.schema().isOptional() + " " + shown(sv.value());
                }
            } catch (Exception e) {
                String cause = e.getCause() == null || f[2].equals("from") ? "" : e.getCause().getMessage();
                result = "ERR " + e.getMessage() + cause;
            }
            System.out.println(f[0] + "\t" + result);
        }
    }
}
