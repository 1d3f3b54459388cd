//! The notification signature: Base64 of HMAC-SHA256 over the exact body bytes.
//!
//! Sender and receiver both come here. Verification works on the raw bytes that arrived, never
//! on re-serialised JSON (public sample receivers broke themselves that way), and compares in
//! constant time through `hmac`'s `verify_slice`.

use base64::engine::general_purpose::STANDARD;
use base64::Engine;
use hmac::{Hmac, Mac};
use sha2::Sha256;

pub const SIGNATURE_HEADER: &str = "Svc-Signature";
pub const SUBSCRIPTION_HEADER: &str = "Svc-SubscriptionId";
pub const ENVIRONMENT_HEADER: &str = "Svc-Environment";
/// The spec: always `prod` for partner applications.
pub const ENVIRONMENT: &str = "prod";

type HmacSha256 = Hmac<Sha256>;

fn mac(key: &[u8], body: &[u8]) -> HmacSha256 {
    let mut mac = HmacSha256::new_from_slice(key).expect("HMAC accepts keys of any length");
    mac.update(body);
    mac
}

/// The raw 32-byte HMAC-SHA256 of `body` under `key`.
pub fn digest(key: &[u8], body: &[u8]) -> [u8; 32] {
    mac(key, body).finalize().into_bytes().into()
}

/// The `Svc-Signature` header value for `body`.
pub fn sign(key: &[u8], body: &[u8]) -> String {
    STANDARD.encode(digest(key, body))
}

/// Whether `signature` (the header's Base64 text) is the signature of `body` under `key`.
/// Surrounding spaces are ignored; text that is not Base64 of 32 bytes never verifies.
pub fn verify(key: &[u8], body: &[u8], signature: &str) -> bool {
    let Ok(received) = STANDARD.decode(signature.trim()) else {
        return false;
    };
    mac(key, body).verify_slice(&received).is_ok()
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn matches_a_known_vector() {
        // RFC 4231 test case 2: key "Jefe", data "what do ya want for nothing?".
        let expected = "5bdcc146bf60754e6a042426089575c75a003f089d2739839dec58b964ec3843";
        let hex: String = digest(b"Jefe", b"what do ya want for nothing?")
            .iter()
            .map(|b| format!("{b:02x}"))
            .collect();
        assert_eq!(hex, expected);
    }

    #[test]
    fn verifies_exact_bytes_only() {
        let key = b"Abcdefghijklmnopqrstuvwxyz0123!@";
        let body = br#"{"eventId":"e1","eventType":"created"}"#;
        let signature = sign(key, body);
        assert!(verify(key, body, &signature));
        assert!(verify(key, body, &format!(" {signature} ")));
        assert!(!verify(
            key,
            br#"{"eventId": "e1","eventType":"created"}"#,
            &signature
        ));
        assert!(!verify(key, &[body.as_slice(), b"\n"].concat(), &signature));
        assert!(!verify(b"another key", body, &signature));
        assert!(!verify(key, body, "not base64!"));
        assert!(!verify(key, body, ""));
        assert!(!verify(key, body, &signature[..20]));
    }
}
