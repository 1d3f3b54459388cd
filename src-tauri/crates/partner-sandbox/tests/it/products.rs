//! Products: create, read, list (paging and sorting), merge-patch with the subscription
//! rules, and one partner never seeing another's.

use crate::support::{expect_error, hook, product, total, Api, KEY_A, KEY_B, KEY_C};
use partner_sandbox::{partner_id_of, ClientCredentials, SandboxConfig};
use serde_json::{json, Value};

const TX: &str = "urn:svc:partner:transaction";
const EV: &str = "urn:svc:partner:transaction:event";

fn two_partners() -> SandboxConfig {
    SandboxConfig {
        clients: vec![
            ClientCredentials::new("alpha", "alpha-secret"),
            ClientCredentials::new("beta", "beta-secret"),
        ],
        allow_http_callbacks: true,
        ..SandboxConfig::default()
    }
}

#[tokio::test]
async fn create_sets_server_fields_and_never_returns_a_key() {
    let api = Api::start().await;
    let token = api.token().await;
    let mut body = product("acme-valuation");
    body["webhooks"] = json!([hook(
        "https://hooks.example/t",
        TX,
        &["created", "updated"],
        KEY_A
    )]);
    body["interfaceUrl"] = json!("https://acme.example/order");
    let response = api
        .post_json("/partner/v2/products", Some(&token), &body)
        .await;
    assert_eq!(response.status(), 201);
    let text = response.text().await.unwrap();
    assert!(!text.contains(KEY_A));
    let created: Value = serde_json::from_str(&text).unwrap();
    assert!(uuid_like(created["id"].as_str().unwrap()));
    assert_eq!(created["partnerId"], partner_id_of(api.sandbox.client_id()));
    assert_eq!(created["environment"], "sandbox");
    assert_eq!(created["status"], "development");
    assert_eq!(created["integrationType"], "ASYNC");
    assert_eq!(created["extensionLimit"], 0);
    assert_eq!(created["createdBy"], api.sandbox.client_id());
    let hooks = created["webhooks"].as_array().unwrap();
    assert_eq!(hooks.len(), 1);
    assert!(hooks[0]["subscriptionId"].as_str().is_some());
    assert!(hooks[0].get("signingkey").is_none());
    let id = created["id"].as_str().unwrap();
    let fetched = api
        .get_json(&format!("/partner/v2/products/{id}"), &token)
        .await;
    assert_eq!(fetched, created);
}

fn uuid_like(text: &str) -> bool {
    text.len() == 36 && text.chars().filter(|c| *c == '-').count() == 4
}

#[tokio::test]
async fn create_rejects_bad_products_in_words() {
    let api = Api::start().await;
    let token = api.token().await;
    let long = "n".repeat(65);
    let cases: Vec<(&str, Value)> = vec![
        (
            "missing name",
            json!({"listingName": "x", "requestTypes": ["NEW_REQUEST"]}),
        ),
        (
            "blank name",
            json!({"name": " ", "listingName": "x", "requestTypes": ["NEW_REQUEST"]}),
        ),
        (
            "long name",
            json!({"name": long, "listingName": "x", "requestTypes": ["NEW_REQUEST"]}),
        ),
        (
            "long listing",
            json!({"name": "a", "listingName": "l".repeat(257), "requestTypes": ["NEW_REQUEST"]}),
        ),
        (
            "no request types",
            json!({"name": "a", "listingName": "x", "requestTypes": []}),
        ),
        (
            "unknown request type",
            json!({"name": "a", "listingName": "x", "requestTypes": ["OTHER"]}),
        ),
        (
            "read-only id",
            json!({"id": "x", "name": "a", "listingName": "x", "requestTypes": ["NEW_REQUEST"]}),
        ),
        (
            "read-only status",
            json!({"status": "approved", "name": "a", "listingName": "x", "requestTypes": ["NEW_REQUEST"]}),
        ),
        (
            "read-only partnerId",
            json!({"partnerId": "p", "name": "a", "listingName": "x", "requestTypes": ["NEW_REQUEST"]}),
        ),
        (
            "read-only environment",
            json!({"environment": "prod", "name": "a", "listingName": "x", "requestTypes": ["NEW_REQUEST"]}),
        ),
        (
            "unknown field",
            json!({"colour": "red", "name": "a", "listingName": "x", "requestTypes": ["NEW_REQUEST"]}),
        ),
        (
            "wrong type",
            json!({"name": 5, "listingName": "x", "requestTypes": ["NEW_REQUEST"]}),
        ),
        ("not an object", json!(["a"])),
        (
            "bad interface url",
            json!({"name": "a", "listingName": "x", "requestTypes": ["NEW_REQUEST"], "interfaceUrl": "not a url"}),
        ),
        (
            "negative extension limit",
            json!({"name": "a", "listingName": "x", "requestTypes": ["NEW_REQUEST"], "extensionLimit": -1}),
        ),
    ];
    for (case, body) in cases {
        let response = api
            .post_json("/partner/v2/products", Some(&token), &body)
            .await;
        let error = expect_error(response, 400).await;
        assert!(!error.summary.is_empty(), "{case}");
    }
    let hook_cases: Vec<(&str, Value)> = vec![
        (
            "subscriptionId on create",
            json!({"subscriptionId": "s", "url": "https://h.example/", "resource": TX, "events": ["created"], "signingkey": KEY_A}),
        ),
        (
            "http to a remote host",
            hook("http://hooks.example/t", TX, &["created"], KEY_A),
        ),
        ("not a url", hook("hooks", TX, &["created"], KEY_A)),
        ("no events", hook("https://h.example/", TX, &[], KEY_A)),
        (
            "repeated event",
            hook("https://h.example/", TX, &["created", "created"], KEY_A),
        ),
        (
            "unknown event",
            hook("https://h.example/", TX, &["deleted"], KEY_A),
        ),
        (
            "unknown resource",
            hook(
                "https://h.example/",
                "urn:svc:partner:loan",
                &["created"],
                KEY_A,
            ),
        ),
        (
            "missing key",
            json!({"url": "https://h.example/", "resource": TX, "events": ["created"]}),
        ),
        (
            "missing url",
            json!({"resource": TX, "events": ["created"], "signingkey": KEY_A}),
        ),
    ];
    for (case, entry) in hook_cases {
        let mut body = product("hooked");
        body["webhooks"] = json!([entry]);
        let response = api
            .post_json("/partner/v2/products", Some(&token), &body)
            .await;
        let error = expect_error(response, 400).await;
        assert!(
            !error.summary.contains(KEY_A) && !error.details.contains(KEY_A),
            "{case}"
        );
    }
    let mut many = product("many");
    many["webhooks"] = json!((0..21)
        .map(|_| hook("https://h.example/", TX, &["created"], KEY_A))
        .collect::<Vec<_>>());
    expect_error(
        api.post_json("/partner/v2/products", Some(&token), &many)
            .await,
        400,
    )
    .await;
    // Nothing was created by any of these.
    let list = api.get("/partner/v2/products", &token).await;
    assert_eq!(total(&list), 0);
}

#[tokio::test]
async fn a_weak_signing_key_is_refused_without_echoing_it() {
    let api = Api::start().await;
    let token = api.token().await;
    for weak in [
        "short-Key1!",
        "abcdefghijklmnopqrstuvwxyz0123456789",
        "Abcdefghijklmnopqrstuvwxyz0123!%",
        &format!("{KEY_A}{KEY_A}x"),
    ] {
        let mut body = product("weak");
        body["webhooks"] = json!([hook("https://h.example/", TX, &["created"], weak)]);
        let response = api
            .post_json("/partner/v2/products", Some(&token), &body)
            .await;
        let text = response.text().await.unwrap();
        assert!(!text.contains(weak), "{text}");
        assert!(text.contains("signingkey"), "{text}");
        assert!(text.contains("invalid_request"), "{text}");
    }
}

#[tokio::test]
async fn names_are_unique_per_partner_and_partners_are_isolated() {
    let api = Api::with(two_partners()).await;
    let alpha = api.token_for("alpha", "alpha-secret").await;
    let beta = api.token_for("beta", "beta-secret").await;
    let created = api.create_product(&alpha, &product("shared-name")).await;
    let error = expect_error(
        api.post_json(
            "/partner/v2/products",
            Some(&alpha),
            &product("shared-name"),
        )
        .await,
        409,
    )
    .await;
    assert!(error.summary.contains("shared-name"));
    api.create_product(&beta, &product("shared-name")).await;

    let id = created["id"].as_str().unwrap();
    let path = format!("/partner/v2/products/{id}");
    expect_error(api.get(&path, &beta).await, 404).await;
    expect_error(
        api.merge_patch(&path, &beta, &json!({"listingName": "mine now"}))
            .await,
        404,
    )
    .await;
    expect_error(
        api.get("/partner/v2/products/no-such-id", &alpha).await,
        404,
    )
    .await;
    let beta_list: Value = api.get_json("/partner/v2/products", &beta).await;
    assert_eq!(beta_list.as_array().unwrap().len(), 1);
    assert_eq!(beta_list[0]["partnerId"], partner_id_of("beta"));
}

#[tokio::test]
async fn list_pages_and_sorts() {
    let api = Api::start().await;
    let token = api.token().await;
    for (name, listing) in [
        ("delta", "Zulu"),
        ("alpha", "yankee"),
        ("charlie", "X-ray"),
        ("bravo", "whiskey"),
    ] {
        let mut body = product(name);
        body["listingName"] = json!(listing);
        api.create_product(&token, &body).await;
        api.sandbox
            .clock()
            .advance(std::time::Duration::from_secs(1));
    }
    let names = |v: Value| -> Vec<String> {
        v.as_array()
            .unwrap()
            .iter()
            .map(|p| p["name"].as_str().unwrap().to_string())
            .collect()
    };
    let natural = api.get_json("/partner/v2/products", &token).await;
    assert_eq!(names(natural), ["delta", "alpha", "charlie", "bravo"]);
    assert_eq!(
        names(api.get_json("/partner/v2/products?sort=name", &token).await),
        ["alpha", "bravo", "charlie", "delta"]
    );
    assert_eq!(
        names(
            api.get_json("/partner/v2/products?sort=-name", &token)
                .await
        ),
        ["delta", "charlie", "bravo", "alpha"]
    );
    // A to Z regardless of case.
    assert_eq!(
        names(
            api.get_json("/partner/v2/products?sort=listingName", &token)
                .await
        ),
        ["bravo", "charlie", "alpha", "delta"]
    );
    assert_eq!(
        names(
            api.get_json("/partner/v2/products?sort=status,-created", &token)
                .await
        ),
        ["bravo", "charlie", "alpha", "delta"]
    );
    let page = api
        .get("/partner/v2/products?sort=name&start=1&limit=2", &token)
        .await;
    assert_eq!(total(&page), 4);
    assert_eq!(names(page.json().await.unwrap()), ["bravo", "charlie"]);
    let end = api.get("/partner/v2/products?start=4", &token).await;
    assert_eq!(end.status(), 200);
    assert_eq!(end.json::<Value>().await.unwrap(), json!([]));
    let zero = api.get("/partner/v2/products?limit=0", &token).await;
    assert_eq!(total(&zero), 4);
    assert_eq!(zero.json::<Value>().await.unwrap(), json!([]));
    for bad in [
        "start=5",
        "limit=51",
        "limit=-1",
        "start=x",
        "sort=colour",
        "sort=name,,status",
        "sort=name,-name",
        "offset=3",
        "limit=1&limit=2",
    ] {
        let error = expect_error(
            api.get(&format!("/partner/v2/products?{bad}"), &token)
                .await,
            400,
        )
        .await;
        assert!(
            !error.details.is_empty() || !error.summary.is_empty(),
            "{bad}"
        );
    }
}

#[tokio::test]
async fn merge_patch_changes_fields_and_guards_read_only_ones() {
    let api = Api::start().await;
    let token = api.token().await;
    let mut body = product("patchable");
    body["interfaceUrl"] = json!("https://acme.example/order");
    let created = api.create_product(&token, &body).await;
    let path = format!("/partner/v2/products/{}", created["id"].as_str().unwrap());

    api.sandbox
        .clock()
        .advance(std::time::Duration::from_secs(60));
    let response = api.merge_patch(&path, &token, &json!({"listingName": "New listing", "interfaceUrl": null, "tags": {"workflows": ["w"]}})).await;
    assert_eq!(response.status(), 200);
    let patched: Value = response.json().await.unwrap();
    assert_eq!(patched["listingName"], "New listing");
    assert!(patched.get("interfaceUrl").is_none());
    assert_eq!(patched["tags"]["workflows"], json!(["w"]));
    assert_eq!(patched["name"], "patchable");
    assert_ne!(patched["updated"], created["updated"]);
    assert_eq!(patched["created"], created["created"]);

    // The same value for a read-only field is harmless; a different one is a 400.
    assert_eq!(
        api.merge_patch(&path, &token, &json!({"name": "patchable"}))
            .await
            .status(),
        200
    );
    for change in [
        json!({"name": "renamed"}),
        json!({"id": "x"}),
        json!({"partnerId": "x"}),
        json!({"environment": "prod"}),
        json!({"status": "approved"}),
    ] {
        expect_error(api.merge_patch(&path, &token, &change).await, 400).await;
    }
    for bad in [
        json!({"requestTypes": null}),
        json!({"listingName": ""}),
        json!({"colour": 1}),
        json!([1]),
        json!("text"),
    ] {
        expect_error(api.merge_patch(&path, &token, &bad).await, 400).await;
    }
    expect_error(
        api.patch_raw(
            &path,
            Some(&token),
            "application/merge-patch+json",
            "{not json",
        )
        .await,
        400,
    )
    .await;
    expect_error(
        api.patch_raw(&path, Some(&token), "application/merge-patch+json", "")
            .await,
        400,
    )
    .await;
    // The content type of a merge patch is required.
    expect_error(
        api.patch_raw(
            &path,
            Some(&token),
            "application/json",
            r#"{"listingName":"x"}"#,
        )
        .await,
        415,
    )
    .await;
    let no_type = api
        .request(reqwest::Method::PATCH, &path, Some(&token))
        .body(r#"{"listingName":"x"}"#)
        .send()
        .await
        .unwrap();
    expect_error(no_type, 415).await;
    // Nothing of the failed patches stuck.
    let now = api.get_json(&path, &token).await;
    assert_eq!(now["listingName"], "New listing");
}

#[tokio::test]
async fn webhook_entries_update_create_and_delete_subscriptions() {
    let api = Api::start().await;
    let token = api.token().await;
    let mut body = product("hooks");
    body["webhooks"] = json!([
        hook("https://one.example/t", TX, &["created", "updated"], KEY_A),
        hook("https://two.example/e", EV, &["created"], KEY_B),
    ]);
    let created = api.create_product(&token, &body).await;
    let path = format!("/partner/v2/products/{}", created["id"].as_str().unwrap());
    let one = created["webhooks"][0].clone();
    let two = created["webhooks"][1].clone();

    // Rotate one's key, keep two as it is, add a third.
    let patch = json!({"webhooks": [
        {"subscriptionId": one["subscriptionId"], "signingkey": KEY_C},
        {"subscriptionId": two["subscriptionId"]},
        hook("https://three.example/t", TX, &["updated"], KEY_A),
    ]});
    let response = api.merge_patch(&path, &token, &patch).await;
    assert_eq!(response.status(), 200);
    let text = response.text().await.unwrap();
    assert!(!text.contains(KEY_C) && !text.contains(KEY_A) && !text.contains(KEY_B));
    let patched: Value = serde_json::from_str(&text).unwrap();
    let hooks = patched["webhooks"].as_array().unwrap();
    assert_eq!(hooks.len(), 3);
    assert_eq!(hooks[0], one, "rotating the key changes nothing visible");
    assert_eq!(hooks[1], two, "an entry with only its id stays as it was");
    assert_eq!(hooks[2]["url"], "https://three.example/t");
    assert!(hooks[2]["subscriptionId"].as_str().is_some());

    // Change one's URL only; leave out two (deleted) and three (deleted).
    let patch = json!({"webhooks": [{"subscriptionId": one["subscriptionId"], "url": "https://one.example/moved"}]});
    let patched: Value = api
        .merge_patch(&path, &token, &patch)
        .await
        .json()
        .await
        .unwrap();
    let hooks = patched["webhooks"].as_array().unwrap();
    assert_eq!(hooks.len(), 1);
    assert_eq!(hooks[0]["subscriptionId"], one["subscriptionId"]);
    assert_eq!(hooks[0]["url"], "https://one.example/moved");
    assert_eq!(hooks[0]["events"], one["events"]);

    // Errors: an unknown or repeated id, a weak key in a rotation (never echoed).
    let unknown = json!({"webhooks": [{"subscriptionId": "nope"}]});
    expect_error(api.merge_patch(&path, &token, &unknown).await, 400).await;
    let twice = json!({"webhooks": [{"subscriptionId": one["subscriptionId"]}, {"subscriptionId": one["subscriptionId"]}]});
    expect_error(api.merge_patch(&path, &token, &twice).await, 400).await;
    let weak = "weak-key-Aa1!";
    let rotate =
        json!({"webhooks": [{"subscriptionId": one["subscriptionId"], "signingkey": weak}]});
    let error = expect_error(api.merge_patch(&path, &token, &rotate).await, 400).await;
    assert!(!error.summary.contains(weak) && !error.details.contains(weak));
    // A subscription id of another product is unknown here.
    let other = api
        .create_product(&token, &{
            let mut b = product("other");
            b["webhooks"] = json!([hook("https://x.example/", TX, &["created"], KEY_A)]);
            b
        })
        .await;
    let foreign = json!({"webhooks": [{"subscriptionId": other["webhooks"][0]["subscriptionId"]}]});
    expect_error(api.merge_patch(&path, &token, &foreign).await, 400).await;

    // null deletes every subscription.
    let cleared: Value = api
        .merge_patch(&path, &token, &json!({"webhooks": null}))
        .await
        .json()
        .await
        .unwrap();
    assert_eq!(cleared["webhooks"], json!([]));
}
