//! The tunnel check against a local HTTPS "tunnel" (rustls, a certificate made by rcgen and
//! trusted only by the test's client) and every failure class.

use crate::support::*;
use bytes::Bytes;
use http_body_util::{BodyExt, Full};
use hyper::{Request, Response};
use hyper_util::rt::TokioIo;
use partner_listener::tunnel::{check_tunnel, TunnelFailure};
use partner_listener::ListenerConfig;
use std::net::SocketAddr;
use std::sync::Arc;
use std::time::Duration;
use tokio_rustls::rustls;

const HOST: &str = "tunnel.test";

#[derive(Clone)]
enum Behaviour {
    /// Pass every request on to this URL (whatever its path), like ngrok does.
    ForwardTo(String),
    /// Answer this status without passing anything on.
    Answer(u16),
}

struct Tunnel {
    addr: SocketAddr,
    cert_der: Vec<u8>,
}

async fn start_tunnel(behaviour: Behaviour) -> Tunnel {
    let certified = rcgen::generate_simple_self_signed(vec![HOST.to_string()]).unwrap();
    let cert_der = certified.cert.der().to_vec();
    let key = rustls::pki_types::PrivateKeyDer::Pkcs8(rustls::pki_types::PrivatePkcs8KeyDer::from(
        certified.key_pair.serialize_der(),
    ));
    let config = rustls::ServerConfig::builder_with_provider(Arc::new(
        rustls::crypto::ring::default_provider(),
    ))
    .with_safe_default_protocol_versions()
    .unwrap()
    .with_no_client_auth()
    .with_single_cert(
        vec![rustls::pki_types::CertificateDer::from(cert_der.clone())],
        key,
    )
    .unwrap();
    let acceptor = tokio_rustls::TlsAcceptor::from(Arc::new(config));
    let tcp = tokio::net::TcpListener::bind("127.0.0.1:0").await.unwrap();
    let addr = tcp.local_addr().unwrap();
    let http = reqwest::Client::new();
    tokio::spawn(async move {
        while let Ok((stream, _)) = tcp.accept().await {
            let acceptor = acceptor.clone();
            let behaviour = behaviour.clone();
            let http = http.clone();
            tokio::spawn(async move {
                let Ok(tls) = acceptor.accept(stream).await else {
                    return;
                };
                let service =
                    hyper::service::service_fn(move |request: Request<hyper::body::Incoming>| {
                        let behaviour = behaviour.clone();
                        let http = http.clone();
                        async move {
                            Ok::<_, std::convert::Infallible>(
                                pass_on(behaviour, http, request).await,
                            )
                        }
                    });
                let _ = hyper::server::conn::http1::Builder::new()
                    .serve_connection(TokioIo::new(tls), service)
                    .await;
            });
        }
    });
    Tunnel { addr, cert_der }
}

async fn pass_on(
    behaviour: Behaviour,
    http: reqwest::Client,
    request: Request<hyper::body::Incoming>,
) -> Response<Full<Bytes>> {
    let (parts, body) = request.into_parts();
    let body = body.collect().await.unwrap().to_bytes();
    let (status, answer) = match behaviour {
        Behaviour::Answer(status) => (status, Bytes::from_static(b"tunnel says hi")),
        Behaviour::ForwardTo(url) => {
            let mut forwarded = http.post(url).body(body);
            for (name, value) in &parts.headers {
                if name != "host" && name != "content-length" {
                    forwarded = forwarded.header(name, value);
                }
            }
            let response = forwarded.send().await.unwrap();
            (response.status().as_u16(), response.bytes().await.unwrap())
        }
    };
    let mut response = Response::new(Full::new(answer));
    *response.status_mut() = hyper::StatusCode::from_u16(status).unwrap();
    response
}

fn trusting_client(tunnel: &Tunnel, timeout: Duration) -> reqwest::Client {
    reqwest::Client::builder()
        .tls_built_in_root_certs(false)
        .add_root_certificate(reqwest::Certificate::from_der(&tunnel.cert_der).unwrap())
        .resolve(HOST, tunnel.addr)
        .timeout(timeout)
        .build()
        .unwrap()
}

fn tunnel_url(tunnel: &Tunnel, path: &str) -> String {
    format!("https://{HOST}:{}{path}", tunnel.addr.port())
}

const WAIT: Duration = Duration::from_secs(5);

#[tokio::test]
async fn a_working_tunnel_delivers_the_probe_to_the_listener() {
    let running = start(ListenerConfig::default()).await;
    let tunnel = start_tunnel(Behaviour::ForwardTo(running.url.clone())).await;
    let report = check_tunnel(
        &running.listener,
        &tunnel_url(&tunnel, "/webhooks"),
        &trusting_client(&tunnel, WAIT),
        WAIT,
    )
    .await;
    assert!(report.ok, "{:?}", report.failure);
    assert!(report.arrived);
    assert_eq!(report.status, Some(200));
    assert!(report.round_trip_ms.is_some());
    let capture = running
        .listener
        .store()
        .get(report.capture_id.unwrap())
        .unwrap();
    assert_eq!(
        capture.verdict,
        partner_listener::Verdict::Valid,
        "the probe verifies with its one-time key"
    );
    running.stop().await;
}

#[tokio::test]
async fn arriving_on_another_path_is_reported_with_that_path() {
    let running = start(ListenerConfig::default()).await;
    let tunnel = start_tunnel(Behaviour::ForwardTo(format!("{}/hooks", running.base()))).await;
    let report = check_tunnel(
        &running.listener,
        &tunnel_url(&tunnel, "/hooks"),
        &trusting_client(&tunnel, WAIT),
        WAIT,
    )
    .await;
    assert!(!report.ok && report.arrived);
    assert_eq!(
        report.failure,
        Some(TunnelFailure::ArrivedAtOtherPath {
            path: "/hooks".into(),
            expected: "/webhooks".into()
        })
    );
    running.stop().await;
}

/// During a scan (junk past its rate is counted, not stored), a probe that arrived on another
/// path is still kept, and reported as such rather than as not arrived.
#[tokio::test]
async fn a_probe_on_another_path_is_kept_during_a_flood_of_junk() {
    let running = start(ListenerConfig {
        junk_rate: Some(1),
        ..ListenerConfig::default()
    })
    .await;
    let client = reqwest::Client::new();
    for i in 0..20 {
        let answer = client
            .get(format!("{}/wp-login.php?{i}", running.base()))
            .send()
            .await
            .unwrap();
        assert_eq!(answer.status(), 404);
    }
    assert!(
        running.listener.flood_summary().summarised > 0,
        "past the rate"
    );
    let tunnel = start_tunnel(Behaviour::ForwardTo(format!("{}/hooks", running.base()))).await;
    let report = check_tunnel(
        &running.listener,
        &tunnel_url(&tunnel, "/hooks"),
        &trusting_client(&tunnel, WAIT),
        WAIT,
    )
    .await;
    assert!(report.arrived, "{report:?}");
    assert_eq!(
        report.failure,
        Some(TunnelFailure::ArrivedAtOtherPath {
            path: "/hooks".into(),
            expected: "/webhooks".into()
        })
    );
    running.stop().await;
}

#[tokio::test]
async fn a_tunnel_that_answers_by_itself() {
    let running = start(ListenerConfig::default()).await;
    let bad_gateway = start_tunnel(Behaviour::Answer(502)).await;
    let report = check_tunnel(
        &running.listener,
        &tunnel_url(&bad_gateway, "/webhooks"),
        &trusting_client(&bad_gateway, WAIT),
        WAIT,
    )
    .await;
    assert_eq!(
        report.failure,
        Some(TunnelFailure::Status {
            status: 502,
            arrived: false
        })
    );
    let elsewhere = start_tunnel(Behaviour::Answer(200)).await;
    let report = check_tunnel(
        &running.listener,
        &tunnel_url(&elsewhere, "/webhooks"),
        &trusting_client(&elsewhere, WAIT),
        WAIT,
    )
    .await;
    assert_eq!(
        report.failure,
        Some(TunnelFailure::NotArrived { status: 200 })
    );
    assert!(report
        .failure
        .unwrap()
        .to_string()
        .contains("never reached this listener"));
    running.stop().await;
}

#[tokio::test]
async fn a_listener_answering_non_2xx_through_the_tunnel() {
    let running = start(ListenerConfig {
        test_mode: partner_listener::TestMode {
            status: Some(500),
            ..Default::default()
        },
        ..ListenerConfig::default()
    })
    .await;
    let tunnel = start_tunnel(Behaviour::ForwardTo(running.url.clone())).await;
    let report = check_tunnel(
        &running.listener,
        &tunnel_url(&tunnel, "/webhooks"),
        &trusting_client(&tunnel, WAIT),
        WAIT,
    )
    .await;
    assert_eq!(
        report.failure,
        Some(TunnelFailure::Status {
            status: 500,
            arrived: true
        })
    );
    running.stop().await;
}

#[tokio::test]
async fn connection_failures_are_classified() {
    let running = start(ListenerConfig::default()).await;
    let tunnel = start_tunnel(Behaviour::Answer(200)).await;

    // Not https: refused with words, nothing sent.
    let report = check_tunnel(
        &running.listener,
        &running.url,
        &trusting_client(&tunnel, WAIT),
        WAIT,
    )
    .await;
    assert_eq!(
        report.failure,
        Some(TunnelFailure::NotHttps {
            scheme: "http".into()
        })
    );
    assert!(report.failure.unwrap().to_string().contains("https://"));
    let report = check_tunnel(
        &running.listener,
        "not a url",
        &trusting_client(&tunnel, WAIT),
        WAIT,
    )
    .await;
    assert!(matches!(
        report.failure,
        Some(TunnelFailure::InvalidUrl { .. })
    ));

    // DNS: a name under .invalid never resolves.
    let report = check_tunnel(
        &running.listener,
        "https://no-such-tunnel.invalid/webhooks",
        &trusting_client(&tunnel, WAIT),
        WAIT,
    )
    .await;
    assert!(
        matches!(report.failure, Some(TunnelFailure::Dns { .. })),
        "{:?}",
        report.failure
    );

    // TLS: the certificate is not trusted by a client with only the public roots.
    let untrusting = reqwest::Client::builder()
        .resolve(HOST, tunnel.addr)
        .build()
        .unwrap();
    let report = check_tunnel(
        &running.listener,
        &tunnel_url(&tunnel, "/webhooks"),
        &untrusting,
        WAIT,
    )
    .await;
    assert!(
        matches!(report.failure, Some(TunnelFailure::Tls { .. })),
        "{:?}",
        report.failure
    );

    // Refused: nothing listens.
    let closed = tokio::net::TcpListener::bind("127.0.0.1:0").await.unwrap();
    let closed_addr = closed.local_addr().unwrap();
    drop(closed);
    let refusing = reqwest::Client::builder()
        .resolve(HOST, closed_addr)
        .build()
        .unwrap();
    let report = check_tunnel(
        &running.listener,
        &format!("https://{HOST}:{}/webhooks", closed_addr.port()),
        &refusing,
        WAIT,
    )
    .await;
    match &report.failure {
        // What the user reads is the cause itself, not reqwest's wrapping that repeats the URL.
        Some(TunnelFailure::Refused { detail }) => assert!(
            detail.to_ascii_lowercase().contains("refused") && !detail.contains("https://"),
            "{detail}"
        ),
        other => panic!("expected Refused, got {other:?}"),
    }

    // Timeout: a server that accepts and never speaks.
    let silent = tokio::net::TcpListener::bind("127.0.0.1:0").await.unwrap();
    let silent_addr = silent.local_addr().unwrap();
    let holder = tokio::spawn(async move {
        let mut held = Vec::new();
        while let Ok((stream, _)) = silent.accept().await {
            held.push(stream);
        }
    });
    let hanging = reqwest::Client::builder()
        .resolve(HOST, silent_addr)
        .build()
        .unwrap();
    let report = check_tunnel(
        &running.listener,
        &format!("https://{HOST}:{}/webhooks", silent_addr.port()),
        &hanging,
        Duration::from_millis(500),
    )
    .await;
    assert!(
        matches!(report.failure, Some(TunnelFailure::Timeout { .. })),
        "{:?}",
        report.failure
    );
    holder.abort();
    running.stop().await;
}
