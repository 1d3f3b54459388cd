//! Nothing a client sends crashes, hangs or exhausts the listener: oversized bodies, slow
//! headers, stalled bodies, garbage, too many connections.

use crate::support::*;
use partner_listener::{CaptureFilter, ListenerConfig, Verdict};
use std::time::Duration;
use tokio::io::{AsyncReadExt, AsyncWriteExt};
use tokio::net::TcpStream;

fn quick_config() -> ListenerConfig {
    ListenerConfig {
        body_limit: 1024,
        header_read_timeout: Duration::from_millis(300),
        body_read_timeout: Duration::from_millis(300),
        ..ListenerConfig::default()
    }
}

async fn read_all(stream: &mut TcpStream) -> String {
    let mut out = Vec::new();
    let _ = tokio::time::timeout(Duration::from_secs(5), stream.read_to_end(&mut out)).await;
    String::from_utf8_lossy(&out).into_owned()
}

#[tokio::test]
async fn oversized_bodies_get_413_and_are_recorded_without_the_body() {
    let running = start(quick_config()).await;
    let client = reqwest::Client::new();
    // Announced with Content-Length.
    let big = vec![b'x'; 4096];
    let response = post_signed(&client, &running.url, SUB, KEY, big).await;
    assert_eq!(response.status(), 413);
    // Streamed without a length (chunked).
    let chunks: Vec<Result<Vec<u8>, std::io::Error>> =
        (0..8).map(|_| Ok(vec![b'y'; 512])).collect();
    let response = client
        .post(&running.url)
        .body(reqwest::Body::wrap_stream(futures::stream::iter(chunks)))
        .send()
        .await
        .unwrap();
    assert_eq!(response.status(), 413);

    let page = running
        .listener
        .store()
        .query(
            &CaptureFilter {
                verdicts: vec![Verdict::TooLarge],
                ..Default::default()
            },
            0,
            10,
        )
        .unwrap();
    assert_eq!(page.total, 2);
    for capture in &page.items {
        assert!(capture.body.is_none());
        assert!(capture.body_size > 1024);
        assert_eq!(capture.response.status, 413);
    }
    // A body of exactly the limit is fine.
    let response = post_signed(&client, &running.url, SUB, KEY, vec![b'{'; 1024]).await;
    assert_eq!(response.status(), 400);
    running.stop().await;
}

#[tokio::test]
async fn a_client_that_never_finishes_its_headers_is_cut_off() {
    let running = start(quick_config()).await;
    let mut slow = TcpStream::connect(running.addr).await.unwrap();
    slow.write_all(b"POST /webhooks HTTP/1.1\r\nHost: x\r\nX-Slow: ")
        .await
        .unwrap();
    let started = std::time::Instant::now();
    let answer = read_all(&mut slow).await;
    assert!(
        started.elapsed() < Duration::from_secs(3),
        "the connection was held open"
    );
    assert!(
        answer.is_empty() || answer.starts_with("HTTP/1.1 408"),
        "{answer}"
    );
    running.stop().await;
}

#[tokio::test]
async fn a_stalled_body_gets_408_and_is_recorded_as_incomplete() {
    let running = start(quick_config()).await;
    let mut slow = TcpStream::connect(running.addr).await.unwrap();
    slow.write_all(b"POST /webhooks HTTP/1.1\r\nHost: x\r\nContent-Length: 100\r\n\r\n{\"event")
        .await
        .unwrap();
    let answer = read_all(&mut slow).await;
    assert!(answer.starts_with("HTTP/1.1 408"), "{answer}");
    let page = running
        .listener
        .store()
        .query(&CaptureFilter::default(), 0, 10)
        .unwrap();
    assert_eq!(page.items[0].verdict, Verdict::Incomplete);
    assert!(page.items[0].body.is_none());
    running.stop().await;
}

#[tokio::test]
async fn garbage_and_too_many_connections_leave_the_listener_serving() {
    let running = start(ListenerConfig {
        max_connections: 2,
        ..quick_config()
    })
    .await;
    let mut garbage = TcpStream::connect(running.addr).await.unwrap();
    garbage
        .write_all(b"\x00\x01\x02 not http at all\r\n\r\n")
        .await
        .unwrap();
    let answer = read_all(&mut garbage).await;
    assert!(
        answer.is_empty() || answer.starts_with("HTTP/1.1 400"),
        "{answer}"
    );

    // Two idle connections take both slots; the header timeout frees them.
    let _idle_a = TcpStream::connect(running.addr).await.unwrap();
    let _idle_b = TcpStream::connect(running.addr).await.unwrap();
    let client = reqwest::Client::new();
    let response = tokio::time::timeout(
        Duration::from_secs(5),
        post_signed(&client, &running.url, SUB, KEY, tx_body("after-garbage")),
    )
    .await
    .expect("the listener stayed stuck");
    assert_eq!(response.status(), 200);
    running.stop().await;
}

#[tokio::test]
async fn at_the_connection_cap_an_idle_connection_makes_room_and_a_busy_one_is_left_alone() {
    // With the header timeout long, a new client could only get in by an idle connection
    // being closed for it: waiting for a timeout would fail the 2 s deadline below.
    let running = start(ListenerConfig {
        max_connections: 2,
        header_read_timeout: Duration::from_secs(30),
        body_read_timeout: Duration::from_secs(30),
        ..quick_config()
    })
    .await;

    // Slot 1: a request whose body is still arriving.
    let busy_body = tx_body("busy");
    let signature = partner_api::signature::sign(KEY.as_bytes(), &busy_body);
    let mut busy = TcpStream::connect(running.addr).await.unwrap();
    let head = format!(
        "POST /webhooks HTTP/1.1\r\nHost: x\r\nSvc-SubscriptionId: {SUB}\r\n\
         Svc-Signature: {signature}\r\nContent-Length: {}\r\n\r\n",
        busy_body.len()
    );
    busy.write_all(head.as_bytes()).await.unwrap();
    busy.write_all(&busy_body[..10]).await.unwrap();

    // Slot 2: a kept-alive connection, idle after its request.
    let first_client = reqwest::Client::new();
    let response = post_signed(&first_client, &running.url, SUB, KEY, tx_body("first")).await;
    assert_eq!(response.status(), 200);

    // A third client gets in at once.
    let second_client = reqwest::Client::new();
    let response = tokio::time::timeout(
        Duration::from_secs(2),
        post_signed(&second_client, &running.url, SUB, KEY, tx_body("second")),
    )
    .await
    .expect("the new client waited for a slot with an idle connection holding it");
    assert_eq!(response.status(), 200);

    // The request in hand was not cut off: its body completes and it is answered.
    busy.write_all(&busy_body[10..]).await.unwrap();
    let mut answer = vec![0u8; 64];
    let read = tokio::time::timeout(Duration::from_secs(5), busy.read(&mut answer))
        .await
        .expect("the busy connection was answered")
        .unwrap();
    let answer = String::from_utf8_lossy(&answer[..read]).into_owned();
    assert!(answer.starts_with("HTTP/1.1 200"), "{answer}");

    // The first client's idle connection was the one closed; it reconnects without error.
    let response = post_signed(&first_client, &running.url, SUB, KEY, tx_body("again")).await;
    assert_eq!(response.status(), 200);
    let page = running
        .listener
        .store()
        .query(&CaptureFilter::default(), 0, 10)
        .unwrap();
    assert_eq!(page.total, 4);
    assert!(page.items.iter().all(|c| c.verdict == Verdict::Valid));
    running.stop().await;
}
