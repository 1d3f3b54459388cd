//! One integration-test binary for the listener: real servers on 127.0.0.1 port 0, real HTTP.
#![allow(clippy::unwrap_used)] // a test binary: a failed unwrap is a failed test

mod debugger;
mod end_to_end;
mod evidence;
mod export;
mod export_progress;
mod facet_counts;
mod forward_replay;
mod forward_rules;
mod limits;
mod live;
mod receiving;
mod replays;
mod retention;
mod search;
mod signed_is_taken;
mod store;
mod support;
mod test_mode;
mod tunnel;
