/*
 * OffsetFileVectors: conformance helper for Tributary's standalone offsets file
 * format (crates/runtime/src/storage/offset_file_format.rs).
 *
 * Apache Kafka Connect's FileOffsetBackingStore persists source offsets as a
 * Java-serialized java.util.HashMap<byte[], byte[]> written with
 * ObjectOutputStream.writeObject. This program produces such files with the
 * real JDK and reads files back, so the Rust codec can be checked both ways.
 *
 * Only java.io and java.util are used; no jars are needed. Run with Java 17:
 *
 *   cd conformance/java
 *   javac -d /tmp/offsetvec-classes OffsetFileVectors.java
 *
 *   # (a) write the vector files into a directory (one file per case,
 *   #     plus <case>.expected listing the entries as hex):
 *   java -cp /tmp/offsetvec-classes OffsetFileVectors write /tmp/offsetvec
 *
 *   # (b) read any offsets file (Java- or Rust-written) and print entries:
 *   java -cp /tmp/offsetvec-classes OffsetFileVectors read /tmp/offsetvec/one.bin
 *
 *   # (c) print a file's raw bytes as one hex line (for golden vectors):
 *   java -cp /tmp/offsetvec-classes OffsetFileVectors hex /tmp/offsetvec/one.bin
 *
 * Output of "read" (and the .expected files): one line per entry,
 *   <key hex> <value hex | null>
 * sorted lexicographically by line, so the output does not depend on
 * HashMap iteration order (which for byte[] keys depends on identity hash
 * codes and differs between runs).
 */
import java.io.*;
import java.nio.charset.StandardCharsets;
import java.util.*;

public class OffsetFileVectors {

    private static byte[] utf8(String s) {
        return s.getBytes(StandardCharsets.UTF_8);
    }

    private static String hex(byte[] b) {
        if (b == null) return "null";
        StringBuilder sb = new StringBuilder();
        for (byte x : b) sb.append(String.format("%02x", x & 0xff));
        return sb.toString();
    }

    /** Entries as sorted "key value" hex lines, independent of iteration order. */
    private static List<String> lines(Map<byte[], byte[]> m) {
        List<String> out = new ArrayList<>();
        for (Map.Entry<byte[], byte[]> e : m.entrySet()) {
            out.add(hex(e.getKey()) + " " + hex(e.getValue()));
        }
        Collections.sort(out);
        return out;
    }

    private static Map<String, Map<byte[], byte[]>> cases() {
        Map<String, Map<byte[], byte[]>> cases = new LinkedHashMap<>();

        cases.put("empty", new HashMap<>());

        Map<byte[], byte[]> one = new HashMap<>();
        one.put(utf8("[\"file-source\",{\"filename\":\"/tmp/in.txt\"}]"), utf8("{\"position\":42}"));
        cases.put("one", one);

        Map<byte[], byte[]> several = new HashMap<>();
        several.put(utf8("[\"jdbc\",{\"table\":\"orders\"}]"), utf8("{\"incrementing\":1001}"));
        several.put(utf8("[\"jdbc\",{\"table\":\"customers\"}]"), null);
        several.put(utf8("[\"mirror\",{\"cluster\":\"a\",\"partition\":3,\"topic\":\"t\"}]"), utf8("{\"offset\":7}"));
        cases.put("several_with_null", several);

        // 20 entries: the table grows from 16 to 32 buckets (threshold 24).
        Map<byte[], byte[]> twenty = new HashMap<>();
        for (int i = 0; i < 20; i++) {
            twenty.put(utf8("[\"conn\",{\"p\":" + i + "}]"), utf8("{\"o\":" + (i * 1000) + "}"));
        }
        cases.put("twenty", twenty);

        // Arbitrary binary and non-ASCII content, plus an empty value array.
        Map<byte[], byte[]> binary = new HashMap<>();
        binary.put(new byte[] {0, 1, 2, (byte) 0x7f, (byte) 0x80, (byte) 0xff}, new byte[] {(byte) 0xac, (byte) 0xed, 0, 5});
        binary.put(utf8("[\"caf\u00e9\",{\"\u65e5\u672c\":\"\uD83D\uDE00\"}]"), utf8("{\"\u00fc\":\"\u00df\"}"));
        binary.put(new byte[] {(byte) 0x70, (byte) 0x71, (byte) 0x78}, new byte[0]);
        cases.put("binary", binary);

        // The same byte[] instance used more than once: Java then writes
        // TC_REFERENCE back-references to the earlier array instead of a copy.
        // (FileOffsetBackingStore never does this, but readers must cope.)
        Map<byte[], byte[]> shared = new HashMap<>();
        byte[] common = utf8("{\"shared\":true}");
        byte[] self = utf8("[\"self\",{}]");
        shared.put(utf8("[\"a\",{}]"), common);
        shared.put(utf8("[\"b\",{}]"), common);
        shared.put(self, self);
        cases.put("shared_arrays", shared);

        return cases;
    }

    private static void write(File dir) throws IOException {
        if (!dir.isDirectory() && !dir.mkdirs()) throw new IOException("cannot create " + dir);
        for (Map.Entry<String, Map<byte[], byte[]>> c : cases().entrySet()) {
            File f = new File(dir, c.getKey() + ".bin");
            try (ObjectOutputStream os = new ObjectOutputStream(new FileOutputStream(f))) {
                os.writeObject(c.getValue());
            }
            try (PrintWriter pw = new PrintWriter(new FileWriter(new File(dir, c.getKey() + ".expected")))) {
                for (String line : lines(c.getValue())) pw.println(line);
            }
            System.out.println("wrote " + f + " (" + f.length() + " bytes, " + c.getValue().size() + " entries)");
        }
    }

    @SuppressWarnings("unchecked")
    private static void read(File f) throws IOException, ClassNotFoundException {
        // Mirrors FileOffsetBackingStore.load(): read one object, require a HashMap.
        try (ObjectInputStream is = new ObjectInputStream(new FileInputStream(f))) {
            Object obj = is.readObject();
            if (!(obj instanceof HashMap)) {
                throw new IOException("expected HashMap, got " + (obj == null ? "null" : obj.getClass().getName()));
            }
            for (String line : lines((Map<byte[], byte[]>) obj)) System.out.println(line);
        }
    }

    private static void hexdump(File f) throws IOException {
        try (InputStream in = new FileInputStream(f)) {
            System.out.println(hex(in.readAllBytes()));
        }
    }

    public static void main(String[] args) throws Exception {
        if (args.length == 2 && args[0].equals("write")) {
            write(new File(args[1]));
        } else if (args.length == 2 && args[0].equals("read")) {
            read(new File(args[1]));
        } else if (args.length == 2 && args[0].equals("hex")) {
            hexdump(new File(args[1]));
        } else {
            System.err.println("usage: OffsetFileVectors write <dir> | read <file> | hex <file>");
            System.exit(2);
        }
    }
}
