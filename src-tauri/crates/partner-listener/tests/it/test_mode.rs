//! The test mode answers with a chosen status, delay or failure rate, after storing the capture.

use crate::support::*;
use partner_listener::{CaptureFilter, ListenerConfig, TestMode, Verdict};
use std::time::{Duration, Instant};

#[tokio::test]
async fn failing_the_first_attempts_lets_a_later_attempt_through() {
    let running = start(ListenerConfig {
        test_mode: TestMode {
            fail_first_attempts: 2,
            ..Default::default()
        },
        ..ListenerConfig::default()
    })
    .await;
    let client = reqwest::Client::new();
    let mut statuses = Vec::new();
    for _ in 0..3 {
        statuses.push(
            post_signed(&client, &running.url, SUB, KEY, tx_body("tm-1"))
                .await
                .status()
                .as_u16(),
        );
    }
    assert_eq!(statuses, vec![500, 500, 200]);
    let page = running
        .listener
        .store()
        .query(&CaptureFilter::default(), 0, 10)
        .unwrap();
    assert!(page.items.iter().all(|c| c.verdict == Verdict::Valid));
    let from_test_mode: Vec<bool> = page
        .items
        .iter()
        .rev()
        .map(|c| c.response.from_test_mode)
        .collect();
    assert_eq!(from_test_mode, vec![true, true, false]);
    running.stop().await;
}

#[tokio::test]
async fn a_fixed_status_a_failure_rate_and_a_switch_at_run_time() {
    let running = start(ListenerConfig {
        test_mode: TestMode {
            status: Some(503),
            ..Default::default()
        },
        ..ListenerConfig::default()
    })
    .await;
    let client = reqwest::Client::new();
    assert_eq!(
        post_signed(&client, &running.url, SUB, KEY, tx_body("a"))
            .await
            .status(),
        503
    );
    running
        .listener
        .set_test_mode(TestMode {
            fail_rate: 1.0,
            failure_status: Some(502),
            ..Default::default()
        })
        .unwrap();
    assert_eq!(
        post_signed(&client, &running.url, SUB, KEY, tx_body("b"))
            .await
            .status(),
        502
    );
    assert!(running
        .listener
        .set_test_mode(TestMode {
            fail_rate: 1.5,
            ..Default::default()
        })
        .is_err());
    running.listener.set_test_mode(TestMode::default()).unwrap();
    assert_eq!(
        post_signed(&client, &running.url, SUB, KEY, tx_body("c"))
            .await
            .status(),
        200
    );
    running.stop().await;
}

#[tokio::test]
async fn a_delayed_answer_is_stored_before_the_delay() {
    let running = start(ListenerConfig {
        test_mode: TestMode {
            delay: Some(Duration::from_millis(800)),
            ..Default::default()
        },
        ..ListenerConfig::default()
    })
    .await;
    let client = reqwest::Client::new();
    let url = running.url.clone();
    let started = Instant::now();
    let sending = tokio::spawn(async move {
        post_signed(&client, &url, SUB, KEY, tx_body("slow"))
            .await
            .status()
    });
    tokio::time::sleep(Duration::from_millis(400)).await;
    let page = running
        .listener
        .store()
        .query(&CaptureFilter::default(), 0, 10)
        .unwrap();
    assert_eq!(
        page.total, 1,
        "the capture is committed before the delayed answer"
    );
    assert_eq!(page.items[0].response.delay_ms, 800);
    assert_eq!(sending.await.unwrap(), 200);
    assert!(started.elapsed() >= Duration::from_millis(800));
    running.stop().await;
}
