//! Tokens: reused, replaced before either deadline (driven by the sandbox's clock), single
//! flight, one retry after a server-side revocation, and the published state.

use crate::support::{self, Setup};
use chrono::{TimeDelta, Utc};
use partner_api::Secret;
use partner_client::{Clock, ConnectionConfig, ErrorKind, PageRequest, PartnerClient, TokenState};
use std::time::Duration;

fn one() -> PageRequest {
    PageRequest::new(0, 1).unwrap()
}

#[tokio::test]
async fn a_token_is_reused_across_calls() {
    let setup = Setup::demo(20).await;
    let first = setup.client.tokens().bearer().await.unwrap();
    for _ in 0..5 {
        setup.client.list_transactions(&one()).await.unwrap();
        setup.client.list_products(&one()).await.unwrap();
    }
    let last = setup.client.tokens().bearer().await.unwrap();
    assert!(last.ct_eq(first.expose()), "the same token throughout");
    assert_eq!(setup.client.tokens().issuances(), 1);
    assert_eq!(
        support::issuances_logged(setup.client_id()),
        1,
        "the sandbox issued one token"
    );
}

#[tokio::test]
async fn replaced_before_the_idle_deadline() {
    let setup = Setup::demo(5).await;
    setup.client.list_transactions(&one()).await.unwrap();
    let first = setup.client.tokens().bearer().await.unwrap();

    // 14 minutes idle: still fresh (more than the one-minute margin left), so reused.
    setup.advance(Duration::from_secs(14 * 60 - 30)).await;
    setup.client.list_transactions(&one()).await.unwrap();
    assert_eq!(setup.client.tokens().issuances(), 1);

    // 14.5 minutes idle: inside the margin, so replaced before the call, not after a 401.
    setup.advance(Duration::from_secs(14 * 60 + 30)).await;
    assert_eq!(
        support::introspect_at_service(&setup.sandbox, &first).await,
        Some(true),
        "the old token has not lapsed at the service yet"
    );
    setup.client.list_transactions(&one()).await.unwrap();
    assert_eq!(setup.client.tokens().issuances(), 2);
    assert_eq!(
        setup.client.tokens().rejections(),
        0,
        "no call met a lapsed token"
    );
    let second = setup.client.tokens().bearer().await.unwrap();
    assert!(!second.ct_eq(first.expose()));

    // Past the idle deadline with no call in between: replaced again, still without a 401.
    setup.advance(Duration::from_secs(16 * 60)).await;
    assert_eq!(
        support::introspect_at_service(&setup.sandbox, &second).await,
        None,
        "lapsed at the service"
    );
    setup.client.list_transactions(&one()).await.unwrap();
    assert_eq!(setup.client.tokens().issuances(), 3);
    assert_eq!(setup.client.tokens().rejections(), 0);
    assert_eq!(support::issuances_logged(setup.client_id()), 3);
}

#[tokio::test]
async fn replaced_before_the_maximum_deadline() {
    let setup = Setup::demo(5).await;
    setup.client.list_transactions(&one()).await.unwrap();
    let first = setup.client.tokens().bearer().await.unwrap();
    // Used every 10 minutes: the idle window keeps moving, the same token serves 110 minutes.
    for _ in 0..11 {
        setup.advance(Duration::from_secs(10 * 60)).await;
        setup.client.list_transactions(&one()).await.unwrap();
    }
    assert_eq!(
        setup.client.tokens().issuances(),
        1,
        "one token for 110 minutes of use"
    );
    // 119.5 minutes after issue: the maximum lifetime is within the margin.
    setup.advance(Duration::from_secs(9 * 60 + 30)).await;
    assert_eq!(
        support::introspect_at_service(&setup.sandbox, &first).await,
        Some(true),
        "the old token is still alive at the service"
    );
    setup.client.list_transactions(&one()).await.unwrap();
    assert_eq!(
        setup.client.tokens().issuances(),
        2,
        "replaced before the 120-minute cap"
    );
    assert_eq!(setup.client.tokens().rejections(), 0);
    setup.advance(Duration::from_secs(60)).await;
    assert_eq!(
        support::introspect_at_service(&setup.sandbox, &first).await,
        None,
        "the first token is past its maximum lifetime"
    );
    setup.client.list_transactions(&one()).await.unwrap();
    assert_eq!(setup.client.tokens().rejections(), 0);
}

#[tokio::test]
async fn twenty_concurrent_calls_share_one_issuance() {
    let setup = Setup::demo(30).await;
    let calls = (0..20).map(|i| {
        let client = setup.client.clone();
        async move {
            client
                .list_transactions(&PageRequest::new(i, 1).unwrap())
                .await
        }
    });
    let pages = futures::future::join_all(calls).await;
    assert!(pages.iter().all(Result::is_ok));
    assert_eq!(setup.client.tokens().issuances(), 1);
    assert_eq!(
        support::issuances_logged(setup.client_id()),
        1,
        "counted at the sandbox"
    );

    // The same after expiry: twenty callers that find the token stale share one new one.
    setup.advance(Duration::from_secs(20 * 60)).await;
    let calls = (0..20).map(|_| {
        let client = setup.client.clone();
        async move { client.list_transactions(&one()).await }
    });
    assert!(futures::future::join_all(calls)
        .await
        .iter()
        .all(Result::is_ok));
    assert_eq!(setup.client.tokens().issuances(), 2);
    assert_eq!(support::issuances_logged(setup.client_id()), 2);
}

#[tokio::test]
async fn a_401_after_server_side_revocation_gets_one_fresh_token_and_one_retry() {
    let setup = Setup::demo(5).await;
    setup.client.list_transactions(&one()).await.unwrap();
    let token = setup.client.tokens().bearer().await.unwrap();
    support::revoke_at_service(&setup.sandbox, &token).await;

    let page = setup.client.list_transactions(&one()).await.unwrap();
    assert_eq!(page.items.len(), 1);
    assert_eq!(setup.client.tokens().rejections(), 1, "one 401");
    assert_eq!(setup.client.tokens().issuances(), 2, "one fresh token");
    assert_eq!(support::issuances_logged(setup.client_id()), 2);
}

#[tokio::test]
async fn bad_credentials_fail_once_and_never_loop() {
    let setup = Setup::demo(1).await;
    let config = ConnectionConfig::new(
        setup.sandbox.base_url(),
        setup.client_id(),
        Secret::new("not-the-secret"),
    )
    .unwrap();
    let client = PartnerClient::new(config).unwrap();
    let mut states = client.tokens().subscribe();
    let err = client.list_transactions(&one()).await.unwrap_err();
    assert_eq!(err.kind(), ErrorKind::Unauthorized);
    assert_eq!(client.tokens().issuances(), 0);
    let failures = support::logs()
        .lines()
        .filter(|l| l.contains("client authentication failed") && l.contains(setup.client_id()))
        .count();
    assert_eq!(
        failures, 1,
        "one attempt at the token endpoint, no retry, no loop"
    );
    assert!(matches!(
        &*states.borrow_and_update(),
        TokenState::Error { .. }
    ));
    assert!(!err.to_string().contains("not-the-secret"));
}

#[tokio::test]
async fn state_is_published_with_both_deadlines() {
    let setup = Setup::demo(3).await;
    let mut states = setup.client.tokens().subscribe();
    assert_eq!(*states.borrow_and_update(), TokenState::NoToken);
    let before = setup.clock.now();
    setup.client.list_transactions(&one()).await.unwrap();
    assert!(states.has_changed().unwrap());
    let (idle, max) = match states.borrow_and_update().clone() {
        TokenState::Active {
            idle_deadline,
            max_deadline,
        } => (idle_deadline, max_deadline),
        other => panic!("expected active, got {other:?}"),
    };
    assert!((idle - before - TimeDelta::minutes(15)).abs() < TimeDelta::seconds(5));
    assert!((max - before - TimeDelta::minutes(120)).abs() < TimeDelta::seconds(5));

    // A later call moves the idle deadline, not the maximum.
    setup.advance(Duration::from_secs(5 * 60)).await;
    setup.client.list_transactions(&one()).await.unwrap();
    match states.borrow_and_update().clone() {
        TokenState::Active {
            idle_deadline,
            max_deadline,
        } => {
            assert!(idle_deadline - idle >= TimeDelta::minutes(5));
            assert_eq!(max_deadline, max);
        }
        other => panic!("expected active, got {other:?}"),
    }

    // A watcher sees the refresh and the revocation.
    let watcher = {
        let mut states = setup.client.tokens().subscribe();
        tokio::spawn(async move {
            let mut seen = Vec::new();
            while states.changed().await.is_ok() {
                let state = states.borrow_and_update().clone();
                let done = state == TokenState::Revoked;
                seen.push(state);
                if done {
                    break;
                }
            }
            seen
        })
    };
    setup.client.sign_out().await.unwrap();
    let seen = tokio::time::timeout(Duration::from_secs(5), watcher)
        .await
        .unwrap()
        .unwrap();
    assert_eq!(seen.last(), Some(&TokenState::Revoked));
    let json = serde_json::to_value(TokenState::Active {
        idle_deadline: Utc::now(),
        max_deadline: Utc::now(),
    })
    .unwrap();
    assert_eq!(json["state"], "active");
    assert!(json.get("idleDeadline").is_some() && json.get("maxDeadline").is_some());
}

#[tokio::test]
async fn introspect_and_revoke_on_demand() {
    let setup = Setup::demo(1).await;
    let introspection = setup.client.tokens().introspect().await.unwrap();
    assert!(introspection.active);
    assert_eq!(introspection.client_id, setup.client_id());
    assert_eq!(introspection.scope, "pc pcapi");
    assert_eq!(introspection.token_type, "Bearer");
    assert_eq!(introspection.identity_type, "Partner");

    let token = setup.client.tokens().bearer().await.unwrap();
    setup.client.tokens().revoke().await.unwrap();
    assert_eq!(setup.client.tokens().state(), TokenState::Revoked);
    assert_eq!(
        support::introspect_at_service(&setup.sandbox, &token).await,
        None,
        "the revoked token is refused"
    );
    // Revoking with nothing held is not an error.
    setup.client.tokens().revoke().await.unwrap();
    // A call after sign-out signs in again.
    setup.client.list_transactions(&one()).await.unwrap();
    assert_eq!(setup.client.tokens().issuances(), 2);
}

#[tokio::test]
async fn removing_a_connection_revokes_and_forgets_its_secret() {
    use partner_client::{client_secret, save_client_secret, MemoryStore};
    let setup = Setup::demo(1).await;
    let store = MemoryStore::new();
    let base_url = setup.client.base_url().clone();
    save_client_secret(
        &store,
        &base_url,
        setup.client_id(),
        setup.sandbox.client_secret(),
    )
    .unwrap();
    let token = setup.client.tokens().bearer().await.unwrap();
    setup.client.remove_connection(&store).await.unwrap();
    assert_eq!(setup.client.tokens().state(), TokenState::Revoked);
    assert_eq!(
        support::introspect_at_service(&setup.sandbox, &token).await,
        None
    );
    assert!(client_secret(&store, &base_url, setup.client_id())
        .unwrap()
        .is_none());
}

#[tokio::test]
async fn held_secrets_are_the_client_secret_and_the_token_in_use() {
    let setup = Setup::demo(5).await;
    let before = setup.client.tokens().held_secrets().await;
    assert_eq!(before.len(), 1, "no token yet: only the client secret");
    assert!(before[0].ct_eq(setup.sandbox.client_secret().expose()));
    setup.client.list_transactions(&one()).await.unwrap();
    let token = setup.client.tokens().bearer().await.unwrap();
    let held = setup.client.tokens().held_secrets().await;
    assert_eq!(held.len(), 2);
    assert!(held[1].ct_eq(token.expose()), "the token in use");
}
