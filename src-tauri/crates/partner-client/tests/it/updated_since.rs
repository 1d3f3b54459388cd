//! The incremental walk (`walk_updated_since`) against the sandbox: exactly the transactions
//! changed since a time, newest first, stopping early; a transaction changed during the walk
//! is still handed over; cancel and progress.

use crate::support::Setup;
use chrono::{DateTime, Utc};
use futures::StreamExt;
use partner_api::{SortSpec, Transaction};
use partner_client::{PagerOptions, WalkEnd, WALK_PAGER};
use std::collections::HashSet;
use std::ops::ControlFlow;
use tokio_util::sync::CancellationToken;

/// Every transaction, newest change first (the one full walk a test compares with).
async fn newest_first(setup: &Setup) -> Vec<Transaction> {
    let mut all: Vec<Transaction> = setup
        .client
        .pager::<Transaction>(SortSpec::default(), PagerOptions::default())
        .unwrap()
        .map(|t| t.unwrap().into_view())
        .collect()
        .await;
    all.sort_by_key(|t| std::cmp::Reverse(t.updated));
    all
}

#[tokio::test]
async fn the_walk_hands_over_exactly_what_changed_since_and_stops_early() {
    let setup = Setup::demo(300).await;
    let all = newest_first(&setup).await;
    let since = all[119].updated;
    let expected: HashSet<String> = all
        .iter()
        .filter(|t| t.updated >= since)
        .map(|t| t.id.clone())
        .collect();
    let mut got = Vec::new();
    let mut reports = Vec::new();
    let summary = setup
        .client
        .walk_updated_since::<Transaction>(
            since,
            WALK_PAGER,
            &CancellationToken::new(),
            |progress| reports.push(progress.clone()),
            |t| {
                got.push((t.id.clone(), t.updated));
                ControlFlow::Continue(())
            },
        )
        .await
        .unwrap();
    assert_eq!(summary.end, WalkEnd::Complete);
    let ids: HashSet<String> = got.iter().map(|(id, _)| id.clone()).collect();
    assert_eq!(ids, expected);
    assert_eq!(got.len(), expected.len(), "no repeats");
    assert!(got.windows(2).all(|w| w[0].1 >= w[1].1), "newest first");
    // Three pages reach `since`; a few more are in flight or read by the second pass, never
    // the whole listing.
    assert!(
        summary.progress.read < 300,
        "read {}",
        summary.progress.read
    );
    assert_eq!(summary.progress.yielded as usize, expected.len());
    assert!(summary.progress.pass >= 2);
    let fractions: Vec<f64> = reports.iter().map(|p| p.fraction()).collect();
    assert!(
        fractions.windows(2).all(|w| w[0] <= w[1]),
        "progress only grows"
    );
    assert_eq!(reports.last().unwrap().fraction(), 1.0);

    // A `since` past every change: nothing, after one page.
    let later: DateTime<Utc> = all[0].updated + chrono::Duration::seconds(1);
    let mut none = 0;
    let summary = setup
        .client
        .walk_updated_since::<Transaction>(
            later,
            WALK_PAGER,
            &CancellationToken::new(),
            |_| {},
            |_| {
                none += 1;
                ControlFlow::Continue(())
            },
        )
        .await
        .unwrap();
    assert_eq!((none, summary.end), (0, WalkEnd::Complete));
}

/// A transaction changed while the walk is under way moves to the front, past the walk: the
/// next pass over the front hands it over, and the one it pushed back is not repeated.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_change_during_the_walk_is_not_lost() {
    let setup = Setup::demo(300).await;
    let all = newest_first(&setup).await;
    let since = all[249].updated;
    // Far enough down that its page is not in flight when the change is made.
    let moved = all[220].id.clone();
    let http = reqwest::Client::new();
    let patch_url = setup
        .sandbox
        .url(&format!("/sandbox/v1/transactions/{moved}"));
    let mut got = Vec::new();
    let summary = setup
        .client
        .walk_updated_since::<Transaction>(
            since,
            PagerOptions {
                page_size: 50,
                concurrency: 1,
            },
            &CancellationToken::new(),
            |_| {},
            |t| {
                if got.len() == 10 {
                    tokio::task::block_in_place(|| {
                        tokio::runtime::Handle::current().block_on(async {
                            let response = http
                                .patch(&patch_url)
                                .json(&serde_json::json!({"loan": {"loanAmount": 1}}))
                                .send()
                                .await
                                .unwrap();
                            assert_eq!(response.status(), 200);
                        })
                    });
                }
                got.push((t.id.clone(), t.updated));
                ControlFlow::Continue(())
            },
        )
        .await
        .unwrap();
    assert_eq!(summary.end, WalkEnd::Complete);
    let after = newest_first(&setup).await;
    assert_eq!(after[0].id, moved);
    let expected: HashSet<String> = after
        .iter()
        .filter(|t| t.updated >= since)
        .map(|t| t.id.clone())
        .collect();
    let ids: HashSet<String> = got.iter().map(|(id, _)| id.clone()).collect();
    assert_eq!(ids, expected);
    let versions_of_moved: Vec<_> = got.iter().filter(|(id, _)| *id == moved).collect();
    assert_eq!(
        versions_of_moved.len(),
        1,
        "its old place was passed by then"
    );
    assert_eq!(versions_of_moved[0].1, after[0].updated, "its new version");
    assert_eq!(
        got.len(),
        expected.len(),
        "the one pushed back is not repeated"
    );
}

#[tokio::test]
async fn cancel_ends_the_walk_with_what_was_handed_over() {
    let setup = Setup::demo(200).await;
    let all = newest_first(&setup).await;
    let cancel = CancellationToken::new();
    let mut got = 0u64;
    let summary = setup
        .client
        .walk_updated_since::<Transaction>(
            all.last().unwrap().updated,
            WALK_PAGER,
            &cancel,
            |progress| {
                if progress.yielded == 30 {
                    cancel.cancel();
                }
            },
            |_| {
                got += 1;
                ControlFlow::Continue(())
            },
        )
        .await
        .unwrap();
    assert_eq!(summary.end, WalkEnd::Cancelled);
    assert_eq!((got, summary.progress.yielded), (30, 30));

    let mut stopped_at = 0;
    let summary = setup
        .client
        .walk_updated_since::<Transaction>(
            all.last().unwrap().updated,
            WALK_PAGER,
            &CancellationToken::new(),
            |_| {},
            |_| {
                stopped_at += 1;
                if stopped_at == 5 {
                    ControlFlow::Break(())
                } else {
                    ControlFlow::Continue(())
                }
            },
        )
        .await
        .unwrap();
    assert_eq!((summary.end, stopped_at), (WalkEnd::Stopped, 5));
    // A page size outside 1-50 is refused before anything is sent.
    let refused = setup
        .client
        .walk_updated_since::<Transaction>(
            all[0].updated,
            PagerOptions {
                page_size: 51,
                concurrency: 1,
            },
            &CancellationToken::new(),
            |_| {},
            |_| ControlFlow::Continue(()),
        )
        .await
        .unwrap_err();
    assert_eq!(refused.kind(), partner_client::ErrorKind::Rule);
}
