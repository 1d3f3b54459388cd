//! Failed logins, counted per address: past [`ALLOWED`] in [`WINDOW`], an address is refused
//! (429) until its window ends, whatever token it presents. A member's token is 256 random bits
//! and cannot be guessed; the limit keeps a scanner from filling the log and the database's
//! load with attempts, and tells a console with a revoked token to stop.

use std::collections::HashMap;
use std::net::IpAddr;
use std::sync::Mutex;
use std::time::{Duration, Instant};

/// Failed logins an address may make in a window.
pub const ALLOWED: u32 = 10;
/// The window.
pub const WINDOW: Duration = Duration::from_secs(60);
/// Addresses remembered at most (the oldest windows are forgotten first).
const REMEMBERED: usize = 10_000;

#[derive(Debug, Default)]
pub struct FailedLogins {
    by_address: Mutex<HashMap<IpAddr, (u32, Instant)>>,
}

impl FailedLogins {
    /// `Some(seconds to wait)` when `address` is over the limit now.
    pub fn refused(&self, address: IpAddr) -> Option<u64> {
        let now = Instant::now();
        let map = self.lock();
        let (count, since) = map.get(&address)?;
        let left = WINDOW.checked_sub(now.duration_since(*since))?;
        (*count >= ALLOWED).then(|| left.as_secs().max(1))
    }

    /// Counts one failure from `address`.
    pub fn failed(&self, address: IpAddr) {
        let now = Instant::now();
        let mut map = self.lock();
        if map.len() >= REMEMBERED {
            map.retain(|_, (_, since)| now.duration_since(*since) < WINDOW);
        }
        let entry = map.entry(address).or_insert((0, now));
        if now.duration_since(entry.1) >= WINDOW {
            *entry = (0, now);
        }
        entry.0 = entry.0.saturating_add(1);
    }

    fn lock(&self) -> std::sync::MutexGuard<'_, HashMap<IpAddr, (u32, Instant)>> {
        self.by_address
            .lock()
            .unwrap_or_else(|poisoned| poisoned.into_inner())
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn an_address_is_refused_after_the_allowed_failures_and_others_are_not() {
        let logins = FailedLogins::default();
        let (a, b): (IpAddr, IpAddr) = ("10.0.0.1".parse().unwrap(), "10.0.0.2".parse().unwrap());
        for _ in 0..ALLOWED - 1 {
            logins.failed(a);
        }
        assert_eq!(logins.refused(a), None);
        logins.failed(a);
        assert!(logins.refused(a).is_some_and(|s| (1..=60).contains(&s)));
        assert_eq!(logins.refused(b), None);
    }
}
