//! The test mode: answer with a chosen status, delay or failure rate instead of the verdict's, so
//! a user can watch the service's retries (500 on every first attempt, a hang past the sender's
//! 30 s timeout...). The capture is committed before any delay, so a sender that gives up still
//! leaves its attempt in the store.

use rand::Rng;
use serde::{Deserialize, Serialize};
use std::time::Duration;

#[derive(Debug, Clone, Default, PartialEq, Serialize, Deserialize)]
#[serde(rename_all = "camelCase", default)]
pub struct TestMode {
    /// Answer every request on the path with this status (unless a failure rule below applies).
    pub status: Option<u16>,
    /// Hold every answer back this long.
    #[serde(with = "optional_millis")]
    pub delay: Option<Duration>,
    /// Answer `failure_status` to this fraction (0.0–1.0) of requests, at random.
    pub fail_rate: f64,
    /// Answer `failure_status` to the first N attempts of each notification.
    pub fail_first_attempts: u32,
    /// The status of a failure; 500 when unset.
    pub failure_status: Option<u16>,
}

/// What the test mode decided for one request.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct TestAnswer {
    pub status: Option<u16>,
    pub delay: Option<Duration>,
}

impl TestMode {
    pub fn is_active(&self) -> bool {
        self.status.is_some()
            || self.delay.is_some()
            || self.fail_rate > 0.0
            || self.fail_first_attempts > 0
    }

    /// Checks the values a person typed; the message says what to change.
    pub fn validate(&self) -> crate::Result<()> {
        let bad_status = |s: u16| !(100..=999).contains(&s);
        if self.status.is_some_and(bad_status) || self.failure_status.is_some_and(bad_status) {
            return Err(crate::Error::InvalidInput(
                "a test-mode status must be between 100 and 999".into(),
            ));
        }
        if !(0.0..=1.0).contains(&self.fail_rate) {
            return Err(crate::Error::InvalidInput(
                "the failure rate must be between 0 and 1".into(),
            ));
        }
        Ok(())
    }

    /// The answer for the `attempt`-th delivery of a notification (1-based).
    pub fn answer(&self, attempt: u32, rng: &mut impl Rng) -> TestAnswer {
        let failure = self.failure_status.unwrap_or(500);
        let status = if attempt <= self.fail_first_attempts
            || (self.fail_rate > 0.0 && rng.random_bool(self.fail_rate.clamp(0.0, 1.0)))
        {
            Some(failure)
        } else {
            self.status
        };
        TestAnswer {
            status,
            delay: self.delay,
        }
    }
}

mod optional_millis {
    use serde::{Deserialize, Deserializer, Serializer};
    use std::time::Duration;

    pub fn serialize<S: Serializer>(value: &Option<Duration>, s: S) -> Result<S::Ok, S::Error> {
        match value {
            Some(d) => s.serialize_u64(u64::try_from(d.as_millis()).unwrap_or(u64::MAX)),
            None => s.serialize_none(),
        }
    }

    pub fn deserialize<'de, D: Deserializer<'de>>(d: D) -> Result<Option<Duration>, D::Error> {
        Ok(Option::<u64>::deserialize(d)?.map(Duration::from_millis))
    }
}
