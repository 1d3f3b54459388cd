//! A throwaway PostgreSQL for the end-to-end tests of the team workspace: starts one with
//! [`Postgres::start`] (a new cluster in a temporary folder, on a free port, run as Debian's
//! `postgres` user when we are root), creates database `workspace`, prints
//! `database: postgres://…/workspace`, and keeps it until its standard input closes or it is
//! interrupted; then stops it and removes the folder.
//!
//! Why an example rather than shell in tests/e2e: initdb's and pg_ctl's quirks (root, the
//! newest of Debian's versions, the socket folder, waiting for the start) are already handled
//! once in partner-testkit, which the server's own tests use; the e2e reuses that.
//! `cargo run -p partner-testkit --example throwaway_postgres` to try it by hand.
use partner_testkit::postgres::Postgres;
use std::io::Read;

fn main() {
    let mut pg = match Postgres::start() {
        Ok(pg) => pg,
        Err(error) => {
            eprintln!("throwaway_postgres: PostgreSQL did not start: {error}");
            std::process::exit(1);
        }
    };
    let url = match pg.create_database("workspace") {
        Ok(url) => url,
        Err(error) => {
            eprintln!("throwaway_postgres: {error}\n{}", pg.log());
            std::process::exit(1);
        }
    };
    println!("database: {url}");
    // Until the e2e closes our standard input (or ends, which closes it). The e2e closes it
    // rather than sending a signal: a signal would end this process without stopping the
    // cluster's server, which runs on its own (pg_ctl), nor removing its folder.
    let mut rest = Vec::new();
    let _ = std::io::stdin().read_to_end(&mut rest);
    pg.stop();
}
