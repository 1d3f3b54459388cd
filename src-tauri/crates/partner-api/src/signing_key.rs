//! The webhook signing-key rule of the spec, and a generator of keys that meet it.
//!
//! The spec gives the rule as `^(?=.*[a-z])(?=.*[A-Z])(?=.*[0-9])(?=.*[!@#$^&*])([A-Za-z0-9!@#$^&*]){32,64}$`.
//! It is checked here by hand rather than with a regex because Rust's regex engines have no
//! look-ahead, and because a person typing a key wants every unmet part of the rule named, not
//! one yes or no. No problem ever quotes the key.

use crate::secret::Secret;
use rand::seq::SliceRandom;
use rand::{Rng, RngCore, TryRngCore};
use std::fmt;

/// The spec's complexity rule as a regular expression (look-aheads: for the OpenAPI document,
/// whose validators have them; [`check`] is the same rule by hand).
pub const PATTERN: &str =
    r"^(?=.*[a-z])(?=.*[A-Z])(?=.*[0-9])(?=.*[!@#$^&*])([A-Za-z0-9!@#$^&*]){32,64}$";
pub const MIN_LEN: usize = 32;
pub const MAX_LEN: usize = 64;
/// The special characters the rule allows (and requires one of).
pub const SPECIALS: &str = "!@#$^&*";
/// Length of generated keys: well inside the rule, 48 characters of ~6.2 bits each.
pub const GENERATED_LEN: usize = 48;

/// One unmet part of the rule.
#[derive(Debug, Clone, Copy, PartialEq, Eq, serde::Serialize)]
#[serde(tag = "problem", rename_all = "camelCase")]
pub enum SigningKeyProblem {
    TooShort {
        length: usize,
    },
    TooLong {
        length: usize,
    },
    /// A character outside letters, digits and `!@#$^&*`, at this 1-based position.
    ForbiddenCharacter {
        position: usize,
    },
    NoLowercase,
    NoUppercase,
    NoDigit,
    NoSpecial,
}

impl fmt::Display for SigningKeyProblem {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self {
            SigningKeyProblem::TooShort { length } => {
                write!(f, "is {length} characters long; it needs at least {MIN_LEN}")
            }
            SigningKeyProblem::TooLong { length } => {
                write!(f, "is {length} characters long; it may have at most {MAX_LEN}")
            }
            SigningKeyProblem::ForbiddenCharacter { position } => write!(
                f,
                "has a character that is not allowed at position {position} (allowed: letters, digits and {SPECIALS})"
            ),
            SigningKeyProblem::NoLowercase => f.write_str("needs a lowercase letter"),
            SigningKeyProblem::NoUppercase => f.write_str("needs an uppercase letter"),
            SigningKeyProblem::NoDigit => f.write_str("needs a digit"),
            SigningKeyProblem::NoSpecial => write!(f, "needs one of {SPECIALS}"),
        }
    }
}

/// Every unmet part of the rule, in a fixed order.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct SigningKeyProblems(pub Vec<SigningKeyProblem>);

impl fmt::Display for SigningKeyProblems {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str("the signing key ")?;
        for (i, problem) in self.0.iter().enumerate() {
            if i > 0 {
                f.write_str("; ")?;
            }
            write!(f, "{problem}")?;
        }
        Ok(())
    }
}

impl std::error::Error for SigningKeyProblems {}

/// All the problems of a candidate key; empty when it meets the rule.
pub fn problems(key: &str) -> Vec<SigningKeyProblem> {
    let mut found = Vec::new();
    let length = key.chars().count();
    if length < MIN_LEN {
        found.push(SigningKeyProblem::TooShort { length });
    } else if length > MAX_LEN {
        found.push(SigningKeyProblem::TooLong { length });
    }
    if let Some(index) = key.chars().position(|c| !is_allowed(c)) {
        found.push(SigningKeyProblem::ForbiddenCharacter {
            position: index + 1,
        });
    }
    if !key.chars().any(|c| c.is_ascii_lowercase()) {
        found.push(SigningKeyProblem::NoLowercase);
    }
    if !key.chars().any(|c| c.is_ascii_uppercase()) {
        found.push(SigningKeyProblem::NoUppercase);
    }
    if !key.chars().any(|c| c.is_ascii_digit()) {
        found.push(SigningKeyProblem::NoDigit);
    }
    if !key.chars().any(|c| SPECIALS.contains(c)) {
        found.push(SigningKeyProblem::NoSpecial);
    }
    found
}

/// Accepts a key that meets the rule; otherwise says every way it does not.
pub fn check(key: &str) -> Result<(), SigningKeyProblems> {
    let found = problems(key);
    if found.is_empty() {
        Ok(())
    } else {
        Err(SigningKeyProblems(found))
    }
}

fn is_allowed(c: char) -> bool {
    c.is_ascii_alphanumeric() || SPECIALS.contains(c)
}

const LOWER: &[u8] = b"abcdefghijklmnopqrstuvwxyz";
const UPPER: &[u8] = b"ABCDEFGHIJKLMNOPQRSTUVWXYZ";
const DIGITS: &[u8] = b"0123456789";

/// A fresh compliant key from the operating system's CSPRNG.
pub fn generate() -> Secret {
    generate_with(&mut rand::rngs::OsRng.unwrap_err())
}

/// A compliant key from the given random source: one character of each required class, the
/// rest from the whole alphabet, then shuffled so the classes sit nowhere in particular.
pub fn generate_with<R: RngCore + ?Sized>(rng: &mut R) -> Secret {
    let alphabet: Vec<u8> = [LOWER, UPPER, DIGITS, SPECIALS.as_bytes()].concat();
    let mut chars: Vec<u8> = Vec::with_capacity(GENERATED_LEN);
    for class in [LOWER, UPPER, DIGITS, SPECIALS.as_bytes()] {
        chars.push(class[rng.random_range(0..class.len())]);
    }
    while chars.len() < GENERATED_LEN {
        chars.push(alphabet[rng.random_range(0..alphabet.len())]);
    }
    chars.shuffle(rng);
    Secret::new(String::from_utf8(chars).expect("the alphabet is ASCII"))
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn accepts_the_rule_exactly() {
        let good = "Abcdefghijklmnopqrstuvwxyz0123!@";
        assert_eq!(good.len(), 32);
        assert!(check(good).is_ok());
        assert!(check(&format!("{good}{}", "x".repeat(32))).is_ok());
        assert!(check(&format!("{good}{}", "x".repeat(33))).is_err());
        for special in SPECIALS.chars() {
            let key = format!("Abcdefghijklmnopqrstuvwxyz01234{special}");
            assert!(check(&key).is_ok(), "{special} is allowed");
        }
    }

    #[test]
    fn names_every_problem_and_never_the_key() {
        let key = "short";
        let err = check(key).unwrap_err();
        assert_eq!(
            err.0,
            vec![
                SigningKeyProblem::TooShort { length: 5 },
                SigningKeyProblem::NoUppercase,
                SigningKeyProblem::NoDigit,
                SigningKeyProblem::NoSpecial,
            ]
        );
        assert!(!err.to_string().contains(key));
        let with_percent = "Abcdefghijklmnopqrstuvwxyz0123!%";
        assert_eq!(
            problems(with_percent),
            vec![SigningKeyProblem::ForbiddenCharacter { position: 32 }]
        );
        assert_eq!(problems("Abcdefghijklmnopqrstuvwxyz0123!é").len(), 1);
    }

    #[test]
    fn generated_keys_meet_the_rule_and_differ() {
        let keys: Vec<String> = (0..200).map(|_| generate().expose().to_string()).collect();
        for key in &keys {
            assert!(check(key).is_ok(), "generated key breaks the rule");
            assert_eq!(key.len(), GENERATED_LEN);
        }
        let unique: std::collections::HashSet<_> = keys.iter().collect();
        assert_eq!(unique.len(), keys.len());
    }
}
