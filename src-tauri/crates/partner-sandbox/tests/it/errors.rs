//! Bad input of every kind gets a 4xx with the error body: unknown routes, wrong methods,
//! bodies too large, malformed JSON, wrong content types. Never a 5xx, never a hang.

use crate::support::{expect_error, product, Api};
use partner_sandbox::SandboxConfig;
use reqwest::Method;
use serde_json::json;

#[tokio::test]
async fn unknown_routes_and_wrong_methods() {
    let api = Api::start().await;
    let token = api.token().await;
    for path in [
        "/",
        "/nope",
        "/partner/v3/products",
        "/partner/v2/products/a/b/c",
        "/oauth2/v1/token/x",
        "/sandbox/v1/nothing",
    ] {
        expect_error(api.get(path, &token).await, 404).await;
    }
    for (method, path) in [
        (Method::DELETE, "/partner/v2/products"),
        (Method::PUT, "/partner/v2/products/x"),
        (Method::POST, "/partner/v2/transactions"),
        (Method::GET, "/oauth2/v1/token"),
        (Method::GET, "/sandbox/v1/clock/advance"),
        (Method::DELETE, "/sandbox/v1/transactions/x"),
        (Method::POST, "/openapi.json"),
    ] {
        let response = api
            .request(method.clone(), path, Some(&token))
            .send()
            .await
            .unwrap();
        assert!(response.headers().contains_key("allow"), "{method} {path}");
        expect_error(response, 405).await;
    }
}

#[tokio::test]
async fn bodies_over_the_limit_are_413() {
    let api = Api::with(SandboxConfig {
        body_limit: 4096,
        ..SandboxConfig::default()
    })
    .await;
    let token = api.token().await;
    let mut big = product("big");
    big["listingName"] = serde_json::json!("x".repeat(10_000));
    expect_error(
        api.post_json("/partner/v2/products", Some(&token), &big)
            .await,
        413,
    )
    .await;
    let huge_form = format!(
        "grant_type=client_credentials&scope=pc%20pcapi&pad={}",
        "x".repeat(10_000)
    );
    let response = api
        .http
        .post(api.url("/oauth2/v1/token"))
        .header("content-type", "application/x-www-form-urlencoded")
        .body(huge_form)
        .send()
        .await
        .unwrap();
    expect_error(response, 413).await;
    // Streamed without a Content-Length: still 413, no hang.
    let chunks: Vec<Result<Vec<u8>, std::io::Error>> =
        (0..10).map(|_| Ok(vec![b' '; 1000])).collect();
    let response = api
        .request(Method::POST, "/partner/v2/products", Some(&token))
        .header("content-type", "application/json")
        .body(reqwest::Body::wrap_stream(futures::stream::iter(chunks)))
        .send()
        .await
        .unwrap();
    expect_error(response, 413).await;
}

#[tokio::test]
async fn the_default_limit_is_one_mebibyte() {
    let api = Api::start().await;
    let token = api.token().await;
    let mut big = product("big");
    big["tags"] = serde_json::json!({"workflows": ["x".repeat(1024 * 1024)]});
    expect_error(
        api.post_json("/partner/v2/products", Some(&token), &big)
            .await,
        413,
    )
    .await;
}

#[tokio::test]
async fn malformed_bodies_are_400_and_wrong_types_415() {
    let api = Api::start().await;
    let token = api.token().await;
    let nested = format!("{}{}", "[".repeat(10_000), "]".repeat(10_000));
    let bodies: Vec<Vec<u8>> = vec![
        b"{".to_vec(),
        b"".to_vec(),
        b"null".to_vec(),
        vec![0xff, 0xfe, 0x00, 0x7b],
        b"{\"name\": \"a\"} trailing".to_vec(),
        nested.into_bytes(),
    ];
    for body in bodies {
        let response = api
            .request(Method::POST, "/partner/v2/products", Some(&token))
            .header("content-type", "application/json")
            .body(body)
            .send()
            .await
            .unwrap();
        expect_error(response, 400).await;
    }
    for content_type in [
        "text/plain",
        "application/xml",
        "application/merge-patch+json",
        "",
    ] {
        let mut request = api
            .request(Method::POST, "/partner/v2/products", Some(&token))
            .body(product("a").to_string());
        if !content_type.is_empty() {
            request = request.header("content-type", content_type);
        }
        expect_error(request.send().await.unwrap(), 415).await;
    }
    // A charset parameter is fine.
    let response = api
        .request(Method::POST, "/partner/v2/products", Some(&token))
        .header("content-type", "application/json; charset=utf-8")
        .body(product("charset").to_string())
        .send()
        .await
        .unwrap();
    assert_eq!(response.status(), 201);
}

#[tokio::test]
async fn odd_paths_and_headers_are_handled() {
    let api = Api::start().await;
    let token = api.token().await;
    let error = expect_error(api.get("/partner/v2/products/%FF%00", &token).await, 400).await;
    assert!(error.details.contains("UTF-8"), "{}", error.details);
    expect_error(
        api.get(
            &format!("/partner/v2/products/{}", "a".repeat(5000)),
            &token,
        )
        .await,
        404,
    )
    .await;
    let response = api
        .http
        .get(api.url("/partner/v2/products"))
        .header("authorization", "Bearer ")
        .send()
        .await
        .unwrap();
    expect_error(response, 401).await;
    let response = api
        .http
        .get(api.url("/partner/v2/products"))
        .header(
            "authorization",
            reqwest::header::HeaderValue::from_bytes(b"Bearer \xff\xfe").unwrap(),
        )
        .send()
        .await
        .unwrap();
    expect_error(response, 401).await;
}

#[tokio::test]
async fn a_client_that_stalls_mid_body_gets_an_error_and_the_sandbox_carries_on() {
    use std::time::{Duration, Instant};
    use tokio::io::{AsyncReadExt, AsyncWriteExt};

    let api = Api::with(SandboxConfig {
        body_timeout: Duration::from_millis(300),
        ..SandboxConfig::default()
    })
    .await;
    let addr = api.sandbox.local_addr();
    let mut stalled = tokio::net::TcpStream::connect(&addr).await.unwrap();
    // Headers promise 100 bytes; 12 arrive, then nothing.
    stalled
        .write_all(
            b"POST /oauth2/v1/token HTTP/1.1\r\nHost: sandbox\r\n\
              Content-Type: application/x-www-form-urlencoded\r\nContent-Length: 100\r\n\r\n\
              grant_type=c",
        )
        .await
        .unwrap();
    let started = Instant::now();
    let mut answer = Vec::new();
    let mut chunk = [0u8; 4096];
    let read = tokio::time::timeout(Duration::from_secs(10), async {
        loop {
            let n = stalled.read(&mut chunk).await.unwrap_or(0);
            answer.extend_from_slice(&chunk[..n]);
            if n == 0 || answer.windows(4).any(|w| w == b"\r\n\r\n") && answer.ends_with(b"}") {
                break;
            }
        }
    })
    .await;
    assert!(read.is_ok(), "the sandbox never answered a stalled body");
    assert!(started.elapsed() >= Duration::from_millis(250));
    let text = String::from_utf8_lossy(&answer);
    assert!(text.starts_with("HTTP/1.1 400"), "{text}");
    assert!(text.contains("\"errorCode\":\"invalid_request\""), "{text}");

    // Others are served as before.
    let token = api.token().await;
    assert!(!token.is_empty());
}

/// Slow-loris: a client that sends its request head a byte at a time, or opens a connection
/// and says nothing, is disconnected once the header-read deadline passes; others are served.
#[tokio::test]
async fn a_client_that_dribbles_its_headers_is_disconnected_and_the_sandbox_carries_on() {
    use std::time::{Duration, Instant};
    use tokio::io::{AsyncReadExt, AsyncWriteExt};

    let deadline = Duration::from_millis(500);
    let api = Api::with(SandboxConfig {
        header_read_timeout: deadline,
        ..SandboxConfig::default()
    })
    .await;
    let addr = api.sandbox.local_addr();

    let dribbler = tokio::net::TcpStream::connect(&addr).await.unwrap();
    let mut silent = tokio::net::TcpStream::connect(&addr).await.unwrap();
    let started = Instant::now();
    let (mut from_server, mut to_server) = dribbler.into_split();
    // A whole head would take about 6 s at one byte per 100 ms.
    let writer = tokio::spawn(async move {
        let head = b"GET /openapi.json HTTP/1.1\r\nHost: sandbox\r\nX-Slow: aaaaaaaaaa\r\n\r\n";
        for byte in head {
            if to_server.write_all(&[*byte]).await.is_err() {
                break;
            }
            tokio::time::sleep(Duration::from_millis(100)).await;
        }
    });

    let mut answer = Vec::new();
    let closed =
        tokio::time::timeout(Duration::from_secs(4), from_server.read_to_end(&mut answer)).await;
    assert!(
        closed.is_ok(),
        "the dribbling client was never disconnected"
    );
    assert!(
        started.elapsed() >= deadline - Duration::from_millis(100),
        "closed before the deadline"
    );
    let text = String::from_utf8_lossy(&answer);
    assert!(!text.contains(" 200 "), "the slow head was served: {text}");
    writer.abort();

    let mut nothing = Vec::new();
    let closed =
        tokio::time::timeout(Duration::from_secs(4), silent.read_to_end(&mut nothing)).await;
    assert!(
        closed.is_ok(),
        "a connection that sends nothing was kept open"
    );

    // Normal clients are served as before, on new connections.
    let token = api.token().await;
    assert!(!token.is_empty());
    let products = api.get("/partner/v2/products", &token).await;
    assert_eq!(products.status(), 200);
}

/// A body the document calls valid is accepted: JSON Schema counts `60.0` as the integer 60.
/// And only objects are bodies: serde alone would read `[{}, {}]` as a struct's fields in order.
#[tokio::test]
async fn integral_numbers_count_as_integers_and_only_objects_are_bodies() {
    let api = Api::start().await;
    let advanced = api
        .post_json("/sandbox/v1/clock/advance", None, &json!({"seconds": 60.0}))
        .await;
    assert_eq!(advanced.status(), 200);
    let fraction = api
        .post_json("/sandbox/v1/clock/advance", None, &json!({"seconds": 60.5}))
        .await;
    expect_error(fraction, 400).await;

    let token = api.token().await;
    let mut body = product("integral");
    body["extensionLimit"] = json!(2.0);
    let created = api.create_product(&token, &body).await;
    assert_eq!(created["extensionLimit"], 2);
    let transaction = api.lender_create(created["id"].as_str().unwrap()).await;
    let path = format!(
        "/sandbox/v1/transactions/{}",
        transaction["id"].as_str().unwrap()
    );
    let array = api
        .patch_raw(&path, None, "application/json", "[{}, {}]")
        .await;
    let error = expect_error(array, 400).await;
    assert_eq!(error.summary, "the body must be a JSON object");
}

/// A merge patch that names a field the product does not have is refused, even when it only
/// sets it to `null` (which merging alone would pass over in silence); and an address whose
/// host is no DNS name or IPv4 address is refused though a URL parser takes it.
#[tokio::test]
async fn patches_name_known_fields_and_addresses_follow_the_grammar() {
    let api = Api::start().await;
    let token = api.token().await;
    let created = api.create_product(&token, &product("strict")).await;
    let path = format!("/partner/v2/products/{}", created["id"].as_str().unwrap());
    let unknown = api.merge_patch(&path, &token, &json!({"": null})).await;
    let error = expect_error(unknown, 400).await;
    assert!(error.summary.contains("unknown field"), "{}", error.summary);
    let ok = api.merge_patch(&path, &token, &json!({"tags": null})).await;
    assert_eq!(ok.status(), 200);

    let odd_host = api
        .merge_patch(&path, &token, &json!({"adminInterfaceUrl": "http://A*"}))
        .await;
    expect_error(odd_host, 400).await;
    let ok = api
        .merge_patch(
            &path,
            &token,
            &json!({"adminInterfaceUrl": "https://admin.example:8443/x?y#z"}),
        )
        .await;
    assert_eq!(ok.status(), 200);
}
