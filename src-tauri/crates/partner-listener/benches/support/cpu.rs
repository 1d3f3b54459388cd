//! CPU time per thread, read from `/proc/self/task` (Linux), shared by the benches.
//!
//! On a 2-core machine the listener's rate depends on how the CPU is split between the load
//! generator, the runtime's workers and the store's threads, so the benches print CPU per
//! capture by thread beside the rates.

use std::collections::BTreeMap;

/// CPU seconds (user + system) per thread name, summed over threads of the same name.
pub fn thread_cpu() -> BTreeMap<String, f64> {
    let mut by_name = BTreeMap::new();
    let Ok(tasks) = std::fs::read_dir("/proc/self/task") else {
        return by_name;
    };
    for task in tasks.flatten() {
        let Ok(stat) = std::fs::read_to_string(task.path().join("stat")) else {
            continue;
        };
        // `pid (comm) state ...`: the name may hold spaces, so split at the last ')'.
        let (Some(open), Some(close)) = (stat.find('('), stat.rfind(')')) else {
            continue;
        };
        let name = stat[open + 1..close].to_string();
        let fields: Vec<&str> = stat[close + 2..].split_whitespace().collect();
        // utime and stime are fields 14 and 15 of the line, 12 and 13 after the name.
        let ticks = |i: usize| {
            fields
                .get(i)
                .and_then(|v| v.parse::<f64>().ok())
                .unwrap_or(0.0)
        };
        *by_name.entry(name).or_insert(0.0) += (ticks(11) + ticks(12)) / 100.0;
    }
    by_name
}

/// CPU seconds spent per thread name between two readings.
pub fn spent(
    before: &BTreeMap<String, f64>,
    after: &BTreeMap<String, f64>,
) -> BTreeMap<String, f64> {
    after
        .iter()
        .map(|(name, seconds)| {
            (
                name.clone(),
                seconds - before.get(name).copied().unwrap_or(0.0),
            )
        })
        .filter(|(_, seconds)| *seconds > 0.0)
        .collect()
}
