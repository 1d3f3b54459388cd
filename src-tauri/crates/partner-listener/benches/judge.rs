//! What the listener must do for a notification before it can answer it, in CPU per
//! notification: judge it (read the subscription's keys, decode the signature header, HMAC-SHA256
//! over the exact 2 KiB body, compare in constant time, and read the notification's fields the
//! capture is filed under), alone in one thread, no I/O.
//!
//! Why: the listener's acknowledgement target (BENCHMARKS.md, listener) is a fraction of what an
//! append-and-`fdatasync` server does on the same machine under the same load. On this 2-core
//! machine that floor is bound by CPU (the load generator shares the cores), so every microsecond
//! the listener spends per notification beyond the floor's lowers its rate in proportion, and
//! the verdict is decided before the answer (a bad signature is answered 401, not 200). This
//! bench measures that irreducible part, to set beside the floor's whole CPU per request.
//!
//! Run: `cargo bench -p partner-listener --bench judge` (env: JUDGE_COUNT notifications per run,
//! default 200,000; JUDGE_RUNS, default 5). Prints each run's CPU per notification and the median.

use chrono::Utc;
use partner_api::signature::{sign, verify};
use partner_listener::{judge, MemoryKeys, Verdict};

#[path = "support/cpu.rs"]
mod cpu;
#[path = "support/payload.rs"]
mod payload;
use payload::{body, env_number, random_event_id, BODY_SIZE};

const KEY: &str = "Abcdefghijklmnopqrstuvwxyz0123!@";
const SUB: &str = "sub-judge-bench";

fn main() {
    let count = env_number("JUDGE_COUNT", 200_000);
    let runs = env_number("JUDGE_RUNS", 5);
    let keys = MemoryKeys::new();
    keys.insert(SUB, KEY);
    // Distinct bodies, as the listener receives them (a few thousand, cycled: more would
    // measure the memory bus rather than the work).
    let signed: Vec<(Vec<u8>, String)> = (0..4096)
        .map(|_| {
            let body = body(&random_event_id());
            let signature = sign(KEY.as_bytes(), &body);
            (body, signature)
        })
        .collect();
    println!("{count} signed {BODY_SIZE}-byte notifications per run, {runs} runs, one thread");
    let now = Utc::now();
    let judged = measure(runs, count, || {
        signed
            .iter()
            .cycle()
            .take(count)
            .filter(|(body, signature)| {
                judge(Some(signature), Some(SUB), body, &keys, now).verdict == Verdict::Valid
            })
            .count()
    });
    let hmac_only = measure(runs, count, || {
        signed
            .iter()
            .cycle()
            .take(count)
            .filter(|(body, signature)| verify(KEY.as_bytes(), body, signature))
            .count()
    });
    for (what, micros) in [
        ("the whole judgement (keys, signature, fields)", judged),
        ("the signature alone (HMAC-SHA256, base64)", hmac_only),
    ] {
        println!(
            "{what}: median {:.2} µs of CPU per notification (runs: {})",
            micros[runs / 2],
            micros
                .iter()
                .map(|m| format!("{m:.2}"))
                .collect::<Vec<_>>()
                .join(", ")
        );
    }
}

/// CPU µs per notification of `runs` calls of `work` (each handling `count` notifications and
/// returning how many were valid: all must be), sorted.
fn measure(runs: usize, count: usize, work: impl Fn() -> usize) -> Vec<f64> {
    let mut micros: Vec<f64> = (0..runs)
        .map(|_| {
            let before = cpu::thread_cpu();
            let valid = work();
            let seconds: f64 = cpu::spent(&before, &cpu::thread_cpu()).values().sum();
            assert_eq!(valid, count, "every notification is valid");
            seconds * 1e6 / count as f64
        })
        .collect();
    micros.sort_by(f64::total_cmp);
    micros
}
