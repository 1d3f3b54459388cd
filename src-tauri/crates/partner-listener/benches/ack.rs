//! Captures per second and time to acknowledge, for signed 2 KiB notifications from concurrent
//! senders on loopback: the listener (verify, append to the store's journal and sync it, the
//! tables behind; broadcast)
//! beside a bare hyper server that reads the body and answers 200, driven by the same load
//! generator in the same run.
//!
//! A third server sits between the two: the bare server plus each body written to a file and
//! `fdatasync`ed in group commits before the 200 (`append_server`). It is the least any durable
//! server can do on this machine's disk, so it splits the listener's gap to the bare server in
//! two: what durability itself costs here, and what the listener's own work (verifying,
//! parsing, SQLite's pages, indexes and checkpoints) adds to it.
//!
//! A fourth, `verify`, is the append server plus the judgement the listener makes before any
//! answer (`partner_listener::judge`: the signature over the exact body, the notification's
//! fields), whose verdict decides the answer: the least a *verifying* durable listener can do
//! here. With the load generator on the same two cores, CPU decides the rate at 32 senders and
//! up, so the judgement's few microseconds show in the rate; `verify/append` says how close to
//! the append floor any listener that checks signatures can come on this machine, and
//! `FULL/verify` how much of that the listener's own work (the capture, the journal, the tables)
//! takes.
//!
//! Every server runs at several sender counts (default 32, 128, 256) so one run shows both
//! regimes: with few senders the durable rate is bounded by senders / fsync latency (group
//! commit can only batch the requests in flight), with many it is bounded by CPU. The default
//! counts stay below the listener's connection cap (512): at the cap, the rate measures how
//! the listener makes room for new connections more than how it handles requests (see
//! `src/connections.rs` and BENCHMARKS.md).
//!
//! Run: `cargo bench -p partner-listener --bench ack` (env: ACK_REQUESTS per run, default
//! 30,000; ACK_WARMUP, default 2,000; ACK_SENDERS=32,128,256; ACK_ROUNDS, default 3, the summary
//! giving each server's median round; ACK_ONLY=bare,append,verify,full,normal to run only some
//! servers, e.g. one under a profiler).
//!
//! `ACK_SERVE=bare|append|verify ACK_ADDR=127.0.0.1:7272` serves that one server on that address
//! until stopped, for an outside load generator (wrk) to measure it as it measures `partner
//! listen`: the anchors of the acknowledgement latency rounds in BENCHMARKS.md (`benches/wrk/`
//! runs them).
//!
//! This machine's speed drifts by a factor of two within minutes (the bare server alone has
//! ranged from 22,000 to 50,000 req/s), so the summary also gives each ratio as taken within
//! each round, where the two servers ran seconds apart, with its spread across rounds. Every
//! other round runs the servers in the opposite order.

use partner_api::signature::{sign, SIGNATURE_HEADER, SUBSCRIPTION_HEADER};
use partner_listener::outbound::describe_reqwest_error;
use partner_listener::{judge, Durability, Listener, ListenerConfig, MemoryKeys, Verdict};
use std::sync::Arc;
use std::time::{Duration, Instant};

/// The allocator `partner listen` (partner-cli) uses, so the bench measures what production runs;
/// the bare server and the load generator share it.
#[global_allocator]
static ALLOCATOR: mimalloc::MiMalloc = mimalloc::MiMalloc;

#[path = "support/cpu.rs"]
mod cpu;
#[path = "support/payload.rs"]
mod payload;
#[path = "support/store.rs"]
mod support_store;
use payload::{body, env_number, random_event_id, BODY_SIZE};
use support_store::fresh_store;

const SUB: &str = "sub-bench";
const KEY: &str = "Abcdefghijklmnopqrstuvwxyz0123!@";

struct Outcome {
    rate: f64,
    /// CPU seconds per thread name spent during the run (load generator and server together).
    cpu: std::collections::BTreeMap<String, f64>,
    p50: Duration,
    p99: Duration,
    ok: usize,
    total: usize,
    /// Requests not answered 2xx, by what went wrong.
    failures: std::collections::BTreeMap<String, usize>,
}

/// `senders` tasks share `total` pre-signed requests; each request's time to its answer is kept.
async fn load(url: &str, bodies: Arc<Vec<(Vec<u8>, String)>>, senders: usize) -> Outcome {
    let client = reqwest::Client::builder()
        .pool_max_idle_per_host(senders)
        .build()
        .expect("client");
    let next = Arc::new(std::sync::atomic::AtomicUsize::new(0));
    let cpu_before = cpu::thread_cpu();
    let started = Instant::now();
    let tasks: Vec<_> = (0..senders)
        .map(|_| {
            let client = client.clone();
            let url = url.to_string();
            let bodies = bodies.clone();
            let next = next.clone();
            tokio::spawn(async move {
                let mut latencies = Vec::new();
                let mut ok = 0;
                let mut failures = Vec::new();
                loop {
                    let i = next.fetch_add(1, std::sync::atomic::Ordering::Relaxed);
                    let Some((body, signature)) = bodies.get(i) else {
                        break;
                    };
                    let sent = Instant::now();
                    let response = client
                        .post(&url)
                        .header(SUBSCRIPTION_HEADER, SUB)
                        .header(SIGNATURE_HEADER, signature)
                        .header("content-type", "application/json")
                        .body(body.clone())
                        .send()
                        .await;
                    match response {
                        Ok(response) => {
                            if response.status().is_success() {
                                ok += 1;
                            } else {
                                failures.push(format!("status {}", response.status().as_u16()));
                            }
                            let _ = response.bytes().await;
                        }
                        Err(error) => failures.push(describe_reqwest_error(&error)),
                    }
                    latencies.push(sent.elapsed());
                }
                (latencies, ok, failures)
            })
        })
        .collect();
    let mut latencies = Vec::new();
    let mut ok = 0;
    let mut failures = std::collections::BTreeMap::new();
    for task in tasks {
        let (mut l, o, f) = task.await.expect("sender");
        latencies.append(&mut l);
        ok += o;
        for kind in f {
            *failures.entry(kind).or_insert(0) += 1;
        }
    }
    let elapsed = started.elapsed();
    let cpu = cpu::spent(&cpu_before, &cpu::thread_cpu());
    latencies.sort();
    let pick = |q: f64| latencies[((latencies.len() as f64 * q) as usize).min(latencies.len() - 1)];
    Outcome {
        // Acknowledged requests only: a request that failed is no capture.
        rate: ok as f64 / elapsed.as_secs_f64(),
        cpu,
        p50: pick(0.50),
        p99: pick(0.99),
        ok,
        total: latencies.len(),
        failures,
    }
}

/// A hyper HTTP/1 server on a loopback port that reads each request's body, hands it to `keep`
/// and answers 200 once `keep` is done. Returns the URL to post to.
async fn body_server<K, F>(addr: &str, keep: K) -> String
where
    K: Fn(hyper::HeaderMap, http_body_util::Collected<bytes::Bytes>) -> F
        + Clone
        + Send
        + Sync
        + 'static,
    F: std::future::Future<Output = bool> + Send + 'static,
{
    use http_body_util::{BodyExt, Full};
    let tcp = tokio::net::TcpListener::bind(addr).await.expect("bind");
    let addr = tcp.local_addr().expect("addr");
    tokio::spawn(async move {
        while let Ok((stream, _)) = tcp.accept().await {
            let _ = stream.set_nodelay(true);
            let keep = keep.clone();
            tokio::spawn(async move {
                let service = hyper::service::service_fn(
                    move |request: hyper::Request<hyper::body::Incoming>| {
                        let keep = keep.clone();
                        async move {
                            let (parts, body) = request.into_parts();
                            let kept = match body.collect().await {
                                Ok(body) => keep(parts.headers, body).await,
                                Err(_) => false,
                            };
                            let mut response = hyper::Response::new(Full::new(
                                bytes::Bytes::from_static(if kept { b"ok\n" } else { b"no\n" }),
                            ));
                            if !kept {
                                *response.status_mut() = hyper::StatusCode::UNAUTHORIZED;
                            }
                            Ok::<_, std::convert::Infallible>(response)
                        }
                    },
                );
                let _ = hyper::server::conn::http1::Builder::new()
                    .serve_connection(hyper_util::rt::TokioIo::new(stream), service)
                    .await;
            });
        }
    });
    format!("http://{addr}/webhooks")
}

/// The baseline: hyper's HTTP/1 server reading the body and answering 200, nothing else.
async fn bare_server(addr: &str) -> String {
    body_server(addr, |_headers, _body| async { true }).await
}

/// Writes `buf` at `offset`: `pwrite` on Unix (the floor as measured), `seek_write` on Windows.
fn write_at(file: &std::fs::File, buf: &[u8], offset: u64) {
    #[cfg(unix)]
    std::os::unix::fs::FileExt::write_all_at(file, buf, offset).expect("write");
    #[cfg(windows)]
    {
        let (mut buf, mut offset) = (buf, offset);
        while !buf.is_empty() {
            let written =
                std::os::windows::fs::FileExt::seek_write(file, buf, offset).expect("write");
            assert!(written > 0, "the ring took none of a write");
            buf = &buf[written..];
            offset += written as u64;
        }
    }
}

/// The cheapest durable server there can be on this disk: the bare server, plus each body
/// written to a file and `fdatasync`ed in group commits by one writer thread (as the listener's
/// store does) before the 200. No verification, no parsing, no SQLite. The file is a fixed
/// 64 MiB ring, written over in place like a restarted WAL, so a sync never has to record a
/// new file size. Its rate says what durability alone costs here; the gap between it and the
/// listener is the listener's own work.
async fn append_server(addr: &str, dir: &std::path::Path, judged: bool) -> String {
    const RING: u64 = 64 * 1024 * 1024;
    let file = std::fs::OpenOptions::new()
        .create(true)
        .truncate(true)
        .read(true)
        .write(true)
        .open(dir.join(if judged { "judged-ring" } else { "append-ring" }))
        .expect("ring file");
    let zeros = vec![0u8; 1024 * 1024];
    for i in 0..RING / zeros.len() as u64 {
        write_at(&file, &zeros, i * zeros.len() as u64);
    }
    file.sync_all().expect("sync ring");
    type Pending = (bytes::Bytes, tokio::sync::oneshot::Sender<()>);
    let (tx, rx) = std::sync::mpsc::channel::<Pending>();
    std::thread::Builder::new()
        .name("append-writer".into())
        .spawn(move || {
            let mut offset = 0u64;
            while let Ok(first) = rx.recv() {
                let mut batch = vec![first];
                while batch.len() < 1024 {
                    match rx.try_recv() {
                        Ok(next) => batch.push(next),
                        Err(_) => break,
                    }
                }
                for (body, _) in &batch {
                    if offset + body.len() as u64 > RING {
                        offset = 0;
                    }
                    write_at(&file, body, offset);
                    offset += body.len() as u64;
                }
                file.sync_data().expect("fdatasync");
                for (_, reply) in batch {
                    let _ = reply.send(());
                }
            }
        })
        .expect("writer thread");
    let keys = Arc::new(MemoryKeys::new());
    keys.insert(SUB, KEY);
    body_server(addr, move |headers, body| {
        let body = body.to_bytes();
        // The judgement the listener makes before any answer (`--bench judge`), and its verdict
        // decides the answer, as in the listener.
        let valid = !judged || {
            let text = |name: &str| headers.get(name).and_then(|v| v.to_str().ok());
            judge(
                text(SIGNATURE_HEADER),
                text(SUBSCRIPTION_HEADER),
                &body,
                keys.as_ref(),
                chrono::Utc::now(),
            )
            .verdict
                == Verdict::Valid
        };
        let (done, written) = tokio::sync::oneshot::channel();
        if valid {
            let _ = tx.send((body, done));
        }
        async move { valid && written.await.is_ok() }
    })
    .await
}

fn signed_bodies(count: usize) -> Arc<Vec<(Vec<u8>, String)>> {
    Arc::new(
        (0..count)
            .map(|_| {
                let body = body(&random_event_id());
                let signature = sign(KEY.as_bytes(), &body);
                (body, signature)
            })
            .collect(),
    )
}

fn report(name: &str, outcome: &Outcome) {
    println!(
        "{name:<28} {:>9.0} req/s   p50 {:>7.2} ms   p99 {:>7.2} ms   ({} of {} answered 2xx)",
        outcome.rate,
        outcome.p50.as_secs_f64() * 1000.0,
        outcome.p99.as_secs_f64() * 1000.0,
        outcome.ok,
        outcome.total
    );
    for (kind, count) in &outcome.failures {
        println!("  {count} failed: {kind}");
    }
    let per_request = |seconds: f64| seconds / outcome.total.max(1) as f64 * 1e6;
    let threads: Vec<String> = outcome
        .cpu
        .iter()
        .map(|(name, seconds)| format!("{name} {:.0}", per_request(*seconds)))
        .collect();
    println!(
        "  CPU per request {:.0} us (load generator and server together; by thread: {})",
        per_request(outcome.cpu.values().sum()),
        threads.join(", ")
    );
}

/// Sender counts from `ACK_SENDERS` (a comma-separated list).
fn sender_counts() -> Vec<usize> {
    let counts: Vec<usize> = std::env::var("ACK_SENDERS")
        .unwrap_or_default()
        .split(',')
        .filter_map(|v| v.trim().parse().ok())
        .filter(|&n| n > 0)
        .collect();
    if counts.is_empty() {
        vec![32, 128, 256]
    } else {
        counts
    }
}

/// One listener run: a fresh store, the listener serving on port 0, warm-up, then the load.
async fn listener_run(
    durability: Durability,
    requests: usize,
    warm_up: usize,
    senders: usize,
) -> (Outcome, u64) {
    let (_dir, store) = fresh_store(durability);
    let keys = Arc::new(MemoryKeys::new());
    keys.insert(SUB, KEY);
    let listener = Listener::new(ListenerConfig::default(), store, keys).expect("listener");
    let _live = listener.subscribe();
    let tcp = tokio::net::TcpListener::bind("127.0.0.1:0")
        .await
        .expect("bind");
    let listener_url = format!("http://{}/webhooks", tcp.local_addr().expect("addr"));
    let serving = listener.clone();
    let (stop, stopped) = tokio::sync::oneshot::channel::<()>();
    let server = tokio::spawn(async move {
        serving
            .serve(tcp, async {
                let _ = stopped.await;
            })
            .await
    });
    load(&listener_url, signed_bodies(warm_up), senders).await;
    let outcome = load(&listener_url, signed_bodies(requests), senders).await;
    let stored: u64 = listener
        .store()
        .count_by_verdict(&partner_listener::CaptureFilter::default())
        .expect("count")
        .values()
        .sum();
    let _ = stop.send(());
    let _ = server.await;
    (outcome, stored)
}

/// The run of each server with the median rate among its rounds.
fn median_run(runs: &mut [Outcome]) -> Option<&Outcome> {
    runs.sort_by(|a, b| a.rate.total_cmp(&b.rate));
    runs.get(runs.len() / 2)
}

/// Each round's rate of `server` over the bare server's in the same round, as "min / median /
/// max". The two ran seconds apart, so this ratio moves less with the machine's slow and fast
/// spells than a ratio of two medians taken from different rounds.
fn paired_ratios(server: &[Outcome], bare: &[Outcome]) -> String {
    let mut ratios: Vec<f64> = server
        .iter()
        .zip(bare)
        .map(|(s, b)| s.rate / b.rate)
        .collect();
    if ratios.is_empty() {
        return "-".into();
    }
    ratios.sort_by(f64::total_cmp);
    format!(
        "{:.2} / {:.2} / {:.2}",
        ratios[0],
        ratios[ratios.len() / 2],
        ratios[ratios.len() - 1]
    )
}

fn cpu_per_request(outcome: &Outcome) -> f64 {
    outcome.cpu.values().sum::<f64>() / outcome.total.max(1) as f64 * 1e6
}

const SERVERS: [&str; 5] = ["bare", "append", "verify", "full", "normal"];

fn main() {
    let requests = env_number("ACK_REQUESTS", 30_000);
    let warm_up = env_number("ACK_WARMUP", 2_000);
    let rounds = env_number("ACK_ROUNDS", 3).max(1);
    let counts = sender_counts();
    let only = std::env::var("ACK_ONLY").unwrap_or_default();
    let runs = |name: &str| {
        only.is_empty()
            || only
                .split(',')
                .any(|wanted| wanted.trim().eq_ignore_ascii_case(name))
    };
    let runtime = tokio::runtime::Builder::new_multi_thread()
        .enable_all()
        .build()
        .expect("runtime");
    if let Ok(server) = std::env::var("ACK_SERVE") {
        let addr = std::env::var("ACK_ADDR").unwrap_or_else(|_| "127.0.0.1:7272".into());
        runtime.block_on(async {
            let ring_dir = tempfile::tempdir().expect("tempdir");
            let url = match server.as_str() {
                "bare" => bare_server(&addr).await,
                "append" => append_server(&addr, ring_dir.path(), false).await,
                "verify" => append_server(&addr, ring_dir.path(), true).await,
                other => {
                    eprintln!("ACK_SERVE={other}: say bare, append or verify");
                    std::process::exit(2);
                }
            };
            println!("serving the {server} server at {url} until stopped");
            std::future::pending::<()>().await;
        });
        return;
    }
    runtime.block_on(async {
        let bare_url = bare_server("127.0.0.1:0").await;
        let ring_dir = tempfile::tempdir().expect("tempdir");
        let append_url = append_server("127.0.0.1:0", ring_dir.path(), false).await;
        let verify_url = append_server("127.0.0.1:0", ring_dir.path(), true).await;
        println!(
            "{requests} signed {BODY_SIZE}-byte notifications (random UUID eventIds) per run \
             ({warm_up} before it to warm up), senders {counts:?}, {rounds} rounds, loopback"
        );
        // outcomes[sender count][server] = one outcome per round
        let mut outcomes: Vec<[Vec<Outcome>; 5]> = counts.iter().map(|_| Default::default()).collect();
        // Rounds outermost, so a slow spell of the machine (a noisy neighbour, a flush) hits
        // every server alike instead of one server's runs; every other round runs the servers
        // in the opposite order, so a machine that speeds up or slows down within a round does
        // not favour whichever server comes first.
        for round in 1..=rounds {
            for (slot, &senders) in counts.iter().enumerate() {
                println!("-- round {round}, {senders} concurrent senders");
                let mut order: Vec<usize> = (0..SERVERS.len()).collect();
                if round % 2 == 0 {
                    order.reverse();
                }
                for server in order {
                    let name = &SERVERS[server];
                    if !runs(name) {
                        continue;
                    }
                    let outcome = match *name {
                        "bare" => {
                            load(&bare_url, signed_bodies(warm_up), senders).await;
                            let bare = load(&bare_url, signed_bodies(requests), senders).await;
                            report("bare hyper (no verify/store)", &bare);
                            bare
                        }
                        "append" => {
                            load(&append_url, signed_bodies(warm_up), senders).await;
                            let append = load(&append_url, signed_bodies(requests), senders).await;
                            report("bare + append, fdatasync", &append);
                            append
                        }
                        "verify" => {
                            load(&verify_url, signed_bodies(warm_up), senders).await;
                            let verify = load(&verify_url, signed_bodies(requests), senders).await;
                            report("judged + append, fdatasync", &verify);
                            verify
                        }
                        _ => {
                            let durability = if *name == "full" {
                                Durability::Full
                            } else {
                                Durability::Normal
                            };
                            let (outcome, stored) =
                                listener_run(durability, requests, warm_up, senders).await;
                            report(&format!("listener, {durability:?} durability"), &outcome);
                            println!(
                                "  {stored} captures stored, {} expected (every 2xx-acknowledged one must be there)",
                                warm_up + requests
                            );
                            outcome
                        }
                    };
                    outcomes[slot][server].push(outcome);
                }
            }
        }
        println!();
        println!("median of {rounds} rounds (by rate) per server and sender count:");
        println!(
            "senders | bare req/s | FULL req/s | FULL p50/p99 ms | FULL/bare | append/bare | NORMAL/bare | CPU us/req bare / append / verify / FULL / NORMAL"
        );
        let mut by_round = Vec::new();
        for (slot, senders) in counts.iter().enumerate() {
            let [bare, append, verify, full, normal] = &mut outcomes[slot];
            // Taken before the medians sort the runs: round i of one server beside round i of
            // the bare server.
            let full_by_round = paired_ratios(full, bare);
            let append_by_round = paired_ratios(append, bare);
            let full_over_append_by_round = paired_ratios(full, append);
            let verify_over_append_by_round = paired_ratios(verify, append);
            let full_over_verify_by_round = paired_ratios(full, verify);
            let (bare, append, verify, full, normal) = (
                median_run(bare),
                median_run(append),
                median_run(verify),
                median_run(full),
                median_run(normal),
            );
            let rate = |o: Option<&Outcome>| o.map_or("-".to_string(), |o| format!("{:.0}", o.rate));
            let cpu = |o: Option<&Outcome>| o.map_or("-".to_string(), |o| format!("{:.0}", cpu_per_request(o)));
            let ratio = |o: Option<&Outcome>| match (o, bare) {
                (Some(o), Some(b)) => format!("{:.2}", o.rate / b.rate),
                _ => "-".into(),
            };
            let latency = full.map_or("-".to_string(), |o| {
                format!(
                    "{:.2} / {:.2}",
                    o.p50.as_secs_f64() * 1000.0,
                    o.p99.as_secs_f64() * 1000.0
                )
            });
            println!(
                "{senders} | {} | {} | {latency} | {} | {} | {} | {} / {} / {} / {} / {}",
                rate(bare),
                rate(full),
                ratio(full),
                ratio(append),
                ratio(normal),
                cpu(bare),
                cpu(append),
                cpu(verify),
                cpu(full),
                cpu(normal)
            );
            by_round.push(format!(
                "{senders} | {full_by_round} | {append_by_round} | {full_over_append_by_round} | {verify_over_append_by_round} | {full_over_verify_by_round}"
            ));
        }
        println!();
        println!("each round's ratio, taken within the round (min / median / max of {rounds}):");
        println!("senders | FULL/bare | append/bare | FULL/append | verify/append | FULL/verify");
        for line in by_round {
            println!("{line}");
        }
    });
}
