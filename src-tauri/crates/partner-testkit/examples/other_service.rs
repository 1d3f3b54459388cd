//! Runs the second, independent implementation of the service on its own, to point the app or
//! `partner` at by hand (a look at the screens against a service that is not our sandbox):
//! `cargo run -p partner-testkit --example other_service -- minimal|extra|demanding|no-default-sorts|without-subscription-ids`
//! prints the base URL
//! and the client's credentials, then serves until it is interrupted.
//!
//! A line `notify PRODUCT RESOURCE URL` on its standard input sends one signed notification of
//! that subscription to its URL, as the service would (in the `without-subscription-ids`
//! dialect the only place its id is said), and prints `notified: STATUS SUBSCRIPTION_ID` (or
//! `notify failed: WHY`): how the end-to-end tests make the service deliver.
use partner_testkit::other_service::{Dialect, OtherService};
use std::io::BufRead;

#[tokio::main]
async fn main() {
    let dialect = match std::env::args().nth(1).as_deref() {
        None | Some("minimal") => Dialect::minimal(),
        Some("extra") => Dialect::extra(),
        Some("demanding") => Dialect::demanding(),
        Some("no-default-sorts") => Dialect::refusing_default_sorts(),
        Some("without-subscription-ids") => Dialect::without_subscription_ids(),
        Some(other) => {
            eprintln!("other_service: the dialect is minimal, extra, demanding, no-default-sorts or without-subscription-ids, not {other:?}");
            std::process::exit(2);
        }
    };
    let service = OtherService::start(dialect).await;
    println!("base URL: {}", service.base_url());
    println!("client id: {}", service.client_id());
    println!("client secret: {}", service.client_secret().expose());

    // Standard input is read on its own thread (a blocking read); its end leaves the service
    // serving until it is interrupted.
    let (lines, mut commands) = tokio::sync::mpsc::unbounded_channel::<String>();
    std::thread::spawn(move || {
        for line in std::io::stdin().lock().lines() {
            let Ok(line) = line else { break };
            if lines.send(line).is_err() {
                break;
            }
        }
    });
    loop {
        tokio::select! {
            _ = tokio::signal::ctrl_c() => break,
            Some(line) = commands.recv() => {
                let words: Vec<&str> = line.split_whitespace().collect();
                match words.as_slice() {
                    ["notify", product, resource, url] => {
                        match service.notify(product, url, resource).await {
                            Ok(sent) => println!("notified: {} {}", sent.status, sent.subscription_id),
                            Err(why) => println!("notify failed: {why}"),
                        }
                    }
                    [] => {}
                    _ => println!("notify failed: the command is `notify PRODUCT RESOURCE URL`, not {line:?}"),
                }
            }
        }
    }
    service.stop().await;
}
