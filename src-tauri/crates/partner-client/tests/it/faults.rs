//! The sandbox's faults on demand, met by the client over real HTTP: a 429 with `Retry-After`
//! is waited out, a 503 and a dropped connection are retried on a read and never on a write,
//! and every token revoked at once costs one 401 and a new token.

use crate::rotation::new_product;
use crate::support::Setup;
use partner_client::{CallOutcome, ErrorKind, PageRequest, SandboxControl};
use serde_json::json;
use std::time::Duration;

fn last_call_to(setup: &Setup, path: &str) -> std::sync::Arc<partner_client::CallRecord> {
    setup
        .client
        .calls()
        .snapshot()
        .calls
        .into_iter()
        .rev()
        .find(|c| c.path == path)
        .expect("a call to the path")
}

#[tokio::test]
async fn faults_on_demand_are_waited_out_retried_or_reported_as_a_client_should() {
    let setup = Setup::empty().await;
    let control = SandboxControl::new(setup.sandbox.base_url(), None).unwrap();
    let page = PageRequest::new(0, 5).unwrap();
    setup.client.list_products(&page).await.unwrap();

    // Rate limited twice, told to come back in a second each time: waited out.
    control
        .add_fault(
            &json!({"endpoint": "products", "status": 429, "retryAfterSeconds": 1, "count": 2}),
        )
        .await
        .unwrap();
    setup.client.list_products(&page).await.unwrap();
    let waited = last_call_to(&setup, "/partner/v2/products");
    assert_eq!(
        waited.waits,
        [Duration::from_secs(1), Duration::from_secs(1)]
    );
    assert_eq!(waited.outcome, CallOutcome::Answered { status: 200 });

    // A 503 without Retry-After and a dropped connection: a read goes again.
    control
        .add_fault(&json!({"endpoint": "transactions", "status": 503, "count": 1}))
        .await
        .unwrap();
    setup.client.list_transactions(&page).await.unwrap();
    assert_eq!(last_call_to(&setup, "/partner/v2/transactions").attempts, 2);
    control
        .add_fault(&json!({"endpoint": "products", "drop": true, "count": 1}))
        .await
        .unwrap();
    setup.client.list_products(&page).await.unwrap();
    assert_eq!(last_call_to(&setup, "/partner/v2/products").attempts, 2);
    assert_eq!(control.faults().await.unwrap(), json!([]), "each used up");

    // A write is never sent twice: the 503 is the answer.
    control
        .add_fault(&json!({"endpoint": "products", "status": 503, "count": 1}))
        .await
        .unwrap();
    let refused = setup
        .client
        .create_product(&new_product("faulted", vec![]))
        .await
        .unwrap_err();
    assert_eq!(refused.kind(), ErrorKind::Server, "{refused}");
    assert!(refused.to_string().contains("fault on demand"), "{refused}");
    assert_eq!(last_call_to(&setup, "/partner/v2/products").attempts, 1);

    // Every token revoked: one 401, a new token, and the call goes through.
    let before = setup.client.calls().last_seq();
    assert_eq!(
        control.revoke_all_tokens().await.unwrap(),
        json!({"cleared": 1})
    );
    setup.client.list_products(&page).await.unwrap();
    let since = setup.client.calls().since(before);
    let statuses: Vec<_> = since
        .iter()
        .filter(|c| c.path == "/partner/v2/products")
        .map(|c| c.outcome.clone())
        .collect();
    assert_eq!(
        statuses,
        [
            CallOutcome::Answered { status: 401 },
            CallOutcome::Answered { status: 200 }
        ]
    );
    assert!(
        since.iter().any(|c| c.path == "/oauth2/v1/token"),
        "a new token"
    );

    // Every call until its count or a clear, and the controls are never faulted.
    control
        .add_fault(&json!({"endpoint": "any", "status": 500, "share": 1.0, "count": 100}))
        .await
        .unwrap();
    assert!(setup.client.get_product("nope").await.is_err());
    let listed = control.faults().await.unwrap();
    assert!(listed[0]["applied"].as_u64().unwrap() >= 1, "{listed}");
    assert_eq!(control.clear_faults().await.unwrap(), json!({"cleared": 1}));
    setup.client.list_products(&page).await.unwrap();

    let bad = control
        .add_fault(&json!({"endpoint": "products", "status": 200, "count": 1}))
        .await
        .unwrap_err();
    assert_eq!(bad.kind(), ErrorKind::InvalidRequest);
    assert!(bad.to_string().contains("between 400 and 599"), "{bad}");
}
