//! Integer fields read the way JSON Schema counts integers: `3`, `3.0` and `3e0` are all the
//! integer 3, so a body the OpenAPI document calls valid is one the server accepts. serde alone
//! refuses `3.0` for an `i64`. A number with a fraction, or outside the type's range, is still
//! an error, and so is a float beyond ±2^53: past that a float no longer names one integer
//! (serde_json also hands over integer literals too large for 64 bits as floats, so
//! `-9223372036854775809` must not round to `i64::MIN`).

use serde::de::{self, Deserializer, Visitor};
use serde::Deserialize;
use std::fmt;

struct IntegerVisitor<T>(std::marker::PhantomData<T>);

impl<T> Visitor<'_> for IntegerVisitor<T>
where
    T: TryFrom<i64> + TryFrom<u64>,
{
    type Value = T;

    fn expecting(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str("an integer")
    }

    fn visit_i64<E: de::Error>(self, value: i64) -> Result<T, E> {
        T::try_from(value).map_err(|_| E::custom(format!("{value} is out of range")))
    }

    fn visit_u64<E: de::Error>(self, value: u64) -> Result<T, E> {
        T::try_from(value).map_err(|_| E::custom(format!("{value} is out of range")))
    }

    fn visit_f64<E: de::Error>(self, value: f64) -> Result<T, E> {
        const TWO_POW_53: f64 = 9_007_199_254_740_992.0;
        if !value.is_finite() || value.fract() != 0.0 {
            return Err(E::custom(format!("{value} is not an integer")));
        }
        if !(-TWO_POW_53..=TWO_POW_53).contains(&value) {
            return Err(E::custom(format!("{value} is out of range")));
        }
        // Exact: an integral f64 within ±2^53 is one i64.
        self.visit_i64(value as i64)
    }
}

/// `#[serde(deserialize_with = "partner_api::integer::exact")]` for an integer field.
pub fn exact<'de, D, T>(deserializer: D) -> Result<T, D::Error>
where
    D: Deserializer<'de>,
    T: TryFrom<i64> + TryFrom<u64>,
{
    deserializer.deserialize_any(IntegerVisitor(std::marker::PhantomData))
}

/// The same for an optional integer field (`null` or absent is `None`; pair it with
/// `#[serde(default)]`).
pub fn optional<'de, D, T>(deserializer: D) -> Result<Option<T>, D::Error>
where
    D: Deserializer<'de>,
    T: TryFrom<i64> + TryFrom<u64>,
{
    struct Wrapper<T>(T);
    impl<'de, T: TryFrom<i64> + TryFrom<u64>> serde::Deserialize<'de> for Wrapper<T> {
        fn deserialize<D: Deserializer<'de>>(deserializer: D) -> Result<Self, D::Error> {
            exact(deserializer).map(Wrapper)
        }
    }
    Ok(Option::<Wrapper<T>>::deserialize(deserializer)?.map(|w| w.0))
}

#[cfg(test)]
mod tests {
    #[derive(Debug, serde::Deserialize)]
    struct Counts {
        #[serde(deserialize_with = "super::exact")]
        seconds: u64,
        #[serde(default, deserialize_with = "super::optional")]
        limit: Option<i64>,
    }

    fn parse(json: &str) -> Result<Counts, serde_json::Error> {
        serde_json::from_str(json)
    }

    #[test]
    fn integral_numbers_in_any_spelling_are_integers() {
        let counts = parse(r#"{"seconds": 169.0, "limit": -3e0}"#).unwrap();
        assert_eq!((counts.seconds, counts.limit), (169, Some(-3)));
        let counts = parse(r#"{"seconds": 18446744073709551615, "limit": null}"#).unwrap();
        assert_eq!((counts.seconds, counts.limit), (u64::MAX, None));
        assert_eq!(parse(r#"{"seconds": 1}"#).unwrap().limit, None);
    }

    #[test]
    fn fractions_negatives_and_overflow_are_refused() {
        assert!(parse(r#"{"seconds": 1.5}"#).is_err());
        assert!(parse(r#"{"seconds": -1}"#).is_err());
        assert!(parse(r#"{"seconds": -1.0}"#).is_err());
        assert!(parse(r#"{"seconds": 1e30}"#).is_err());
        assert!(parse(r#"{"seconds": "1"}"#).is_err());
        assert!(parse(r#"{"seconds": 1, "limit": 9.3e18}"#).is_err());
        assert!(parse(r#"{"seconds": 1, "limit": -9223372036854775809}"#).is_err());
        let exact = parse(r#"{"seconds": 1, "limit": -9223372036854775808}"#).unwrap();
        assert_eq!(exact.limit, Some(i64::MIN));
    }
}
