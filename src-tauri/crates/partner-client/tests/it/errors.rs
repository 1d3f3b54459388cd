//! Errors from the real sandbox: each status lands on its kind, with the server's words.

use crate::rotation::new_product;
use crate::support::Setup;
use partner_client::{ClientError, ErrorKind};

#[tokio::test]
async fn server_refusals_keep_their_kind_and_message() {
    let setup = Setup::empty().await;
    setup
        .client
        .create_product(&new_product("twice", vec![]))
        .await
        .unwrap();
    let duplicate = setup
        .client
        .create_product(&new_product("twice", vec![]))
        .await
        .unwrap_err();
    assert_eq!(duplicate.kind(), ErrorKind::Conflict, "{duplicate}");

    let product = setup
        .client
        .create_product(&new_product("patched", vec![]))
        .await
        .unwrap();
    let read_only = setup
        .client
        .patch_product(&product.id, &serde_json::json!({ "name": "renamed" }))
        .await
        .unwrap_err();
    assert_eq!(read_only.kind(), ErrorKind::InvalidRequest, "{read_only}");
    match &read_only {
        ClientError::InvalidRequest { status, message } => {
            assert_eq!(*status, 400);
            assert!(
                message.contains("name"),
                "the server's own words: {message}"
            );
        }
        other => panic!("unexpected {other:?}"),
    }
    assert!(read_only.server_message().is_some());

    let kinds = serde_json::to_value([ErrorKind::RateLimited, ErrorKind::InvalidRequest]).unwrap();
    assert_eq!(
        kinds,
        serde_json::json!(["rate_limited", "invalid_request"])
    );
}

#[tokio::test]
async fn an_unreachable_service_is_a_network_error() {
    let listener = std::net::TcpListener::bind("127.0.0.1:0").unwrap();
    let url = format!("http://{}", listener.local_addr().unwrap());
    drop(listener);
    let mut config = partner_client::ConnectionConfig::new(&url, "c", "s".into()).unwrap();
    config.retry.initial_backoff = std::time::Duration::from_millis(5);
    let client = partner_client::PartnerClient::new(config).unwrap();
    let err = client
        .list_products(&partner_client::PageRequest::default())
        .await
        .unwrap_err();
    assert_eq!(err.kind(), ErrorKind::Network, "{err}");
    assert!(matches!(
        client.tokens().state(),
        partner_client::TokenState::Error { .. }
    ));
}
