//! Writes over real HTTP: each one recorded with the service's answer, every one refused
//! before sending on a read-only connection (no call, no token, no keychain change), and no
//! signing key in any record.

use crate::rotation::{lender_creates_transaction, new_product, subscription, RecordingStore};
use crate::support::{answer, Setup, Strict};
use partner_api::{signing_key, ResourceType, ResponseStatus};
use partner_client::{
    ErrorKind, MemoryStore, NewSubscription, SecretStore, WriteAction, WriteJournal, WriteOutcome,
    WriteRecord,
};
use std::sync::{Arc, Mutex};

#[derive(Default)]
struct Journal(Mutex<Vec<WriteRecord>>);

impl WriteJournal for Journal {
    fn record(&self, record: &WriteRecord) {
        self.0.lock().unwrap().push(record.clone());
    }
}

impl Journal {
    fn records(&self) -> Vec<WriteRecord> {
        self.0.lock().unwrap().clone()
    }
}

#[tokio::test]
async fn every_write_is_recorded_with_the_services_answer_and_no_secret() {
    let setup = Setup::empty().await;
    let journal = Arc::new(Journal::default());
    setup.client.journal_writes(Some(journal.clone()));
    let store = MemoryStore::new();
    let key = signing_key::generate();
    let product = setup
        .client
        .create_product_storing_keys(
            &store,
            &new_product(
                "audited",
                vec![subscription(
                    "http://127.0.0.1:9/hook".into(),
                    &key,
                    ResourceType::Transaction,
                )],
            ),
        )
        .await
        .unwrap()
        .strict();
    let subscription_id = product.webhooks[0].subscription_id.clone();
    setup
        .client
        .rotate_signing_key(&store, &product.id, &subscription_id, None)
        .await
        .unwrap();
    let id = lender_creates_transaction(&setup, &product.id).await;
    setup
        .client
        .respond_to_transaction(&id, &answer(ResponseStatus::Completed))
        .await
        .unwrap();
    let locked = setup
        .client
        .respond_to_transaction(&id, &answer(ResponseStatus::Failed))
        .await
        .unwrap_err();
    assert_eq!(locked.kind(), ErrorKind::Conflict);

    let records = journal.records();
    let actions: Vec<WriteAction> = records.iter().map(|r| r.action).collect();
    assert_eq!(
        actions,
        [
            WriteAction::CreateProduct,
            WriteAction::RotateKey,
            WriteAction::Respond,
            WriteAction::Respond
        ]
    );
    assert_eq!(records[0].call, "POST /partner/v2/products");
    assert_eq!(records[2].target, format!("transaction {id}"));
    assert_eq!(
        records[2].call,
        format!("PATCH /partner/v2/transactions/{id}/response")
    );
    assert_eq!(records[2].sent["status"], "completed");
    assert!(matches!(
        records[2].outcome,
        WriteOutcome::Done { status: 200, .. }
    ));
    match &records[3].outcome {
        WriteOutcome::Failed { status, error, .. } => {
            assert_eq!(*status, Some(409));
            assert!(error.contains("conflict"), "{error}");
        }
        other => panic!("the locked answer failed: {other:?}"),
    }
    // No signing key anywhere: neither the created one nor the rotated one.
    let rotated = partner_client::signing_keys(&store, &subscription_id)
        .unwrap()
        .unwrap()
        .current;
    let text = serde_json::to_string(&records).unwrap();
    assert!(!text.contains(key.expose()), "the created key leaked");
    assert!(!text.contains(rotated.expose()), "the rotated key leaked");
    assert!(text.contains("[redacted]"));
}

#[tokio::test]
async fn a_read_only_connection_refuses_every_write_before_sending() {
    let setup = Setup::empty().await;
    let product = setup
        .client
        .create_product(&new_product("before read-only", vec![]))
        .await
        .unwrap()
        .strict();
    let id = lender_creates_transaction(&setup, &product.id).await;
    let journal = Arc::new(Journal::default());
    setup.client.journal_writes(Some(journal.clone()));
    setup.client.set_read_only(true);
    let calls_before = setup.client.calls().last_seq();
    let store = Arc::new(RecordingStore::default());
    let dyn_store: Arc<dyn SecretStore> = store.clone();

    let refusals = vec![
        setup
            .client
            .respond_to_transaction(&id, &answer(ResponseStatus::Processing))
            .await
            .unwrap_err(),
        setup
            .client
            .create_product(&new_product("never", vec![]))
            .await
            .unwrap_err(),
        setup
            .client
            .patch_product(&product.id, &serde_json::json!({"name": "renamed"}))
            .await
            .unwrap_err(),
        setup
            .client
            .add_subscription(
                &dyn_store,
                &product.id,
                &NewSubscription {
                    url: "http://127.0.0.1:9/hook".into(),
                    events: vec![partner_api::EventType::Created],
                    resource: ResourceType::Transaction,
                },
                None,
            )
            .await
            .unwrap_err(),
        setup
            .client
            .rotate_signing_key(store.as_ref(), &product.id, "s-1", None)
            .await
            .unwrap_err(),
    ];
    for refusal in &refusals {
        assert_eq!(refusal.kind(), ErrorKind::ReadOnly, "{refusal}");
        assert!(refusal.to_string().contains("read-only"), "{refusal}");
    }
    assert_eq!(
        setup.client.calls().last_seq(),
        calls_before,
        "nothing was sent: no call, not even a product read"
    );
    assert!(store.log().is_empty(), "the keychain was not touched");
    let records = journal.records();
    assert_eq!(records.len(), refusals.len());
    assert!(records
        .iter()
        .all(|r| matches!(r.outcome, WriteOutcome::Refused { .. })));
    // Reads still work, and turning read-only off lets the write through.
    assert_eq!(setup.client.get_transaction(&id).await.unwrap().id, id);
    setup.client.set_read_only(false);
    assert!(!setup.client.is_read_only());
    setup
        .client
        .respond_to_transaction(&id, &answer(ResponseStatus::Processing))
        .await
        .unwrap();
}

/// A write's record carries the service's request id as its call log saw it, sent or refused by
/// the service: on the second implementation, which answers with one (our sandbox sends none).
#[tokio::test]
async fn a_write_s_record_carries_the_service_s_request_id() {
    let service = partner_testkit::OtherService::start(partner_testkit::Dialect::default()).await;
    let config = partner_client::ConnectionConfig::new(
        &service.base_url(),
        service.client_id(),
        service.client_secret().clone(),
    )
    .unwrap();
    let client = partner_client::PartnerClient::new(config).unwrap();
    let journal = Arc::new(Journal::default());
    client.journal_writes(Some(journal.clone()));
    let product_id = service.products()[0]["id"].as_str().unwrap().to_owned();
    let patch = serde_json::json!({"listingName": "Renamed"});
    client.patch_product(&product_id, &patch).await.unwrap();
    let refused = client
        .patch_product(&product_id, &serde_json::json!({"id": "another"}))
        .await
        .unwrap_err();
    assert_eq!(refused.kind(), ErrorKind::InvalidRequest, "{refused}");

    let logged: Vec<String> = client
        .calls()
        .snapshot()
        .calls
        .iter()
        .filter(|c| c.method == "PATCH")
        .map(|c| {
            c.request_id
                .as_ref()
                .expect("the service's request id")
                .value
                .clone()
        })
        .collect();
    let records = journal.records();
    match (&records[0].outcome, &records[1].outcome) {
        (
            WriteOutcome::Done {
                status: 200,
                request_id: done,
            },
            WriteOutcome::Failed {
                status: Some(400),
                request_id: failed,
                ..
            },
        ) => {
            assert_eq!(done.as_deref(), Some(logged[0].as_str()));
            assert_eq!(failed.as_deref(), Some(logged[1].as_str()));
        }
        other => panic!("a change and a refusal: {other:?}"),
    }
}
