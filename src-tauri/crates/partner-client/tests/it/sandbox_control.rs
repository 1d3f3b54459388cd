//! The one client of the sandbox's own endpoints against a real sandbox over HTTP: the lender's
//! calls, its delivery records, its admin token, and its errors in the sandbox's words.
use partner_api::{NewEvent, NewTransaction, Secret, TransactionUpdate};
use partner_client::{ClientError, SandboxControl};
use partner_sandbox::{DemoData, SandboxConfig};
use partner_testkit::TestSandbox;

async fn a_product(sandbox: &TestSandbox) -> String {
    let (id, secret) = sandbox.clients().remove(0);
    let client = partner_client::PartnerClient::new(
        partner_client::ConnectionConfig::new(sandbox.base_url(), id, secret).expect("config"),
    )
    .expect("client");
    client
        .list_products(&partner_client::PageRequest::new(0, 1).expect("a page"))
        .await
        .expect("products")
        .items[0]
        .id
        .clone()
}

#[tokio::test]
async fn the_lender_s_calls_and_the_delivery_records_go_through_one_client() {
    let sandbox = TestSandbox::start_demo().await;
    let control = SandboxControl::new(sandbox.base_url(), None).expect("control");
    let product = a_product(&sandbox).await;
    let created = control
        .create_transaction(&NewTransaction {
            product_id: product,
            request_type: "NEW_REQUEST".into(),
            loan: Some(serde_json::json!({"loanNumber": "L-1"})),
            options: None,
        })
        .await
        .expect("created");
    let id = created["id"].as_str().expect("an id").to_string();
    let updated = control
        .update_transaction(
            &id,
            &TransactionUpdate {
                loan: Some(serde_json::json!({"loanNumber": "L-2"})),
                options: None,
            },
        )
        .await
        .expect("updated");
    assert_eq!(updated["id"], created["id"]);
    let event = control
        .add_event(
            &id,
            &NewEvent {
                event_type: "urn:test:note".into(),
                text: "a note".into(),
                comments: None,
            },
        )
        .await
        .expect("event");
    let event_id = event["id"].as_str().expect("its id");
    let every = control.deliveries(None).await.expect("records");
    let of_event = control.deliveries(Some(event_id)).await.expect("records");
    assert!(of_event.iter().all(|r| r.event_id == event_id));
    assert!(of_event.len() <= every.len());

    let missing = control
        .update_transaction(
            "no/such id",
            &TransactionUpdate {
                loan: None,
                options: None,
            },
        )
        .await
        .expect_err("no such transaction");
    assert!(
        matches!(
            missing,
            ClientError::NotFound { .. } | ClientError::InvalidRequest { .. }
        ),
        "{missing:?}"
    );
    sandbox.stop().await;
}

#[tokio::test]
async fn a_guarded_sandbox_takes_its_admin_token_and_refuses_without_it() {
    let token = "admin-token-0123456789";
    let sandbox = TestSandbox::start_with(SandboxConfig {
        admin_token: Some(Secret::new(token)),
        demo: Some(DemoData { transactions: 5 }),
        ..SandboxConfig::default()
    })
    .await;
    let refused = SandboxControl::new(sandbox.base_url(), None)
        .expect("control")
        .deliveries(None)
        .await
        .expect_err("no token");
    assert!(
        matches!(&refused, ClientError::InvalidRequest { status: 403, message } if message.contains("admin token")),
        "refused in the sandbox's words: {refused:?}"
    );
    let guarded =
        SandboxControl::new(sandbox.base_url(), Some(Secret::new(token))).expect("control");
    guarded.deliveries(None).await.expect("with its token");
    assert!(
        !format!("{guarded:?}").contains(token),
        "the token never shows"
    );
    // The control's calls are in a call log, the admin token a variable in their curl text;
    // given a connection's log, they are kept there.
    let connection_log = partner_client::CallLog::default();
    let guarded = guarded.with_call_log(&connection_log);
    guarded.deliveries(None).await.expect("again");
    let kept = connection_log.snapshot().calls;
    assert_eq!(kept.len(), 1, "{kept:?}");
    assert_eq!(
        kept[0].outcome,
        partner_client::CallOutcome::Answered { status: 200 }
    );
    assert!(
        kept[0].path.ends_with("/sandbox/v1/deliveries"),
        "{}",
        kept[0].path
    );
    let curl = kept[0].curl();
    assert!(!curl.contains(token), "{curl}");
    assert!(curl.contains("PARTNER_TOKEN"), "{curl}");
    sandbox.stop().await;
}
