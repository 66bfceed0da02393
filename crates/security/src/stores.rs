//! Trust and key stores as Java's TLS settings name them (`ssl.truststore.*`, `ssl.keystore.*`,
//! `ssl.key.password`; Kafka's `DefaultSslEngineFactory`): JKS, PKCS12 and PEM files, and the
//! inline PEM values `ssl.truststore.certificates`, `ssl.keystore.certificate.chain` and
//! `ssl.keystore.key` (KIP-651). Everything is read into DER certificates and an unencrypted
//! PKCS#8 key, which both librdkafka (as PEM) and rustls take.

use std::path::Path;

use base64::Engine;
use rustls_pki_types::pem::PemObject;
use rustls_pki_types::{CertificateDer, PrivateKeyDer, PrivatePkcs8KeyDer};

use crate::SecurityError;

/// A store's format: Java's `ssl.truststore.type` / `ssl.keystore.type` (default `JKS`).
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum StoreType {
    /// Java KeyStore (magic `0xFEEDFEED`).
    Jks,
    /// PKCS #12.
    Pkcs12,
    /// PEM text: certificates, and for a key store one private key (encrypted with
    /// `ssl.key.password` when it is an `ENCRYPTED PRIVATE KEY`).
    Pem,
}

impl StoreType {
    /// Parses a Java store type name (case-insensitive): `JKS`, `PKCS12`, `PEM`. Others are an
    /// error naming `key` (e.g. `BCFKS`, which needs a Java security provider).
    pub fn parse(key: &str, value: &str) -> Result<Self, SecurityError> {
        match value.trim().to_ascii_uppercase().as_str() {
            "JKS" => Ok(StoreType::Jks),
            "PKCS12" | "P12" | "PFX" => Ok(StoreType::Pkcs12),
            "PEM" => Ok(StoreType::Pem),
            other => Err(SecurityError::new(
                key,
                format!(
                    "store type {other} is not supported (Tributary reads JKS, PKCS12 and PEM)"
                ),
            )),
        }
    }
}

/// A private key with its certificate chain (leaf first): what a key store holds.
pub struct Identity {
    /// The certificate chain, leaf first.
    pub chain: Vec<CertificateDer<'static>>,
    /// The private key as unencrypted PKCS #8 DER.
    pub key: PrivatePkcs8KeyDer<'static>,
}

impl std::fmt::Debug for Identity {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("Identity")
            .field("chain", &self.chain.len())
            .field("key", &"[hidden]")
            .finish()
    }
}

impl Clone for Identity {
    fn clone(&self) -> Self {
        Identity {
            chain: self.chain.clone(),
            key: self.key.clone_key(),
        }
    }
}

impl Identity {
    /// The chain as PEM text (librdkafka's `ssl.certificate.pem`).
    pub fn chain_pem(&self) -> String {
        certificates_pem(&self.chain)
    }

    /// The key as unencrypted PKCS #8 PEM text (librdkafka's `ssl.key.pem`).
    pub fn key_pem(&self) -> String {
        pem_block("PRIVATE KEY", self.key.secret_pkcs8_der())
    }

    /// The key as rustls takes it.
    pub fn private_key(&self) -> PrivateKeyDer<'static> {
        PrivateKeyDer::Pkcs8(self.key.clone_key())
    }
}

/// Certificates as concatenated PEM blocks.
pub fn certificates_pem(certs: &[CertificateDer<'_>]) -> String {
    certs
        .iter()
        .map(|c| pem_block("CERTIFICATE", c.as_ref()))
        .collect()
}

fn pem_block(label: &str, der: &[u8]) -> String {
    let b64 = base64::engine::general_purpose::STANDARD.encode(der);
    let mut out = format!("-----BEGIN {label}-----\n");
    for line in b64.as_bytes().chunks(64) {
        out.push_str(std::str::from_utf8(line).unwrap_or_default());
        out.push('\n');
    }
    out.push_str(&format!("-----END {label}-----\n"));
    out
}

fn read_file(key: &str, path: &str) -> Result<Vec<u8>, SecurityError> {
    std::fs::read(Path::new(path))
        .map_err(|e| SecurityError::new(key, format!("cannot read {path}: {e}")))
}

/// Reads the trusted certificates of a trust store file (`ssl.truststore.location`).
/// `password_key`/`password` are `ssl.truststore.password` (JKS and PKCS12; a JKS store without
/// a password is read without checking its integrity, as Java does).
pub fn load_truststore(
    location_key: &str,
    location: &str,
    store_type: StoreType,
    password: Option<&str>,
) -> Result<Vec<CertificateDer<'static>>, SecurityError> {
    let bytes = read_file(location_key, location)?;
    let certs = match store_type {
        StoreType::Pem => pem_certificates(location_key, &bytes)?,
        StoreType::Pkcs12 => pkcs12_contents(location_key, &bytes, password.unwrap_or(""))?.1,
        StoreType::Jks => jks_contents(location_key, &bytes, password, None)?.1,
    };
    if certs.is_empty() {
        return Err(SecurityError::new(
            location_key,
            format!("{location} holds no certificate"),
        ));
    }
    Ok(certs)
}

/// Reads the private key and certificate chain of a key store file (`ssl.keystore.location`).
/// `store_password` is `ssl.keystore.password`, `key_password` is `ssl.key.password` (for JKS
/// and PKCS12 the key password defaults to the store's, as in Java; for PEM it decrypts an
/// encrypted PKCS #8 key).
pub fn load_keystore(
    location_key: &str,
    location: &str,
    store_type: StoreType,
    store_password: Option<&str>,
    key_password: Option<&str>,
) -> Result<Identity, SecurityError> {
    let bytes = read_file(location_key, location)?;
    let identity = match store_type {
        StoreType::Pem => {
            let chain = pem_certificates(location_key, &bytes)?;
            let key = pem_private_key(location_key, &bytes, key_password)?;
            Some(Identity { chain, key })
        }
        StoreType::Pkcs12 => pkcs12_contents(location_key, &bytes, store_password.unwrap_or(""))?.0,
        StoreType::Jks => {
            jks_contents(
                location_key,
                &bytes,
                store_password,
                Some(key_password.or(store_password).unwrap_or("")),
            )?
            .0
        }
    };
    let identity = identity.ok_or_else(|| {
        SecurityError::new(
            location_key,
            format!("{location} holds no private key entry"),
        )
    })?;
    if identity.chain.is_empty() {
        return Err(SecurityError::new(
            location_key,
            format!("{location}: the private key has no certificate"),
        ));
    }
    Ok(identity)
}

/// The certificates of PEM text (`ssl.truststore.certificates`,
/// `ssl.keystore.certificate.chain`, or a PEM store file). `key` names the setting in errors.
pub fn pem_certificates(
    key: &str,
    pem: &[u8],
) -> Result<Vec<CertificateDer<'static>>, SecurityError> {
    CertificateDer::pem_slice_iter(pem)
        .collect::<Result<Vec<_>, _>>()
        .map_err(|e| SecurityError::new(key, format!("invalid PEM certificate: {e}")))
}

/// The private key of PEM text (`ssl.keystore.key` or a PEM key store): an unencrypted
/// `PRIVATE KEY` (PKCS #8), or an `ENCRYPTED PRIVATE KEY` decrypted with `password`
/// (`ssl.key.password`). Java accepts only PKCS #8 here; so does this.
pub fn pem_private_key(
    key: &str,
    pem: &[u8],
    password: Option<&str>,
) -> Result<PrivatePkcs8KeyDer<'static>, SecurityError> {
    let text = std::str::from_utf8(pem)
        .map_err(|_| SecurityError::new(key, "the PEM text is not UTF-8"))?;
    if text.contains("-----BEGIN ENCRYPTED PRIVATE KEY-----") {
        let password = password.ok_or_else(|| {
            SecurityError::new(
                key,
                "the private key is encrypted but ssl.key.password is not set",
            )
        })?;
        let (_, doc) =
            pkcs8::SecretDocument::from_pem(extract_block(text, "ENCRYPTED PRIVATE KEY")?)
                .map_err(|e| {
                    SecurityError::new(key, format!("invalid encrypted private key: {e}"))
                })?;
        if let Some(plain) = decrypt_pkcs12_pbe(key, doc.as_bytes(), password)? {
            return checked_private_key(key, plain);
        }
        let encrypted = pkcs8::EncryptedPrivateKeyInfo::try_from(doc.as_bytes())
            .map_err(|e| SecurityError::new(key, format!("invalid encrypted private key: {e}")))?;
        let decrypted = encrypted.decrypt(password).map_err(|e| {
            SecurityError::new(
                key,
                format!("cannot decrypt the private key with ssl.key.password: {e}"),
            )
        })?;
        return checked_private_key(key, decrypted.as_bytes().to_vec());
    }
    if text.contains("-----BEGIN RSA PRIVATE KEY-----")
        || text.contains("-----BEGIN EC PRIVATE KEY-----")
    {
        return Err(SecurityError::new(
            key,
            "the private key is not in PKCS #8 format (Java and Tributary need \
             -----BEGIN PRIVATE KEY----- or -----BEGIN ENCRYPTED PRIVATE KEY-----; convert with \
             `openssl pkcs8 -topk8`)",
        ));
    }
    PrivatePkcs8KeyDer::from_pem_slice(pem)
        .map_err(|e| SecurityError::new(key, format!("no PKCS #8 private key found: {e}")))
}

/// A decrypted key, once it reads as a PKCS #8 `PrivateKeyInfo`: a wrong password gives bytes
/// whose CBC padding happens to look right about once in 256 tries, which must not pass for a
/// key. Errors: the bytes are not a `PrivateKeyInfo` (a wrong `ssl.key.password`).
fn checked_private_key(
    key: &str,
    plain: Vec<u8>,
) -> Result<PrivatePkcs8KeyDer<'static>, SecurityError> {
    if pkcs8::PrivateKeyInfo::try_from(plain.as_slice()).is_err() {
        return Err(SecurityError::new(
            key,
            "cannot decrypt the private key with ssl.key.password (wrong password?)",
        ));
    }
    Ok(PrivatePkcs8KeyDer::from(plain))
}

/// Decrypts an `EncryptedPrivateKeyInfo` protected with PKCS #12 PBE
/// (`pbeWithSHAAnd3-KeyTripleDES-CBC`, OID 1.2.840.113549.1.12.1.3: what `openssl pkcs8 -topk8
/// -v1 PBE-SHA1-3DES` writes, and the scheme Java's PEM key loader reads). `Ok(None)` for other
/// schemes (PBES2 is decrypted by the `pkcs8` crate).
fn decrypt_pkcs12_pbe(
    key: &str,
    der_bytes: &[u8],
    password: &str,
) -> Result<Option<Vec<u8>>, SecurityError> {
    use cbc::cipher::{block_padding::Pkcs7, BlockModeDecrypt, KeyIvInit};
    use der::Decode;
    use pkcs12::kdf::{derive_key_utf8, Pkcs12KeyType};
    use pkcs12::pbe_params::{EncryptedPrivateKeyInfo, Pkcs12PbeParams};
    const PBE_SHA1_3DES: der::oid::ObjectIdentifier =
        der::oid::ObjectIdentifier::new_unwrap("1.2.840.113549.1.12.1.3");
    let bad =
        |what: String| SecurityError::new(key, format!("invalid encrypted private key: {what}"));
    let Ok(info) = EncryptedPrivateKeyInfo::from_der(der_bytes) else {
        return Ok(None);
    };
    if info.encryption_algorithm.oid != PBE_SHA1_3DES {
        return Ok(None);
    }
    let params: Pkcs12PbeParams = info
        .encryption_algorithm
        .parameters
        .as_ref()
        .ok_or_else(|| bad("no PBE parameters".into()))?
        .decode_as()
        .map_err(|e: der::Error| bad(e.to_string()))?;
    if !(1..=10_000_000).contains(&params.iterations) {
        return Err(bad(format!("{} iterations", params.iterations)));
    }
    let salt = params.salt.as_bytes();
    let k = derive_key_utf8::<sha1::Sha1>(
        password,
        salt,
        Pkcs12KeyType::EncryptionKey,
        params.iterations,
        24,
    )
    .map_err(|e| bad(e.to_string()))?;
    let iv = derive_key_utf8::<sha1::Sha1>(password, salt, Pkcs12KeyType::Iv, params.iterations, 8)
        .map_err(|e| bad(e.to_string()))?;
    let cipher = cbc::Decryptor::<des::TdesEde3>::new_from_slices(&k, &iv)
        .map_err(|e| bad(e.to_string()))?;
    let plain = cipher
        .decrypt_padded_vec::<Pkcs7>(info.encrypted_data.as_bytes())
        .map_err(|_| {
            SecurityError::new(
                key,
                "cannot decrypt the private key with ssl.key.password (wrong password?)",
            )
        })?;
    Ok(Some(plain))
}

fn extract_block<'a>(text: &'a str, label: &str) -> Result<&'a str, SecurityError> {
    let begin = format!("-----BEGIN {label}-----");
    let end = format!("-----END {label}-----");
    let start = text.find(&begin);
    let stop = text.find(&end);
    match (start, stop) {
        (Some(s), Some(e)) if e > s => Ok(&text[s..e + end.len()]),
        _ => Err(SecurityError::new(label, format!("no {label} block"))),
    }
}

type StoreContents = (Option<Identity>, Vec<CertificateDer<'static>>);

fn pkcs12_contents(
    key: &str,
    bytes: &[u8],
    password: &str,
) -> Result<StoreContents, SecurityError> {
    use p12_keystore::{KeyStore, KeyStoreEntry, Pkcs12ImportPolicy};
    let store =
        KeyStore::from_pkcs12(bytes, password, Pkcs12ImportPolicy::Relaxed).map_err(|e| {
            SecurityError::new(
                key,
                format!("cannot read the PKCS12 store (wrong password or not PKCS12?): {e}"),
            )
        })?;
    let mut identity = None;
    let mut certs = Vec::new();
    let mut entries: Vec<_> = store.entries().collect();
    entries.sort_by(|a, b| a.0.cmp(b.0));
    for (_, entry) in entries {
        match entry {
            KeyStoreEntry::PrivateKeyChain(chain) if identity.is_none() => {
                identity = Some(Identity {
                    chain: chain
                        .certs()
                        .iter()
                        .map(|c| CertificateDer::from(c.as_der().to_vec()))
                        .collect(),
                    key: PrivatePkcs8KeyDer::from(chain.key().as_der().to_vec()),
                });
            }
            KeyStoreEntry::Certificate(c) => certs.push(CertificateDer::from(c.as_der().to_vec())),
            _ => {}
        }
    }
    Ok((identity, certs))
}

fn jks_contents(
    key: &str,
    bytes: &[u8],
    store_password: Option<&str>,
    key_password: Option<&str>,
) -> Result<StoreContents, SecurityError> {
    if bytes.len() >= 4 && bytes[..4] != [0xFE, 0xED, 0xFE, 0xED] {
        if bytes[0] == 0x30 {
            // Java 9+ reads a PKCS12 file named as JKS too (keystore.type.compat).
            return pkcs12_contents(key, bytes, store_password.unwrap_or(""));
        }
        return Err(SecurityError::new(
            key,
            "not a JKS store (wrong ssl.*.type?)",
        ));
    }
    let mut store = jks::KeyStore::new();
    store
        .load(bytes, store_password.unwrap_or("").as_bytes())
        .map_err(|e| {
            SecurityError::new(
                key,
                format!("cannot read the JKS store (wrong password?): {e}"),
            )
        })?;
    let mut identity = None;
    let mut certs = Vec::new();
    let mut aliases = store.aliases();
    aliases.sort();
    for alias in aliases {
        if store.is_private_key_entry(&alias) {
            if identity.is_some() {
                continue;
            }
            let Some(password) = key_password else {
                continue;
            };
            let entry = store
                .get_private_key_entry(&alias, password.as_bytes())
                .map_err(|e| {
                    SecurityError::new(
                        key,
                        format!("cannot decrypt key entry {alias} (wrong ssl.key.password?): {e}"),
                    )
                })?;
            identity = Some(Identity {
                chain: entry
                    .certificate_chain
                    .iter()
                    .map(|c| CertificateDer::from(c.content.clone()))
                    .collect(),
                key: PrivatePkcs8KeyDer::from(entry.private_key.clone()),
            });
        } else if store.is_trusted_certificate_entry(&alias) {
            if let Ok(entry) = store.get_trusted_certificate_entry(&alias) {
                certs.push(CertificateDer::from(entry.certificate.content.clone()));
            }
        }
    }
    Ok((identity, certs))
}

#[cfg(test)]
mod tests {
    use super::*;

    /// The stores `scripts/kafka-secure` makes (JKS, PKCS12, PEM with a PKCS #12 PBE key), and
    /// an OpenSSL default (PBES2) encrypted key made here; skipped without them.
    #[test]
    fn every_store_format_reads_the_same_identity() {
        let Ok(dir) = std::env::var("KAFKA_SECURE_DIR") else {
            eprintln!("skipped: KAFKA_SECURE_DIR is not set (scripts/test sets it)");
            return;
        };
        let p = |f: &str| format!("{dir}/{f}");
        let trust_jks = load_truststore(
            "t",
            &p("truststore.jks"),
            StoreType::Jks,
            Some("store-secret"),
        )
        .unwrap();
        let trust_p12 = load_truststore(
            "t",
            &p("truststore.p12"),
            StoreType::Pkcs12,
            Some("store-secret"),
        )
        .unwrap();
        let trust_pem = load_truststore("t", &p("ca.pem"), StoreType::Pem, None).unwrap();
        assert_eq!(trust_jks, trust_pem);
        assert_eq!(trust_p12, trust_pem);
        let jks = load_keystore(
            "k",
            &p("client.jks"),
            StoreType::Jks,
            Some("store-secret"),
            Some("key-secret"),
        )
        .unwrap();
        let p12 = load_keystore(
            "k",
            &p("client.p12"),
            StoreType::Pkcs12,
            Some("store-secret"),
            None,
        )
        .unwrap();
        let pem = load_keystore(
            "k",
            &p("client-keystore.pem"),
            StoreType::Pem,
            None,
            Some("key-secret"),
        )
        .unwrap();
        let plain =
            pem_private_key("k", &std::fs::read(p("client-key.pem")).unwrap(), None).unwrap();
        for id in [&jks, &p12, &pem] {
            assert_eq!(id.key.secret_pkcs8_der(), plain.secret_pkcs8_der());
            assert_eq!(id.chain[0], pem.chain[0]);
        }
        // Wrong passwords are errors naming the key.
        let e = load_keystore(
            "ssl.keystore.location",
            &p("client.jks"),
            StoreType::Jks,
            Some("x"),
            Some("y"),
        )
        .unwrap_err();
        assert_eq!(e.key, "ssl.keystore.location");
        // However the wrong password's garbage happens to end (its CBC padding looks right
        // about once in 256 tries), it is refused.
        let encrypted = std::fs::read(p("client-key-encrypted.pem")).unwrap();
        for i in 0..300 {
            let wrong = format!("wrong-{i}");
            assert!(
                pem_private_key("ssl.keystore.key", &encrypted, Some(&wrong)).is_err(),
                "password {wrong} accepted"
            );
        }
        // PBES2 (OpenSSL's default scheme).
        let out = std::env::temp_dir().join(format!("pbes2-{}.pem", std::process::id()));
        let ok = std::process::Command::new("openssl")
            .args([
                "pkcs8",
                "-topk8",
                "-in",
                &p("client-key.pem"),
                "-passout",
                "pass:pw2",
                "-out",
            ])
            .arg(&out)
            .status()
            .is_ok_and(|s| s.success());
        if ok {
            let key = pem_private_key("k", &std::fs::read(&out).unwrap(), Some("pw2")).unwrap();
            assert_eq!(key.secret_pkcs8_der(), plain.secret_pkcs8_der());
            std::fs::remove_file(&out).ok();
        }
    }
}
