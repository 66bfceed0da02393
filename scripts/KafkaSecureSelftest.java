// scripts/KafkaSecureSelftest.java: the checks of `scripts/kafka-secure selftest`.
//
// Runs Kafka's own Java clients against the secured broker started by scripts/kafka-secure, with
// the KAFKA_SECURE_* variables of `scripts/kafka-secure env` in the environment: every listener,
// SASL mechanism, store format and password, and the ACLs, positive and negative. Prints one
// PASS/FAIL line per case and exits with status 1 when any case failed.

import java.io.InputStream;
import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.Path;
import java.security.Key;
import java.security.KeyStore;
import java.security.cert.Certificate;
import java.security.cert.X509Certificate;
import java.time.Duration;
import java.util.ArrayList;
import java.util.Collection;
import java.util.List;
import java.util.Map;
import java.util.Properties;
import java.util.concurrent.ExecutionException;
import javax.net.ssl.KeyManagerFactory;
import javax.net.ssl.SSLContext;
import javax.net.ssl.SSLParameters;
import javax.net.ssl.SSLServerSocket;
import javax.net.ssl.SSLSocket;
import javax.net.ssl.TrustManagerFactory;
import org.apache.kafka.clients.admin.Admin;
import org.apache.kafka.clients.admin.NewTopic;
import org.apache.kafka.clients.consumer.ConsumerRecord;
import org.apache.kafka.clients.consumer.KafkaConsumer;
import org.apache.kafka.clients.consumer.OffsetAndMetadata;
import org.apache.kafka.clients.producer.KafkaProducer;
import org.apache.kafka.clients.producer.ProducerRecord;
import org.apache.kafka.clients.producer.RecordMetadata;
import org.apache.kafka.common.TopicPartition;
import org.apache.kafka.common.acl.AclBinding;
import org.apache.kafka.common.acl.AclBindingFilter;
import org.apache.kafka.common.errors.SaslAuthenticationException;
import org.apache.kafka.common.errors.SslAuthenticationException;
import org.apache.kafka.common.errors.TopicAuthorizationException;
import org.apache.kafka.common.errors.TopicExistsException;
import org.apache.kafka.common.serialization.StringDeserializer;
import org.apache.kafka.common.serialization.StringSerializer;

public class KafkaSecureSelftest {
  static final String TOPIC = "tributary-selftest";
  static final Map<String, String> ENV = System.getenv();
  static int passed = 0;
  static final List<String> failed = new ArrayList<>();

  interface Body {
    String run() throws Exception;
  }

  static String env(String name) {
    String v = ENV.get(name);
    if (v == null) throw new IllegalStateException(name + " is not set (run through scripts/kafka-secure selftest)");
    return v;
  }

  static void report(String name, boolean ok, String detail, long startNanos) {
    long ms = (System.nanoTime() - startNanos) / 1_000_000;
    System.out.printf("%s  %-68s %5d ms  %s%n", ok ? "PASS" : "FAIL", name, ms, detail);
    System.out.flush();
    if (ok) passed++;
    else failed.add(name);
  }

  static String describe(Throwable t) {
    StringBuilder sb = new StringBuilder();
    for (Throwable c = t; c != null; c = c.getCause()) {
      if (sb.length() > 0) sb.append(" <- ");
      sb.append(c.getClass().getSimpleName()).append(": ").append(String.valueOf(c.getMessage()).split("\n")[0]);
      if (c.getCause() == c) break;
    }
    return sb.toString();
  }

  /** A case that must succeed. */
  static void ok(String name, Body body) {
    long t0 = System.nanoTime();
    try {
      report(name, true, body.run(), t0);
    } catch (Throwable t) {
      report(name, false, "unexpected " + describe(t), t0);
    }
  }

  /** A case that must fail with `expected` somewhere in the cause chain. */
  static void fails(String name, Class<? extends Throwable> expected, Body body) {
    long t0 = System.nanoTime();
    try {
      String detail = body.run();
      report(name, false, "succeeded, expected " + expected.getSimpleName() + " (" + detail + ")", t0);
    } catch (Throwable t) {
      for (Throwable c = t; c != null; c = c.getCause()) {
        if (expected.isInstance(c)) {
          report(name, true, c.getClass().getSimpleName() + ": " + String.valueOf(c.getMessage()).split("\n")[0], t0);
          return;
        }
        if (c.getCause() == c) break;
      }
      report(name, false, "expected " + expected.getSimpleName() + ", got " + describe(t), t0);
    }
  }

  // ---- client configurations ----

  static Properties base(String bootstrap) {
    Properties p = new Properties();
    p.put("bootstrap.servers", bootstrap);
    p.put("request.timeout.ms", "10000");
    p.put("default.api.timeout.ms", "15000");
    p.put("max.block.ms", "15000");
    p.put("delivery.timeout.ms", "15000");
    p.put("linger.ms", "0");
    p.put("reconnect.backoff.max.ms", "1000");
    return p;
  }

  static String jaas(String mechanism, String user, String password) {
    if (mechanism.equals("OAUTHBEARER")) {
      return "org.apache.kafka.common.security.oauthbearer.OAuthBearerLoginModule required unsecuredLoginStringClaim_sub=\"" + user + "\";";
    }
    String module = mechanism.equals("PLAIN")
        ? "org.apache.kafka.common.security.plain.PlainLoginModule"
        : "org.apache.kafka.common.security.scram.ScramLoginModule";
    return module + " required username=\"" + user + "\" password=\"" + password + "\";";
  }

  /** The OIDC client-credentials flow on the OAUTH listener, as a Connect worker file sets it. */
  static Properties oidc(String clientId, String clientSecret) {
    Properties p = base(env("KAFKA_SECURE_OAUTH"));
    p.put("security.protocol", "SASL_PLAINTEXT");
    p.put("sasl.mechanism", "OAUTHBEARER");
    p.put("sasl.login.callback.handler.class", "org.apache.kafka.common.security.oauthbearer.OAuthBearerLoginCallbackHandler");
    p.put("sasl.oauthbearer.token.endpoint.url", env("KAFKA_SECURE_OIDC_TOKEN_URL"));
    p.put("sasl.jaas.config", "org.apache.kafka.common.security.oauthbearer.OAuthBearerLoginModule required clientId=\""
        + clientId + "\" clientSecret=\"" + clientSecret + "\" scope=\"kafka\";");
    return p;
  }

  /** The HTTPS token endpoint, trusted through the JAAS options' ssl.* settings. */
  static Properties oidcHttps() {
    Properties p = oidc("connect", "connect-secret");
    p.put("sasl.oauthbearer.token.endpoint.url", env("KAFKA_SECURE_OIDC_HTTPS_TOKEN_URL"));
    p.put("sasl.jaas.config", "org.apache.kafka.common.security.oauthbearer.OAuthBearerLoginModule required clientId=\"connect\""
        + " clientSecret=\"connect-secret\" scope=\"kafka\" ssl.truststore.type=\"PEM\" ssl.truststore.location=\""
        + env("KAFKA_SECURE_CA_PEM") + "\";");
    return p;
  }

  /** The same with Kafka 4.1's keys (KIP-1139) instead of the JAAS options. */
  static Properties kip1139() {
    Properties p = oidc("ignored", "ignored");
    p.put("sasl.jaas.config", "org.apache.kafka.common.security.oauthbearer.OAuthBearerLoginModule required;");
    p.put("sasl.oauthbearer.client.credentials.client.id", "connect");
    p.put("sasl.oauthbearer.client.credentials.client.secret", "connect-secret");
    p.put("sasl.oauthbearer.scope", "kafka");
    return p;
  }

  static Properties sasl(String listener, String protocol, String mechanism, String user, String password) {
    Properties p = base(env(listener));
    p.put("security.protocol", protocol);
    p.put("sasl.mechanism", mechanism);
    p.put("sasl.jaas.config", jaas(mechanism, user, password));
    return p;
  }

  /** Truststore by format: P12, JKS or PEM (the CA certificate file). */
  static Properties trust(Properties p, String format) {
    switch (format) {
      case "P12" -> {
        p.put("ssl.truststore.type", "PKCS12");
        p.put("ssl.truststore.location", env("KAFKA_SECURE_TRUSTSTORE_P12"));
        p.put("ssl.truststore.password", env("KAFKA_SECURE_STORE_PASSWORD"));
      }
      case "JKS" -> {
        p.put("ssl.truststore.type", "JKS");
        p.put("ssl.truststore.location", env("KAFKA_SECURE_TRUSTSTORE_JKS"));
        p.put("ssl.truststore.password", env("KAFKA_SECURE_STORE_PASSWORD"));
      }
      case "PEM" -> {
        p.put("ssl.truststore.type", "PEM");
        p.put("ssl.truststore.location", env("KAFKA_SECURE_CA_PEM"));
      }
      default -> throw new IllegalArgumentException(format);
    }
    return p;
  }

  static Properties mtls(String trustFormat) {
    Properties p = base(env("KAFKA_SECURE_MTLS"));
    p.put("security.protocol", "SSL");
    return trust(p, trustFormat);
  }

  /** Client keystore by format, for entity CLIENT or UNTRUSTED. */
  static Properties keystore(Properties p, String entity, String format) throws Exception {
    String e = "KAFKA_SECURE_" + entity + "_";
    switch (format) {
      case "P12" -> {
        p.put("ssl.keystore.type", "PKCS12");
        p.put("ssl.keystore.location", env(e + "KEYSTORE_P12"));
        p.put("ssl.keystore.password", env("KAFKA_SECURE_STORE_PASSWORD"));
        p.put("ssl.key.password", env("KAFKA_SECURE_STORE_PASSWORD"));
      }
      case "JKS" -> {
        p.put("ssl.keystore.type", "JKS");
        p.put("ssl.keystore.location", env(e + "KEYSTORE_JKS"));
        p.put("ssl.keystore.password", env("KAFKA_SECURE_STORE_PASSWORD"));
        p.put("ssl.key.password", env("KAFKA_SECURE_KEY_PASSWORD"));
      }
      case "PEM-FILE" -> { // encrypted key + chain in one file
        p.put("ssl.keystore.type", "PEM");
        p.put("ssl.keystore.location", env(e + "KEYSTORE_PEM"));
        p.put("ssl.key.password", env("KAFKA_SECURE_KEY_PASSWORD"));
      }
      case "PEM-INLINE" -> { // certificate and unencrypted key as values
        p.put("ssl.keystore.type", "PEM");
        p.put("ssl.keystore.certificate.chain", Files.readString(Path.of(env(e + "CERT_PEM"))));
        p.put("ssl.keystore.key", Files.readString(Path.of(env(e + "KEY_PEM"))));
      }
      case "PEM-INLINE-ENCRYPTED" -> {
        p.put("ssl.keystore.type", "PEM");
        p.put("ssl.keystore.certificate.chain", Files.readString(Path.of(env(e + "CERT_PEM"))));
        p.put("ssl.keystore.key", Files.readString(Path.of(env(e + "KEY_ENCRYPTED_PEM"))));
        p.put("ssl.key.password", env("KAFKA_SECURE_KEY_PASSWORD"));
      }
      default -> throw new IllegalArgumentException(format);
    }
    return p;
  }

  // ---- what a case does ----

  static Properties producerProps(Properties p) {
    Properties q = new Properties();
    q.putAll(p);
    q.put("key.serializer", StringSerializer.class.getName());
    q.put("value.serializer", StringSerializer.class.getName());
    return q;
  }

  static Properties consumerProps(Properties p, String group) {
    Properties q = new Properties();
    q.putAll(p);
    q.put("key.deserializer", StringDeserializer.class.getName());
    q.put("value.deserializer", StringDeserializer.class.getName());
    q.put("enable.auto.commit", "false");
    if (group != null) q.put("group.id", group);
    return q;
  }

  static RecordMetadata produce(Properties p, String value) throws Exception {
    try (KafkaProducer<String, String> producer = new KafkaProducer<>(producerProps(p))) {
      return producer.send(new ProducerRecord<>(TOPIC, "k", value)).get();
    }
  }

  /** Reads from `offset` until `value` shows up; commits the offset in `group` when given. */
  static void consume(Properties p, String group, int partition, long offset, String value) throws Exception {
    try (KafkaConsumer<String, String> consumer = new KafkaConsumer<>(consumerProps(p, group))) {
      TopicPartition tp = new TopicPartition(TOPIC, partition);
      consumer.assign(List.of(tp));
      consumer.seek(tp, offset);
      long deadline = System.nanoTime() + 15_000_000_000L;
      while (System.nanoTime() < deadline) {
        for (ConsumerRecord<String, String> r : consumer.poll(Duration.ofMillis(200))) {
          if (r.value().equals(value)) {
            if (group != null) consumer.commitSync(Map.of(tp, new OffsetAndMetadata(r.offset() + 1)));
            return;
          }
        }
      }
      throw new IllegalStateException("record not read back within 15 s");
    }
  }

  static Body roundTrip(Properties p, String label) {
    return () -> {
      String value = label + "-" + System.nanoTime();
      RecordMetadata md = produce(p, value);
      consume(p, "selftest-" + label, md.partition(), md.offset(), value);
      return "produced and read back offset " + md.offset();
    };
  }

  static Body produceOnly(Properties p) {
    return () -> {
      RecordMetadata md = produce(p, "denied-" + System.nanoTime());
      return "produced offset " + md.offset();
    };
  }

  static Body consumeOnly(Properties p) {
    return () -> {
      try (KafkaConsumer<String, String> consumer = new KafkaConsumer<>(consumerProps(p, null))) {
        TopicPartition tp = new TopicPartition(TOPIC, 0);
        consumer.assign(List.of(tp));
        consumer.seekToBeginning(List.of(tp));
        long deadline = System.nanoTime() + 10_000_000_000L;
        int n = 0;
        while (System.nanoTime() < deadline && n == 0) n += consumer.poll(Duration.ofMillis(200)).count();
        return "read " + n + " records";
      }
    };
  }

  static Body transactional(Properties p) {
    return () -> {
      Properties q = producerProps(p);
      q.put("transactional.id", "selftest-tx");
      try (KafkaProducer<String, String> producer = new KafkaProducer<>(q)) {
        producer.initTransactions();
        producer.beginTransaction();
        RecordMetadata md = producer.send(new ProducerRecord<>(TOPIC, "k", "tx-" + System.nanoTime())).get();
        producer.commitTransaction();
        return "committed a transaction, offset " + md.offset();
      }
    };
  }

  // ---- stores and certificates, without the broker ----

  static KeyStore load(String path, String type, String password) throws Exception {
    KeyStore ks = KeyStore.getInstance(type);
    try (InputStream in = Files.newInputStream(Path.of(path))) {
      ks.load(in, password.toCharArray());
    }
    return ks;
  }

  static Body stores(String entity) {
    return () -> {
      String e = entity.toLowerCase();
      String store = env("KAFKA_SECURE_STORE_PASSWORD");
      String key = env("KAFKA_SECURE_KEY_PASSWORD");
      KeyStore p12 = load(env("KAFKA_SECURE_" + entity + "_KEYSTORE_P12"), "PKCS12", store);
      Key k1 = p12.getKey(e, store.toCharArray());
      KeyStore jks = load(env("KAFKA_SECURE_" + entity + "_KEYSTORE_JKS"), "JKS", store);
      Key k2 = jks.getKey(e, key.toCharArray());
      if (k1 == null || k2 == null) throw new IllegalStateException("no key entry `" + e + "`");
      Certificate[] chain = p12.getCertificateChain(e);
      X509Certificate leaf = (X509Certificate) chain[0];
      return "PKCS12 (key: store password) and JKS (key: key password) key entry `" + e + "`, chain of "
          + chain.length + ", " + leaf.getSubjectX500Principal().getName();
    };
  }

  static Body truststores() {
    return () -> {
      String store = env("KAFKA_SECURE_STORE_PASSWORD");
      for (String[] s : new String[][] {{"KAFKA_SECURE_TRUSTSTORE_P12", "PKCS12"}, {"KAFKA_SECURE_TRUSTSTORE_JKS", "JKS"}}) {
        KeyStore ks = load(env(s[0]), s[1], store);
        if (!ks.isCertificateEntry("ca")) throw new IllegalStateException(s[0] + " has no trusted entry `ca`");
      }
      return "PKCS12 and JKS hold trusted entry `ca`";
    };
  }

  /** TLS handshake with hostname (IP SAN) verification, as an HTTPS client of a worker does. */
  static Body https(String serverEntity) {
    return () -> {
      String store = env("KAFKA_SECURE_STORE_PASSWORD");
      KeyManagerFactory kmf = KeyManagerFactory.getInstance(KeyManagerFactory.getDefaultAlgorithm());
      kmf.init(load(env("KAFKA_SECURE_" + serverEntity + "_KEYSTORE_P12"), "PKCS12", store), store.toCharArray());
      SSLContext server = SSLContext.getInstance("TLS");
      server.init(kmf.getKeyManagers(), null, null);
      TrustManagerFactory tmf = TrustManagerFactory.getInstance(TrustManagerFactory.getDefaultAlgorithm());
      tmf.init(load(env("KAFKA_SECURE_TRUSTSTORE_P12"), "PKCS12", store));
      SSLContext client = SSLContext.getInstance("TLS");
      client.init(null, tmf.getTrustManagers(), null);
      try (SSLServerSocket ss = (SSLServerSocket) server.getServerSocketFactory().createServerSocket(0, 1,
          java.net.InetAddress.getByName("127.0.0.1"))) {
        Thread t = new Thread(() -> {
          try (SSLSocket s = (SSLSocket) ss.accept()) {
            s.getOutputStream().write("ok".getBytes(StandardCharsets.US_ASCII));
            s.getOutputStream().flush();
          } catch (Exception ignored) {
          }
        });
        t.setDaemon(true);
        t.start();
        try (SSLSocket s = (SSLSocket) client.getSocketFactory().createSocket("127.0.0.1", ss.getLocalPort())) {
          SSLParameters params = s.getSSLParameters();
          params.setEndpointIdentificationAlgorithm("HTTPS");
          s.setSSLParameters(params);
          s.startHandshake();
          byte[] buf = s.getInputStream().readNBytes(2);
          return "handshake verified 127.0.0.1 against the CA, read " + new String(buf, StandardCharsets.US_ASCII);
        }
      }
    };
  }

  public static void main(String[] args) throws Exception {
    System.out.println("scripts/kafka-secure selftest: Kafka Java clients against " + env("KAFKA_SECURE_INTERNAL")
        + " / " + env("KAFKA_SECURE_SASL_SSL") + " / " + env("KAFKA_SECURE_MTLS") + " / "
        + env("KAFKA_SECURE_SASL_PLAINTEXT") + " / " + env("KAFKA_SECURE_OAUTH") + " (OIDC " + env("KAFKA_SECURE_OIDC_TOKEN_URL") + ")");

    // Stores and certificates.
    for (String e : new String[] {"BROKER", "CLIENT", "WORKER", "UNTRUSTED"}) ok("stores: " + e.toLowerCase() + " .p12/.jks passwords", stores(e));
    ok("stores: truststore .p12/.jks", truststores());
    ok("worker cert: HTTPS handshake at 127.0.0.1, CA truststore", https("WORKER"));
    fails("untrusted cert: HTTPS handshake refused by the CA truststore", javax.net.ssl.SSLHandshakeException.class, https("UNTRUSTED"));

    // Setup through INTERNAL (PLAINTEXT, User:ANONYMOUS is a super user).
    ok("INTERNAL: create topic " + TOPIC, () -> {
      try (Admin admin = Admin.create(base(env("KAFKA_SECURE_INTERNAL")))) {
        try {
          admin.createTopics(List.of(new NewTopic(TOPIC, 1, (short) 1))).all().get();
          return "created";
        } catch (ExecutionException e) {
          if (e.getCause() instanceof TopicExistsException) return "already there";
          throw e;
        }
      }
    });

    // SASL_SSL.
    String ssl = "KAFKA_SECURE_SASL_SSL";
    ok("SASL_SSL SCRAM-SHA-512 connect, truststore PKCS12: produce+consume",
        roundTrip(trust(sasl(ssl, "SASL_SSL", "SCRAM-SHA-512", "connect", "connect-secret"), "P12"), "scram512"));
    ok("SASL_SSL SCRAM-SHA-256 connect, truststore JKS: produce+consume",
        roundTrip(trust(sasl(ssl, "SASL_SSL", "SCRAM-SHA-256", "connect", "connect-secret"), "JKS"), "scram256"));
    ok("SASL_SSL PLAIN connect, truststore PEM: produce+consume",
        roundTrip(trust(sasl(ssl, "SASL_SSL", "PLAIN", "connect", "connect-secret"), "PEM"), "plain"));
    ok("SASL_SSL SCRAM-SHA-512 connect: transactional produce",
        transactional(trust(sasl(ssl, "SASL_SSL", "SCRAM-SHA-512", "connect", "connect-secret"), "P12")));
    ok("SASL_SSL SCRAM-SHA-256 admin (super user): describe ACLs", () -> {
      try (Admin admin = Admin.create(trust(sasl(ssl, "SASL_SSL", "SCRAM-SHA-256", "admin", "admin-secret"), "P12"))) {
        Collection<AclBinding> acls = admin.describeAcls(AclBindingFilter.ANY).values().get();
        long forConnect = acls.stream().filter(a -> a.entry().principal().equals("User:connect")).count();
        if (forConnect < 4) throw new IllegalStateException("only " + forConnect + " ACLs for User:connect: " + acls);
        return forConnect + " ACL entries for User:connect";
      }
    });
    fails("SASL_SSL SCRAM-SHA-512 wrong password", SaslAuthenticationException.class,
        produceOnly(trust(sasl(ssl, "SASL_SSL", "SCRAM-SHA-512", "connect", "wrong"), "P12")));
    fails("SASL_SSL SCRAM-SHA-256 unknown user", SaslAuthenticationException.class,
        produceOnly(trust(sasl(ssl, "SASL_SSL", "SCRAM-SHA-256", "nobody", "connect-secret"), "P12")));
    fails("SASL_SSL PLAIN wrong password", SaslAuthenticationException.class,
        produceOnly(trust(sasl(ssl, "SASL_SSL", "PLAIN", "connect", "wrong"), "P12")));
    fails("SASL_SSL client trusting only the untrusted cert", SslAuthenticationException.class, () -> {
      Properties p = sasl(ssl, "SASL_SSL", "SCRAM-SHA-512", "connect", "connect-secret");
      p.put("ssl.truststore.type", "PEM");
      p.put("ssl.truststore.location", env("KAFKA_SECURE_UNTRUSTED_CERT_PEM"));
      return produceOnly(p).run();
    });
    fails("SASL_SSL SCRAM-SHA-512 limited: produce denied", TopicAuthorizationException.class,
        produceOnly(trust(sasl(ssl, "SASL_SSL", "SCRAM-SHA-512", "limited", "limited-secret"), "P12")));
    fails("SASL_SSL PLAIN limited: consume denied", TopicAuthorizationException.class,
        consumeOnly(trust(sasl(ssl, "SASL_SSL", "PLAIN", "limited", "limited-secret"), "PEM")));

    // MTLS.
    ok("MTLS client keystore PKCS12 (User:connect): produce+consume", roundTrip(keystore(mtls("P12"), "CLIENT", "P12"), "mtls-p12"));
    ok("MTLS client keystore JKS, key password key-secret: produce+consume", roundTrip(keystore(mtls("JKS"), "CLIENT", "JKS"), "mtls-jks"));
    ok("MTLS client keystore PEM file (encrypted key + chain): produce+consume",
        roundTrip(keystore(mtls("PEM"), "CLIENT", "PEM-FILE"), "mtls-pem"));
    ok("MTLS client cert + unencrypted key inline PEM: produce+consume",
        roundTrip(keystore(mtls("PEM"), "CLIENT", "PEM-INLINE"), "mtls-pem-inline"));
    ok("MTLS client cert + encrypted key inline PEM: produce+consume",
        roundTrip(keystore(mtls("PEM"), "CLIENT", "PEM-INLINE-ENCRYPTED"), "mtls-pem-inline-enc"));
    fails("MTLS without a client certificate", SslAuthenticationException.class, produceOnly(mtls("P12")));
    fails("MTLS with the untrusted self-signed client certificate", SslAuthenticationException.class,
        produceOnly(keystore(mtls("P12"), "UNTRUSTED", "P12")));

    // SASL_PLAINTEXT.
    String plain = "KAFKA_SECURE_SASL_PLAINTEXT";
    ok("SASL_PLAINTEXT OAUTHBEARER unsecured sub=connect: produce+consume",
        roundTrip(sasl(plain, "SASL_PLAINTEXT", "OAUTHBEARER", "connect", null), "oauth"));
    fails("SASL_PLAINTEXT OAUTHBEARER unsecured sub=limited: produce denied", TopicAuthorizationException.class,
        produceOnly(sasl(plain, "SASL_PLAINTEXT", "OAUTHBEARER", "limited", null)));
    ok("SASL_PLAINTEXT PLAIN connect: produce+consume", roundTrip(sasl(plain, "SASL_PLAINTEXT", "PLAIN", "connect", "connect-secret"), "sp-plain"));
    ok("SASL_PLAINTEXT SCRAM-SHA-512 connect: produce+consume",
        roundTrip(sasl(plain, "SASL_PLAINTEXT", "SCRAM-SHA-512", "connect", "connect-secret"), "sp-scram512"));
    fails("SASL_PLAINTEXT PLAIN wrong password", SaslAuthenticationException.class,
        produceOnly(sasl(plain, "SASL_PLAINTEXT", "PLAIN", "connect", "wrong")));

    // OAUTH: tokens from the OIDC provider, verified against its JWKS.
    ok("OAUTH OIDC client credentials connect: produce+consume", roundTrip(oidc("connect", "connect-secret"), "oidc"));
    ok("OAUTH OIDC client credentials (KIP-1139 keys) connect: produce+consume", roundTrip(kip1139(), "oidc-kip1139"));
    ok("OAUTH OIDC over HTTPS, JAAS ssl.truststore.* (PEM): produce+consume", roundTrip(oidcHttps(), "oidc-https"));
    fails("OAUTH OIDC wrong client secret: no token", javax.security.auth.login.LoginException.class,
        produceOnly(oidc("connect", "wrong")));
    fails("OAUTH OIDC limited: produce denied", TopicAuthorizationException.class, produceOnly(oidc("limited", "limited-secret")));
    fails("OAUTH unsecured token refused", SaslAuthenticationException.class, () -> {
      Properties p = sasl("KAFKA_SECURE_OAUTH", "SASL_PLAINTEXT", "OAUTHBEARER", "connect", null);
      return produceOnly(p).run();
    });

    System.out.printf("%d passed, %d failed%s%n", passed, failed.size(), failed.isEmpty() ? "" : ": " + failed);
    System.exit(failed.isEmpty() ? 0 : 1);
  }
}
