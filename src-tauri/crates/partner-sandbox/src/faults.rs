//! Faults on demand: the sandbox misbehaves as a real service sometimes does, when asked
//! (`POST /sandbox/v1/faults`), so a partner's client (and the console) can be seen waiting out
//! a 429, retrying a 503, timing out or surviving a dropped connection, against a service that
//! otherwise answers in microseconds.
//!
//! A fault names an endpoint of the partner API (or any), what it does (a status with an
//! optional `Retry-After`, a latency, a dropped connection) and for how many calls: the next N,
//! or a share of the calls until N have been faulted. Faults are checked in the order they were added; the first
//! that matches and bites is applied (and counted). They live in memory only: a restart, or
//! `DELETE /sandbox/v1/faults`, ends them all. The controls under `/sandbox/v1/` are never
//! faulted, so a fault can always be cleared.

use serde::{Deserialize, Serialize};
use std::sync::Mutex;
use std::time::Duration;
use utoipa::ToSchema;

/// The most faults at once.
pub const MAX_FAULTS: usize = 100;
/// The longest latency a fault may add: one minute.
pub const MAX_FAULT_LATENCY_MS: u64 = 60_000;
/// The most calls one fault may count.
pub const MAX_FAULT_COUNT: u32 = 10_000;

/// Which calls of the partner API a fault applies to.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize, ToSchema)]
#[serde(rename_all = "camelCase")]
pub enum FaultEndpoint {
    /// Every call of the partner API.
    Any,
    /// `POST /oauth2/v1/token`.
    Token,
    /// `POST /oauth2/v1/token/introspection`.
    Introspection,
    /// `POST /oauth2/v1/token/revocation`.
    Revocation,
    /// `/partner/v2/products` and everything under it.
    Products,
    /// `/partner/v2/transactions` and everything under it (events and responses too).
    Transactions,
}

impl FaultEndpoint {
    fn matches(self, path: &str) -> bool {
        let path = path.trim_end_matches('/');
        let under = |prefix: &str| {
            path == prefix
                || path
                    .strip_prefix(prefix)
                    .is_some_and(|rest| rest.starts_with('/'))
        };
        match self {
            FaultEndpoint::Any => under("/partner/v2") || under("/oauth2/v1"),
            FaultEndpoint::Token => path == "/oauth2/v1/token",
            FaultEndpoint::Introspection => path == "/oauth2/v1/token/introspection",
            FaultEndpoint::Revocation => path == "/oauth2/v1/token/revocation",
            FaultEndpoint::Products => under("/partner/v2/products"),
            FaultEndpoint::Transactions => under("/partner/v2/transactions"),
        }
    }
}

/// A fault as asked for: one effect at least (a status, a latency, or a drop; a latency may
/// come before a status or a drop), for `count` calls, each matching call faulted (or a
/// `share` of them).
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize, ToSchema)]
#[serde(rename_all = "camelCase", deny_unknown_fields)]
pub struct NewFault {
    pub endpoint: FaultEndpoint,
    /// The status to answer with instead of handling the call (400 to 599), with the
    /// service's error body.
    #[serde(default)]
    #[schema(minimum = 400, maximum = 599)]
    pub status: Option<u16>,
    /// `Retry-After` in seconds, with a status of 429 or 503.
    #[serde(default)]
    #[schema(maximum = 3600)]
    pub retry_after_seconds: Option<u64>,
    /// A wait before the call is handled (or faulted), in milliseconds (at most 60,000).
    #[serde(default)]
    #[schema(maximum = 60_000)]
    pub latency_ms: Option<u64>,
    /// Close the connection without an answer.
    #[serde(default)]
    pub drop: bool,
    /// How many calls it faults (1 to 10,000; 1 unless given), then it is gone.
    #[serde(default = "one")]
    #[schema(minimum = 1, maximum = 10_000, default = 1)]
    pub count: u32,
    /// The share of the matching calls it faults until `count` have been (more than 0, at most
    /// 1; every call unless given).
    #[serde(default)]
    #[schema(exclusive_minimum = 0.0, maximum = 1.0)]
    pub share: Option<f64>,
}

fn one() -> u32 {
    1
}

/// A fault in force.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize, ToSchema)]
#[serde(rename_all = "camelCase")]
pub struct Fault {
    pub id: u64,
    /// As it was asked for.
    pub fault: NewFault,
    /// Calls it has faulted so far.
    pub applied: u64,
}

impl FaultEndpoint {
    /// Every endpoint, in the order help texts list them.
    pub const ALL: [FaultEndpoint; 6] = [
        FaultEndpoint::Any,
        FaultEndpoint::Token,
        FaultEndpoint::Introspection,
        FaultEndpoint::Revocation,
        FaultEndpoint::Products,
        FaultEndpoint::Transactions,
    ];

    /// The endpoint called `name`, or the names there are.
    pub fn from_name(name: &str) -> Result<Self, String> {
        Self::ALL
            .into_iter()
            .find(|e| e.name() == name.trim())
            .ok_or_else(|| {
                let names: Vec<&str> = Self::ALL.iter().map(|e| e.name()).collect();
                format!(
                    "no endpoint is called `{}`: one of {}",
                    name.trim(),
                    names.join(", ")
                )
            })
    }

    /// Its name in requests and answers: `products`, `token`, …
    pub fn name(self) -> &'static str {
        match self {
            FaultEndpoint::Any => "any",
            FaultEndpoint::Token => "token",
            FaultEndpoint::Introspection => "introspection",
            FaultEndpoint::Revocation => "revocation",
            FaultEndpoint::Products => "products",
            FaultEndpoint::Transactions => "transactions",
        }
    }
}

impl Fault {
    /// The fault in one line, as the CLI and the app show it:
    /// `products → 429 (Retry-After 1 s) · next 2 calls · applied 0`.
    pub fn describe(&self) -> String {
        let f = &self.fault;
        let mut effects = Vec::new();
        if let Some(ms) = f.latency_ms.filter(|ms| *ms > 0) {
            effects.push(format!("wait {ms} ms"));
        }
        if let Some(status) = f.status {
            match f.retry_after_seconds {
                Some(after) => effects.push(format!("{status} (Retry-After {after} s)")),
                None => effects.push(status.to_string()),
            }
        }
        if f.drop {
            effects.push("drop the connection".into());
        }
        let extent = match (f.count, f.share.filter(|share| *share < 1.0)) {
            (1, None) => "next call".to_string(),
            (count, None) => format!("next {count} calls"),
            (count, Some(share)) => format!("{:.0}% of calls, {count} at most", share * 100.0),
        };
        format!(
            "{} → {} · {extent} · applied {}",
            f.endpoint.name(),
            effects.join(", then "),
            self.applied
        )
    }
}

/// What a call gets from the fault that bit it.
#[derive(Debug, Clone, PartialEq)]
pub struct Applied {
    pub id: u64,
    pub latency: Option<Duration>,
    pub status: Option<u16>,
    pub retry_after_seconds: Option<u64>,
    pub drop: bool,
}

impl NewFault {
    /// The request's problems in words, or `None` when it can be added.
    pub fn problem(&self) -> Option<String> {
        if let Some(status) = self.status {
            if !(400..=599).contains(&status) {
                return Some("status must be between 400 and 599".into());
            }
        }
        if self.retry_after_seconds.is_some() && self.status.is_none() {
            return Some("retryAfterSeconds goes with a status".into());
        }
        if self.retry_after_seconds.is_some_and(|s| s > 3600) {
            return Some("retryAfterSeconds must be at most 3600".into());
        }
        if self.latency_ms.is_some_and(|ms| ms > MAX_FAULT_LATENCY_MS) {
            return Some(format!("latencyMs must be at most {MAX_FAULT_LATENCY_MS}"));
        }
        if self.drop && self.status.is_some() {
            return Some("a fault either answers with a status or drops the connection".into());
        }
        if self.status.is_none() && !self.drop && self.latency_ms.unwrap_or(0) == 0 {
            return Some("give a status, a latencyMs or drop: true".into());
        }
        if self.count == 0 || self.count > MAX_FAULT_COUNT {
            return Some(format!("count must be between 1 and {MAX_FAULT_COUNT}"));
        }
        match self.share {
            Some(share) if !(share > 0.0 && share <= 1.0) => {
                Some("share must be more than 0 and at most 1".into())
            }
            _ => None,
        }
    }
}

/// The faults in force.
#[derive(Debug, Default)]
pub struct Faults {
    inner: Mutex<FaultList>,
}

#[derive(Debug, Default)]
struct FaultList {
    faults: Vec<Fault>,
    next_id: u64,
}

impl Faults {
    fn list(&self) -> std::sync::MutexGuard<'_, FaultList> {
        // Every change is one push, one removal or one counter: a poisoned lock is still whole.
        self.inner.lock().unwrap_or_else(|e| e.into_inner())
    }

    /// Adds a fault, after [`NewFault::problem`] found none.
    pub fn add(&self, fault: NewFault) -> Result<Fault, String> {
        if let Some(problem) = fault.problem() {
            return Err(problem);
        }
        let mut list = self.list();
        if list.faults.len() >= MAX_FAULTS {
            return Err(format!(
                "at most {MAX_FAULTS} faults at once: clear them first"
            ));
        }
        list.next_id += 1;
        let added = Fault {
            id: list.next_id,
            fault,
            applied: 0,
        };
        list.faults.push(added.clone());
        Ok(added)
    }

    /// The faults in force, oldest first.
    pub fn all(&self) -> Vec<Fault> {
        self.list().faults.clone()
    }

    /// Ends every fault; returns how many there were.
    pub fn clear(&self) -> usize {
        std::mem::take(&mut self.list().faults).len()
    }

    /// The fault a call to `path` gets, if one bites: counted, and a counted one that has run
    /// out is gone.
    pub fn take(&self, path: &str) -> Option<Applied> {
        let mut list = self.list();
        if list.faults.is_empty() {
            return None;
        }
        let index = list.faults.iter().position(|f| {
            f.fault.endpoint.matches(path)
                && f.fault
                    .share
                    .is_none_or(|share| rand::random::<f64>() < share)
        })?;
        let fault = &mut list.faults[index];
        fault.applied += 1;
        let applied = Applied {
            id: fault.id,
            latency: fault.fault.latency_ms.map(Duration::from_millis),
            status: fault.fault.status,
            retry_after_seconds: fault.fault.retry_after_seconds,
            drop: fault.fault.drop,
        };
        if fault.applied >= u64::from(fault.fault.count) {
            list.faults.remove(index);
        }
        Some(applied)
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn fault(endpoint: FaultEndpoint, status: u16, count: u32) -> NewFault {
        NewFault {
            endpoint,
            status: Some(status),
            retry_after_seconds: None,
            latency_ms: None,
            drop: false,
            count,
            share: None,
        }
    }

    #[test]
    fn a_counted_fault_bites_its_endpoint_n_times_then_is_gone() {
        let faults = Faults::default();
        faults.add(fault(FaultEndpoint::Products, 503, 2)).unwrap();
        assert_eq!(faults.take("/partner/v2/transactions"), None);
        assert_eq!(faults.take("/partner/v2/productsx"), None);
        assert_eq!(
            faults.take("/partner/v2/products/p1").unwrap().status,
            Some(503)
        );
        assert_eq!(
            faults.take("/partner/v2/products").unwrap().status,
            Some(503)
        );
        assert_eq!(faults.take("/partner/v2/products"), None);
        assert!(faults.all().is_empty());
    }

    #[test]
    fn the_first_added_that_matches_bites_and_any_covers_oauth_and_the_api() {
        let faults = Faults::default();
        faults.add(fault(FaultEndpoint::Token, 500, 1)).unwrap();
        faults.add(fault(FaultEndpoint::Any, 429, 3)).unwrap();
        assert_eq!(faults.take("/oauth2/v1/token").unwrap().status, Some(500));
        assert_eq!(faults.take("/oauth2/v1/token").unwrap().status, Some(429));
        assert_eq!(
            faults
                .take("/partner/v2/transactions/t/events")
                .unwrap()
                .status,
            Some(429)
        );
        assert_eq!(
            faults.take("/sandbox/v1/faults"),
            None,
            "the controls never"
        );
        assert_eq!(faults.all()[0].applied, 2);
        assert_eq!(faults.clear(), 1);
    }

    #[test]
    fn a_fault_is_described_in_one_line() {
        let faults = Faults::default();
        let mut slow_429 = fault(FaultEndpoint::Products, 429, 2);
        slow_429.retry_after_seconds = Some(1);
        slow_429.latency_ms = Some(300);
        let added = faults.add(slow_429).unwrap();
        assert_eq!(
            added.describe(),
            "products → wait 300 ms, then 429 (Retry-After 1 s) · next 2 calls · applied 0"
        );
        let mut dropped = fault(FaultEndpoint::Any, 500, 10);
        dropped.status = None;
        dropped.drop = true;
        dropped.share = Some(0.25);
        assert_eq!(
            faults.add(dropped).unwrap().describe(),
            "any → drop the connection · 25% of calls, 10 at most · applied 0"
        );
    }

    #[test]
    fn a_share_of_one_bites_every_call_until_its_count() {
        let faults = Faults::default();
        let mut every = fault(FaultEndpoint::Transactions, 500, 20);
        every.share = Some(1.0);
        faults.add(every).unwrap();
        for _ in 0..20 {
            assert!(faults.take("/partner/v2/transactions").is_some());
        }
        assert!(faults.take("/partner/v2/transactions").is_none());
        assert!(faults.all().is_empty());
    }

    #[test]
    fn each_bad_request_says_what_is_wrong() {
        let good = fault(FaultEndpoint::Any, 429, 1);
        let cases = [
            (
                NewFault {
                    status: Some(200),
                    ..good.clone()
                },
                "between 400 and 599",
            ),
            (
                NewFault {
                    status: None,
                    retry_after_seconds: Some(1),
                    latency_ms: Some(5),
                    ..good.clone()
                },
                "goes with a status",
            ),
            (
                NewFault {
                    drop: true,
                    ..good.clone()
                },
                "either answers",
            ),
            (
                NewFault {
                    status: None,
                    ..good.clone()
                },
                "give a status",
            ),
            (
                NewFault {
                    count: 0,
                    ..good.clone()
                },
                "count must be",
            ),
            (
                NewFault {
                    share: Some(1.5),
                    ..good.clone()
                },
                "share must be",
            ),
            (
                NewFault {
                    share: Some(0.0),
                    ..good.clone()
                },
                "share must be",
            ),
            (
                NewFault {
                    latency_ms: Some(60_001),
                    ..good.clone()
                },
                "latencyMs",
            ),
        ];
        for (bad, says) in cases {
            let problem = bad.problem().unwrap_or_default();
            assert!(problem.contains(says), "{bad:?}: {problem}");
        }
        assert_eq!(good.problem(), None);
    }
}
