//! `GET /openapi.json` against the router: every documented operation is served, the service
//! has exactly the documented operations, and every status the tests see is documented.

use crate::support::{hook, product, Api, KEY_A};
use reqwest::Method;
use serde_json::{json, Value};
use std::collections::BTreeSet;

const EXPECTED: &[(&str, &str)] = &[
    ("post", "/oauth2/v1/token"),
    ("post", "/oauth2/v1/token/introspection"),
    ("post", "/oauth2/v1/token/revocation"),
    ("get", "/partner/v2/products"),
    ("post", "/partner/v2/products"),
    ("get", "/partner/v2/products/{id}"),
    ("patch", "/partner/v2/products/{id}"),
    ("get", "/partner/v2/transactions"),
    ("get", "/partner/v2/transactions/{id}"),
    ("patch", "/partner/v2/transactions/{id}/response"),
    ("get", "/partner/v2/transactions/{id}/events"),
    ("get", "/partner/v2/transactions/{id}/events/{event_id}"),
    ("post", "/sandbox/v1/transactions"),
    ("patch", "/sandbox/v1/transactions/{id}"),
    ("post", "/sandbox/v1/transactions/{id}/events"),
    ("get", "/sandbox/v1/deliveries"),
    ("post", "/sandbox/v1/clock/advance"),
    ("post", "/sandbox/v1/latency"),
    ("get", "/sandbox/v1/delivery"),
    ("get", "/sandbox/v1/faults"),
    ("post", "/sandbox/v1/faults"),
    ("delete", "/sandbox/v1/faults"),
    ("post", "/sandbox/v1/tokens/revoke"),
];

async fn document(api: &Api) -> Value {
    let response = api.http.get(api.url("/openapi.json")).send().await.unwrap();
    assert_eq!(response.status(), 200);
    response.json().await.unwrap()
}

fn operations(doc: &Value) -> BTreeSet<(String, String)> {
    let mut out = BTreeSet::new();
    for (path, item) in doc["paths"].as_object().unwrap() {
        for method in item.as_object().unwrap().keys() {
            if ["get", "post", "put", "patch", "delete"].contains(&method.as_str()) {
                out.insert((method.clone(), path.clone()));
            }
        }
    }
    out
}

fn concrete(template: &str) -> String {
    template
        .replace("{id}", "some-id")
        .replace("{event_id}", "some-event")
}

fn documents(doc: &Value, method: &str, template: &str, status: u16) -> bool {
    doc["paths"][template][method]["responses"]
        .get(status.to_string())
        .is_some()
}

#[tokio::test]
async fn the_document_and_the_router_agree() {
    let api = Api::start().await;
    let doc = document(&api).await;
    assert!(doc["openapi"].as_str().unwrap().starts_with("3."));
    let documented = operations(&doc);
    let expected: BTreeSet<(String, String)> = EXPECTED
        .iter()
        .map(|(m, p)| (m.to_string(), p.to_string()))
        .collect();
    assert_eq!(
        documented, expected,
        "the service has exactly the endpoints of the issue"
    );

    for (method, template) in &documented {
        let path = concrete(template);
        let verb = Method::from_bytes(method.to_uppercase().as_bytes()).unwrap();
        // Served: an unauthenticated, bodiless call is answered by the route (a documented
        // status), not by the fallback or the method router.
        let response = api
            .http
            .request(verb.clone(), api.url(&path))
            .send()
            .await
            .unwrap();
        let status = response.status().as_u16();
        let body: Value = response.json().await.unwrap();
        assert_ne!(status, 405, "{method} {template}");
        assert_ne!(body["summary"], "no such endpoint", "{method} {template}");
        assert!(
            documents(&doc, method, template, status),
            "{method} {template} answered {status}, undocumented"
        );
        // Nothing is served on a documented path beyond its documented methods.
        for other in ["get", "post", "put", "patch", "delete"] {
            if documented.contains(&(other.to_string(), template.clone())) {
                continue;
            }
            let verb = Method::from_bytes(other.to_uppercase().as_bytes()).unwrap();
            let response = api.http.request(verb, api.url(&path)).send().await.unwrap();
            assert_eq!(
                response.status(),
                405,
                "{other} {template} is not documented, so not served"
            );
        }
    }
    // Schemas of the wire types are there.
    for schema in [
        "Product",
        "Transaction",
        "TransactionEvent",
        "ApiError",
        "TokenResponse",
        "Introspection",
        "DeliveryRecord",
    ] {
        assert!(
            doc["components"]["schemas"].get(schema).is_some(),
            "{schema}"
        );
    }
}

/// Calls every operation into its success and its error answers and checks each status is in
/// the document.
#[tokio::test]
async fn every_status_the_server_gives_is_documented() {
    let api = Api::start().await;
    let doc = document(&api).await;
    let token = api.token().await;
    let id = api.sandbox.client_id().to_string();
    let secret = api.sandbox.client_secret().expose().to_string();
    let mut seen: Vec<(&str, &str, u16)> = Vec::new();
    macro_rules! record {
        ($method:expr, $template:expr, $response:expr) => {{
            let response = $response;
            seen.push(($method, $template, response.status().as_u16()));
            response
        }};
    }
    let form = |path: &str, pairs: Vec<(&'static str, String)>, auth: bool| {
        let mut request = api.http.post(api.url(path)).form(&pairs);
        if auth {
            request = request.basic_auth(&id, Some(&secret));
        }
        request.send()
    };
    let grant = || {
        vec![
            ("grant_type", "client_credentials".to_string()),
            ("scope", "pc pcapi".to_string()),
        ]
    };
    record!(
        "post",
        "/oauth2/v1/token",
        form("/oauth2/v1/token", grant(), true).await.unwrap()
    );
    record!(
        "post",
        "/oauth2/v1/token",
        form("/oauth2/v1/token", grant(), false).await.unwrap()
    );
    record!(
        "post",
        "/oauth2/v1/token",
        form("/oauth2/v1/token", vec![("grant_type", "x".into())], true)
            .await
            .unwrap()
    );
    record!(
        "post",
        "/oauth2/v1/token",
        api.http
            .post(api.url("/oauth2/v1/token"))
            .json(&json!({}))
            .send()
            .await
            .unwrap()
    );
    let spare = api.token().await;
    for path in [
        "/oauth2/v1/token/introspection",
        "/oauth2/v1/token/revocation",
    ] {
        record!(
            "post",
            path,
            form(path, vec![("token", spare.clone())], true)
                .await
                .unwrap()
        );
        record!(
            "post",
            path,
            form(path, vec![("token", "nope".into())], true)
                .await
                .unwrap()
        );
        record!("post", path, form(path, vec![], true).await.unwrap());
        record!(
            "post",
            path,
            form(path, vec![("token", spare.clone())], false)
                .await
                .unwrap()
        );
    }

    record!(
        "get",
        "/partner/v2/products",
        api.get("/partner/v2/products", &token).await
    );
    record!(
        "get",
        "/partner/v2/products",
        api.get("/partner/v2/products?limit=99", &token).await
    );
    record!(
        "get",
        "/partner/v2/products",
        api.get("/partner/v2/products", "bad").await
    );
    let mut body = product("documented");
    body["webhooks"] = json!([hook(
        "https://h.example/",
        "urn:svc:partner:transaction",
        &["created"],
        KEY_A
    )]);
    let created: Value = record!(
        "post",
        "/partner/v2/products",
        api.post_json("/partner/v2/products", Some(&token), &body)
            .await
    )
    .json()
    .await
    .unwrap();
    record!(
        "post",
        "/partner/v2/products",
        api.post_json("/partner/v2/products", Some(&token), &body)
            .await
    );
    record!(
        "post",
        "/partner/v2/products",
        api.post_json("/partner/v2/products", Some(&token), &json!({}))
            .await
    );
    record!(
        "post",
        "/partner/v2/products",
        api.request(Method::POST, "/partner/v2/products", Some(&token))
            .body("x")
            .send()
            .await
            .unwrap()
    );
    let product_id = created["id"].as_str().unwrap().to_string();
    let product_path = format!("/partner/v2/products/{product_id}");
    record!(
        "get",
        "/partner/v2/products/{id}",
        api.get(&product_path, &token).await
    );
    record!(
        "get",
        "/partner/v2/products/{id}",
        api.get("/partner/v2/products/none", &token).await
    );
    record!(
        "patch",
        "/partner/v2/products/{id}",
        api.merge_patch(&product_path, &token, &json!({"listingName": "L"}))
            .await
    );
    record!(
        "patch",
        "/partner/v2/products/{id}",
        api.merge_patch(&product_path, &token, &json!({"name": "other"}))
            .await
    );
    record!(
        "patch",
        "/partner/v2/products/{id}",
        api.merge_patch("/partner/v2/products/none", &token, &json!({}))
            .await
    );
    record!(
        "patch",
        "/partner/v2/products/{id}",
        api.patch_raw(&product_path, Some(&token), "application/json", "{}")
            .await
    );

    let created_tx: Value = record!(
        "post",
        "/sandbox/v1/transactions",
        api.post_json(
            "/sandbox/v1/transactions",
            None,
            &json!({"productId": product_id, "requestType": "NEW_REQUEST"})
        )
        .await
    )
    .json()
    .await
    .unwrap();
    record!(
        "post",
        "/sandbox/v1/transactions",
        api.post_json(
            "/sandbox/v1/transactions",
            None,
            &json!({"productId": "none", "requestType": "NEW_REQUEST"})
        )
        .await
    );
    record!(
        "post",
        "/sandbox/v1/transactions",
        api.post_json("/sandbox/v1/transactions", None, &json!({}))
            .await
    );
    let tx_id = created_tx["id"].as_str().unwrap().to_string();
    let lender_path = format!("/sandbox/v1/transactions/{tx_id}");
    record!(
        "patch",
        "/sandbox/v1/transactions/{id}",
        api.patch_raw(
            &lender_path,
            None,
            "application/json",
            r#"{"loan":{"a":1}}"#
        )
        .await
    );
    record!(
        "patch",
        "/sandbox/v1/transactions/{id}",
        api.patch_raw(&lender_path, None, "application/json", "{}")
            .await
    );
    record!(
        "patch",
        "/sandbox/v1/transactions/{id}",
        api.patch_raw(
            "/sandbox/v1/transactions/none",
            None,
            "application/json",
            r#"{"loan":{}}"#
        )
        .await
    );
    let events_path = format!("/sandbox/v1/transactions/{tx_id}/events");
    record!(
        "post",
        "/sandbox/v1/transactions/{id}/events",
        api.post_json(&events_path, None, &json!({"type": "urn:a:b", "text": "t"}))
            .await
    );
    record!(
        "post",
        "/sandbox/v1/transactions/{id}/events",
        api.post_json(&events_path, None, &json!({"type": "b", "text": "t"}))
            .await
    );
    record!(
        "post",
        "/sandbox/v1/transactions/{id}/events",
        api.post_json(
            "/sandbox/v1/transactions/none/events",
            None,
            &json!({"type": "urn:a:b", "text": "t"})
        )
        .await
    );

    record!(
        "get",
        "/partner/v2/transactions",
        api.get("/partner/v2/transactions?sort=-created", &token)
            .await
    );
    record!(
        "get",
        "/partner/v2/transactions",
        api.get("/partner/v2/transactions?sort=x", &token).await
    );
    record!(
        "get",
        "/partner/v2/transactions/{id}",
        api.get(&format!("/partner/v2/transactions/{tx_id}"), &token)
            .await
    );
    record!(
        "get",
        "/partner/v2/transactions/{id}",
        api.get("/partner/v2/transactions/none", &token).await
    );
    record!(
        "get",
        "/partner/v2/transactions/{id}/events",
        api.get(&format!("/partner/v2/transactions/{tx_id}/events"), &token)
            .await
    );
    record!(
        "get",
        "/partner/v2/transactions/{id}/events",
        api.get("/partner/v2/transactions/none/events", &token)
            .await
    );
    let events: Value = api
        .get_json(&format!("/partner/v2/transactions/{tx_id}/events"), &token)
        .await;
    let event_id = events[0]["id"].as_str().unwrap();
    record!(
        "get",
        "/partner/v2/transactions/{id}/events/{event_id}",
        api.get(
            &format!("/partner/v2/transactions/{tx_id}/events/{event_id}"),
            &token
        )
        .await
    );
    record!(
        "get",
        "/partner/v2/transactions/{id}/events/{event_id}",
        api.get(
            &format!("/partner/v2/transactions/{tx_id}/events/none"),
            &token
        )
        .await
    );
    let respond = format!("/partner/v2/transactions/{tx_id}/response");
    record!(
        "patch",
        "/partner/v2/transactions/{id}/response",
        api.patch_raw(
            &respond,
            Some(&token),
            "application/json",
            r#"{"status":"x"}"#
        )
        .await
    );
    record!(
        "patch",
        "/partner/v2/transactions/{id}/response",
        api.patch_raw(&respond, Some(&token), "text/plain", "x")
            .await
    );
    record!(
        "patch",
        "/partner/v2/transactions/{id}/response",
        api.patch_raw(
            &respond,
            Some(&token),
            "application/json",
            r#"{"status":"completed"}"#
        )
        .await
    );
    record!(
        "patch",
        "/partner/v2/transactions/{id}/response",
        api.patch_raw(
            &respond,
            Some(&token),
            "application/json",
            r#"{"status":"completed"}"#
        )
        .await
    );
    record!(
        "patch",
        "/sandbox/v1/transactions/{id}",
        api.patch_raw(
            &lender_path,
            None,
            "application/json",
            r#"{"loan":{"a":1}}"#
        )
        .await
    );

    record!(
        "get",
        "/sandbox/v1/deliveries",
        api.http
            .get(api.url("/sandbox/v1/deliveries"))
            .send()
            .await
            .unwrap()
    );
    record!(
        "get",
        "/sandbox/v1/deliveries",
        api.http
            .get(api.url("/sandbox/v1/deliveries?x=1"))
            .send()
            .await
            .unwrap()
    );
    record!(
        "post",
        "/sandbox/v1/clock/advance",
        api.post_json("/sandbox/v1/clock/advance", None, &json!({"seconds": 1}))
            .await
    );
    record!(
        "post",
        "/sandbox/v1/clock/advance",
        api.post_json("/sandbox/v1/clock/advance", None, &json!({"seconds": 0}))
            .await
    );
    record!(
        "post",
        "/sandbox/v1/latency",
        api.post_json("/sandbox/v1/latency", None, &json!({"milliseconds": 0}))
            .await
    );
    record!(
        "post",
        "/sandbox/v1/latency",
        api.post_json("/sandbox/v1/latency", None, &json!({"milliseconds": -1}))
            .await
    );
    for body in [
        json!({"endpoint": "products", "status": 503, "count": 1}),
        json!({"endpoint": "products", "status": 200, "count": 1}),
        json!({"endpoint": "nowhere", "drop": true, "count": 1}),
    ] {
        record!(
            "post",
            "/sandbox/v1/faults",
            api.post_json("/sandbox/v1/faults", None, &body).await
        );
    }
    for (method, path) in [
        ("get", "/sandbox/v1/faults"),
        ("delete", "/sandbox/v1/faults"),
        ("post", "/sandbox/v1/tokens/revoke"),
    ] {
        let method_of = reqwest::Method::from_bytes(method.to_uppercase().as_bytes()).unwrap();
        for query in ["", "?x=1"] {
            record!(
                method,
                path,
                api.http
                    .request(method_of.clone(), api.url(&format!("{path}{query}")))
                    .send()
                    .await
                    .unwrap()
            );
        }
    }
    for query in ["", "?x=1"] {
        record!(
            "get",
            "/sandbox/v1/delivery",
            api.http
                .get(api.url(&format!("/sandbox/v1/delivery{query}")))
                .send()
                .await
                .unwrap()
        );
    }

    let mut statuses = BTreeSet::new();
    for (method, template, status) in &seen {
        assert!(
            documents(&doc, method, template, *status),
            "{method} {template} answered {status}, undocumented"
        );
        statuses.insert(*status);
    }
    for status in [200, 201, 204, 400, 401, 404, 409, 415] {
        assert!(statuses.contains(&status), "the scenario covers {status}");
    }
}

fn schema<'a>(doc: &'a Value, name: &str) -> &'a Value {
    let found = &doc["components"]["schemas"][name];
    assert!(found.is_object(), "schema {name} is in the document");
    found
}

fn enum_values(schema: &Value) -> Vec<String> {
    schema["enum"]
        .as_array()
        .unwrap_or_else(|| panic!("an enum: {schema}"))
        .iter()
        .map(|v| v.as_str().unwrap().to_string())
        .collect()
}

/// The rules partner-api enforces are the ones the document states, from the same constants.
#[tokio::test]
async fn the_document_states_the_rules_the_server_enforces() {
    use partner_api::{list, product, signing_key, EventType, ResourceType, ResponseStatus};
    let api = Api::start().await;
    let doc = document(&api).await;

    for path in ["/partner/v2/products", "/partner/v2/transactions"] {
        let operation = &doc["paths"][path]["get"];
        let param = |name: &str| {
            operation["parameters"]
                .as_array()
                .unwrap()
                .iter()
                .find(|p| p["name"] == name)
                .unwrap_or_else(|| panic!("{path} documents {name}"))["schema"]
                .clone()
        };
        assert_eq!(param("start")["minimum"], 0);
        assert_eq!(param("limit")["minimum"], 0);
        assert_eq!(param("limit")["maximum"], list::MAX_LIMIT);
        assert_eq!(param("limit")["default"], list::DEFAULT_LIMIT);
        assert!(param("sort")["pattern"]
            .as_str()
            .unwrap()
            .contains("created"));
        let header = &operation["responses"]["200"]["headers"]["X-Total-Count"];
        assert_eq!(header["schema"]["minimum"], 0, "{path}: {header}");
    }

    let new_product = schema(&doc, "NewProduct");
    let props = &new_product["properties"];
    assert_eq!(
        new_product["required"],
        json!(["name", "listingName", "requestTypes"])
    );
    assert_eq!(props["name"]["maxLength"], product::NAME_MAX);
    assert_eq!(props["name"]["minLength"], 1);
    assert_eq!(props["listingName"]["maxLength"], product::LISTING_NAME_MAX);
    assert_eq!(props["requestTypes"]["minItems"], 1);
    assert_eq!(
        enum_values(&props["requestTypes"]["items"]),
        product::REQUEST_TYPES
    );
    assert_eq!(props["webhooks"]["maxItems"], product::MAX_WEBHOOKS);
    assert_eq!(new_product["additionalProperties"], false);

    let hook = &schema(&doc, "NewWebhookSubscription")["properties"];
    assert_eq!(hook["signingkey"]["pattern"], signing_key::PATTERN);
    assert_eq!(hook["signingkey"]["minLength"], signing_key::MIN_LEN);
    assert_eq!(hook["signingkey"]["maxLength"], signing_key::MAX_LEN);
    assert_eq!(hook["signingkey"]["writeOnly"], true);
    assert_eq!(hook["events"]["uniqueItems"], true);
    let event_types: Vec<&str> = EventType::ALL.iter().map(|e| e.as_str()).collect();
    assert_eq!(enum_values(schema(&doc, "EventType")), event_types);
    let resources: Vec<&str> = ResourceType::ALL.iter().map(|r| r.as_str()).collect();
    assert_eq!(enum_values(schema(&doc, "ResourceType")), resources);
    let statuses: Vec<&str> = ResponseStatus::ALL.iter().map(|s| s.as_str()).collect();
    assert_eq!(enum_values(schema(&doc, "ResponseStatus")), statuses);
    assert!(schema(&doc, "SubscriptionChange")["required"]
        .as_array()
        .unwrap()
        .contains(&json!("subscriptionId")));

    // The token endpoints take forms, and say which fields.
    for (path, schema_name, field) in [
        ("/oauth2/v1/token", "TokenRequest", "grant_type"),
        ("/oauth2/v1/token/introspection", "TokenForm", "token"),
        ("/oauth2/v1/token/revocation", "TokenForm", "token"),
    ] {
        let content = &doc["paths"][path]["post"]["requestBody"]["content"];
        let form = &content["application/x-www-form-urlencoded"]["schema"]["$ref"];
        assert_eq!(
            form,
            &json!(format!("#/components/schemas/{schema_name}")),
            "{path}"
        );
        assert!(schema(&doc, schema_name)["required"]
            .as_array()
            .unwrap()
            .contains(&json!(field)));
    }
    let grant = &schema(&doc, "TokenRequest")["properties"]["grant_type"];
    assert_eq!(enum_values(grant), ["client_credentials"]);

    let advance = &schema(&doc, "ClockAdvance")["properties"]["seconds"];
    assert_eq!(advance["maximum"], partner_sandbox::MAX_ADVANCE_SECONDS);
    let latency = &schema(&doc, "SimulatedLatency")["properties"]["milliseconds"];
    assert_eq!(
        latency["maximum"],
        partner_sandbox::MAX_LATENCY_MILLISECONDS
    );
}

/// Links name their target with `operationId` (OpenAPI's spelling), and every target exists.
#[tokio::test]
async fn links_name_operations_that_exist() {
    let api = Api::start().await;
    let doc = document(&api).await;
    let mut operation_ids = BTreeSet::new();
    let mut targets = Vec::new();
    for item in doc["paths"].as_object().unwrap().values() {
        for operation in item.as_object().unwrap().values() {
            if let Some(id) = operation["operationId"].as_str() {
                operation_ids.insert(id.to_string());
            }
            for response in operation["responses"].as_object().unwrap().values() {
                for link in response["links"].as_object().into_iter().flatten() {
                    assert!(link.1.get("operation_id").is_none(), "{link:?}");
                    targets.push(link.1["operationId"].as_str().unwrap().to_string());
                }
            }
        }
    }
    assert!(targets.len() >= 8, "{targets:?}");
    for target in targets {
        assert!(operation_ids.contains(&target), "{target}");
    }
}
