//! Members' personal tokens: 32 random bytes, shown once, kept as their SHA-256.
//!
//! Why a hash and a lookup by it: the database never holds a usable token (a dump of it, or a
//! read-only breach, logs nobody in), and finding a member by the digest of what was presented
//! compares nothing secret byte by byte: the time a lookup takes depends on the digest, which an
//! attacker cannot steer towards a real token's. The token is long and random, so a plain
//! SHA-256 is enough (no slow password hash: there is no password to guess).
//!
//! The `pcw_` prefix makes a leaked token recognisable to secret scanners and to people.

use base64::engine::general_purpose::URL_SAFE_NO_PAD;
use base64::Engine as _;
use rand::RngCore as _;
use sha2::{Digest as _, Sha256};
use zeroize::Zeroizing;

/// The prefix of every member token.
pub const PREFIX: &str = "pcw_";

/// A member's token as issued: printed once, never stored or logged (its `Debug` hides it).
pub struct MemberToken(Zeroizing<String>);

impl MemberToken {
    /// A new random token.
    pub fn generate() -> Self {
        let mut bytes = Zeroizing::new([0u8; 32]);
        rand::rng().fill_bytes(bytes.as_mut());
        Self(Zeroizing::new(format!(
            "{PREFIX}{}",
            URL_SAFE_NO_PAD.encode(bytes.as_ref())
        )))
    }

    /// The token, to print once to whoever created it.
    pub fn expose(&self) -> &str {
        &self.0
    }

    /// What the database keeps.
    pub fn digest(&self) -> [u8; 32] {
        digest(&self.0)
    }
}

impl std::fmt::Debug for MemberToken {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.write_str("MemberToken(<hidden>)")
    }
}

/// The SHA-256 of a presented token (surrounding blanks ignored).
pub fn digest(token: &str) -> [u8; 32] {
    Sha256::digest(token.trim().as_bytes()).into()
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn tokens_are_random_prefixed_and_hidden_from_debug() {
        let (a, b) = (MemberToken::generate(), MemberToken::generate());
        assert_ne!(a.expose(), b.expose());
        assert!(a.expose().starts_with(PREFIX) && a.expose().len() == PREFIX.len() + 43);
        assert_eq!(a.digest(), digest(&format!(" {}\n", a.expose())));
        assert!(!format!("{a:?}").contains(&a.expose()[4..]));
    }
}
