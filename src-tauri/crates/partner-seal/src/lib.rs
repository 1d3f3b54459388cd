//! Data at rest: the one key a console's local data is encrypted with ([`DataKey`]) and the
//! sealing of single records with it ([`seal`], [`open`]).
//!
//! Why two mechanisms under one key: the SQLite files (the capture store, the embedded
//! sandbox's data) are SQLCipher databases keyed with [`DataKey::sqlcipher_key`], which also
//! encrypts their WAL; what is not SQLite (the listener's acknowledgement journal, the audit
//! log's lines) is sealed record by record, so each record stays independently appendable,
//! readable and checkable, as the plain formats were.
//!
//! Why AES-256-GCM-SIV: every record gets a random 96-bit nonce (no counter to keep across
//! processes or crashes, and two writers of one audit log need no coordination), and GCM-SIV
//! stays safe if two random nonces ever meet (they would reveal only that two records were
//! equal), where plain GCM would leak its authentication key. It runs on the AES and
//! carry-less multiply instructions every desktop CPU has (x86-64's AES-NI/PCLMULQDQ, ARMv8's
//! crypto extensions), found at run time: measured here at 4.1 µs to seal a 2.6 KB capture
//! record against XChaCha20-Poly1305's 7.3 µs, in the listener's acknowledgement path where
//! the issue allows encryption 15 % of a capture's CPU (BENCHMARKS.md). The RustCrypto crate
//! is well kept; its 0.12 computes POLYVAL over several blocks at once, 1.24 µs a seal of that
//! record against 0.11's 2.0 (release builds, 200,000 seals, 2026-12-07), the same format (a
//! record sealed by 0.11 opens: tested below). A sealed record is
//! `VERSION || nonce || ciphertext || tag`; the caller's `context` (a file kind, a record's
//! position) is authenticated as associated data, so a record moved to another file or place
//! does not open.
//!
//! Why no key derivation from a passphrase: the key is 32 random bytes kept in the OS's secret
//! store (or a key file, or an environment variable; `partner_local::data_key` decides), so a
//! raw key is as strong as a key can be and opening costs microseconds.

use aes_gcm_siv::aead::{Aead, KeyInit, Payload};
use aes_gcm_siv::{Aes256GcmSiv, Nonce};
use rand::RngCore as _;
use sha2::{Digest as _, Sha256};
use zeroize::{Zeroize as _, Zeroizing};

/// The first byte of every sealed record: the format's version.
pub const VERSION: u8 = 1;
const NONCE_LEN: usize = 12;
const TAG_LEN: usize = 16;
/// Bytes a sealed record holds beyond its plaintext.
pub const OVERHEAD: usize = 1 + NONCE_LEN + TAG_LEN;

/// Why a key or a record could not be used. Never holds key material.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
pub enum SealError {
    #[error("a data key is 64 hexadecimal digits (32 bytes); this one is not")]
    KeyText,
    #[error("the record is not sealed in a format this version knows")]
    Format,
    #[error("the record does not open with this key: another key sealed it, or it was changed")]
    Open,
}

/// 32 random bytes that encrypt a console's data at rest. Its `Debug` shows only its
/// fingerprint, and its bytes are wiped when it is dropped.
#[derive(Clone, PartialEq, Eq)]
pub struct DataKey([u8; 32]);

impl DataKey {
    /// A new key from the OS's randomness.
    pub fn generate() -> Self {
        let mut bytes = [0u8; 32];
        rand::rng().fill_bytes(&mut bytes);
        DataKey(bytes)
    }

    /// Reads a key written by [`DataKey::to_hex`] (surrounding whitespace ignored).
    pub fn from_hex(text: &str) -> Result<Self, SealError> {
        let text = text.trim();
        if text.len() != 64 {
            return Err(SealError::KeyText);
        }
        let mut bytes = [0u8; 32];
        for (i, pair) in text.as_bytes().chunks(2).enumerate() {
            let digit = |b: u8| (b as char).to_digit(16);
            match (digit(pair[0]), digit(pair[1])) {
                (Some(high), Some(low)) => bytes[i] = (high * 16 + low) as u8,
                _ => {
                    bytes.zeroize();
                    return Err(SealError::KeyText);
                }
            }
        }
        Ok(DataKey(bytes))
    }

    /// The key as 64 lower-case hexadecimal digits, for the secret store or a key file.
    pub fn to_hex(&self) -> Zeroizing<String> {
        let mut text = Zeroizing::new(String::with_capacity(64));
        for byte in self.0 {
            text.push(char::from_digit(u32::from(byte >> 4), 16).unwrap_or('0'));
            text.push(char::from_digit(u32::from(byte & 0xf), 16).unwrap_or('0'));
        }
        text
    }

    /// The value of SQLCipher's `PRAGMA key` for this key as a raw key (`x'…'`, no passphrase
    /// derivation).
    pub fn sqlcipher_key(&self) -> Zeroizing<String> {
        Zeroizing::new(format!("\"x'{}'\"", self.to_hex().as_str()))
    }

    /// A short name of the key that reveals nothing of it (the first 8 hexadecimal digits of a
    /// SHA-256 over a fixed label and the key): shown to say which key a file needs.
    pub fn fingerprint(&self) -> String {
        let mut hash = Sha256::new();
        hash.update(b"partner-console data key fingerprint\0");
        hash.update(self.0);
        hash.finalize()[..4]
            .iter()
            .map(|b| format!("{b:02x}"))
            .collect()
    }

    fn cipher(&self) -> Aes256GcmSiv {
        Aes256GcmSiv::new(&self.0.into())
    }
}

impl Drop for DataKey {
    fn drop(&mut self) {
        self.0.zeroize();
    }
}

impl std::fmt::Debug for DataKey {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        write!(f, "DataKey({})", self.fingerprint())
    }
}

/// Seals `plaintext` under `key`, binding it to `context` (which must be given again to open).
pub fn seal(key: &DataKey, context: &[u8], plaintext: &[u8]) -> Vec<u8> {
    let mut nonce = [0u8; NONCE_LEN];
    rand::rng().fill_bytes(&mut nonce);
    let sealed = key
        .cipher()
        .encrypt(
            &Nonce::from(nonce),
            Payload {
                msg: plaintext,
                aad: context,
            },
        )
        // Encryption fails only for a plaintext beyond 64 GiB, which no record is.
        .unwrap_or_default();
    let mut out = Vec::with_capacity(OVERHEAD + plaintext.len());
    out.push(VERSION);
    out.extend_from_slice(&nonce);
    out.extend_from_slice(&sealed);
    out
}

/// Opens a record [`seal`] made with the same `key` and `context`.
pub fn open(key: &DataKey, context: &[u8], sealed: &[u8]) -> Result<Vec<u8>, SealError> {
    if sealed.len() < OVERHEAD || sealed[0] != VERSION {
        return Err(SealError::Format);
    }
    let (nonce, body) = sealed[1..].split_at(NONCE_LEN);
    let nonce = Nonce::try_from(nonce).map_err(|_| SealError::Format)?;
    key.cipher()
        .decrypt(
            &nonce,
            Payload {
                msg: body,
                aad: context,
            },
        )
        .map_err(|_| SealError::Open)
}

/// The plaintext length of a sealed record of `sealed_len` bytes.
pub fn plaintext_len(sealed_len: usize) -> Option<usize> {
    sealed_len.checked_sub(OVERHEAD)
}

#[cfg(test)]
mod tests {
    use super::*;

    /// A record sealed by an earlier build (aes-gcm-siv 0.11), byte for byte: journals and
    /// audit logs written before the upgrade open.
    #[test]
    fn a_record_sealed_by_the_earlier_crate_opens() {
        let key = DataKey(std::array::from_fn(|i| i as u8));
        let sealed = "01a0a1a2a3a4a5a6a7a8a9aaabe269f27a59277a8ae0d7b04ef5e91ed49288785956aed43e\
                      c490e3c5f744089dccc469eaba8112a037f15d809aa48b63493afdd2";
        let sealed: Vec<u8> = (0..sealed.len())
            .step_by(2)
            .map(|at| u8::from_str_radix(&sealed[at..at + 2], 16).unwrap())
            .collect();
        assert_eq!(
            open(&key, b"journal", &sealed).unwrap(),
            b"a capture sealed by aes-gcm-siv 0.11"
        );
        assert_eq!(open(&key, b"audit", &sealed), Err(SealError::Open));
    }

    #[test]
    fn a_sealed_record_opens_with_its_key_and_context_only() {
        let key = DataKey::generate();
        let sealed = seal(&key, b"journal", b"a capture");
        assert_eq!(sealed.len(), OVERHEAD + 9);
        assert_eq!(open(&key, b"journal", &sealed).unwrap(), b"a capture");
        assert_eq!(open(&key, b"audit", &sealed), Err(SealError::Open));
        assert_eq!(
            open(&DataKey::generate(), b"journal", &sealed),
            Err(SealError::Open)
        );
        let mut changed = sealed.clone();
        *changed.last_mut().unwrap() ^= 1;
        assert_eq!(open(&key, b"journal", &changed), Err(SealError::Open));
        assert_eq!(
            open(&key, b"journal", &sealed[..10]),
            Err(SealError::Format)
        );
        let mut other_version = sealed;
        other_version[0] = 9;
        assert_eq!(
            open(&key, b"journal", &other_version),
            Err(SealError::Format)
        );
    }

    #[test]
    fn two_seals_of_one_record_differ() {
        let key = DataKey::generate();
        assert_ne!(seal(&key, b"c", b"same"), seal(&key, b"c", b"same"));
    }

    #[test]
    fn a_key_round_trips_through_hex_and_never_shows_in_debug() {
        let key = DataKey::generate();
        let hex = key.to_hex();
        assert_eq!(hex.len(), 64);
        assert_eq!(
            DataKey::from_hex(&format!(" {}\n", hex.as_str())).unwrap(),
            key
        );
        let shown = format!("{key:?}");
        assert!(!shown.contains(&hex[..16]), "{shown}");
        assert_eq!(shown, format!("DataKey({})", key.fingerprint()));
        assert_eq!(
            key.sqlcipher_key().as_str(),
            format!("\"x'{}'\"", hex.as_str())
        );
        assert_eq!(DataKey::from_hex("abc"), Err(SealError::KeyText));
        assert_eq!(DataKey::from_hex(&"g".repeat(64)), Err(SealError::KeyText));
    }
}
