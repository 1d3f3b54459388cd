//! Runs the second, independent implementation of the service on its own, to point the app or
//! `partner` at by hand (a look at the screens against a service that is not our sandbox):
//! `cargo run -p partner-testkit --example other_service -- minimal|extra|demanding|no-default-sorts`
//! prints the base URL
//! and the client's credentials, then serves until it is interrupted.
use partner_testkit::other_service::{Dialect, OtherService};

#[tokio::main]
async fn main() {
    let dialect = match std::env::args().nth(1).as_deref() {
        None | Some("minimal") => Dialect::minimal(),
        Some("extra") => Dialect::extra(),
        Some("demanding") => Dialect::demanding(),
        Some("no-default-sorts") => Dialect::refusing_default_sorts(),
        Some(other) => {
            eprintln!("other_service: the dialect is minimal, extra, demanding or no-default-sorts, not {other:?}");
            std::process::exit(2);
        }
    };
    let service = OtherService::start(dialect).await;
    println!("base URL: {}", service.base_url());
    println!("client id: {}", service.client_id());
    println!("client secret: {}", service.client_secret().expose());
    let _ = tokio::signal::ctrl_c().await;
    service.stop().await;
}
