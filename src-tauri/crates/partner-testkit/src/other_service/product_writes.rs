//! The partner API's writes: a product created (its required fields, a unique name, the
//! service's own id, status and environment) and changed by a merge PATCH (read-only fields
//! refused, `null` removing a field, `webhooks` merged by [`super::webhooks`]).

use super::admission::admit;
use super::answer::{api_error, json_answer, missing};
use super::dialect::date;
use super::state::{Shared, StoredProduct, PARTNER_ID};
use super::webhooks::merge_webhooks;
use axum::body::Bytes;
use axum::extract::{Path, State};
use axum::http::{header, HeaderMap, StatusCode};
use axum::response::Response;
use chrono::Utc;
use serde_json::{json, Map, Value};
use std::sync::Arc;

pub(super) fn read_object(body: &Bytes) -> Result<Map<String, Value>, String> {
    match serde_json::from_slice::<Value>(body) {
        Ok(Value::Object(object)) => Ok(object),
        Ok(_) => Err("the body must be a JSON object".into()),
        Err(e) => Err(format!("the body is not JSON ({e})")),
    }
}

pub(super) async fn create_product(
    State(shared): State<Arc<Shared>>,
    headers: HeaderMap,
    body: Bytes,
) -> Response {
    if let Err(refused) = admit(&shared, &headers) {
        return refused;
    }
    let bad = |status: StatusCode, detail: &str| {
        let title = if status == StatusCode::CONFLICT {
            "Conflict"
        } else {
            "Bad Request"
        };
        api_error(&shared, &headers, status, title, detail, &[])
    };
    let object = match read_object(&body) {
        Ok(object) => object,
        Err(e) => return bad(StatusCode::BAD_REQUEST, &e),
    };
    for field in ["name", "listingName"] {
        if object
            .get(field)
            .and_then(Value::as_str)
            .is_none_or(|s| s.trim().is_empty())
        {
            return bad(StatusCode::BAD_REQUEST, &format!("{field} is required"));
        }
    }
    if object
        .get("requestTypes")
        .and_then(Value::as_array)
        .is_none_or(|a| a.is_empty())
    {
        return bad(StatusCode::BAD_REQUEST, "requestTypes is required");
    }
    let mut data = shared.lock();
    let name = object.get("name").cloned().unwrap_or(Value::Null);
    if data
        .products
        .iter()
        .any(|p| p.fields.get("name") == Some(&name))
    {
        drop(data);
        return bad(StatusCode::CONFLICT, "a product with this name exists");
    }
    let entries = match object.get("webhooks") {
        None | Some(Value::Null) => Vec::new(),
        Some(Value::Array(entries)) => entries.clone(),
        Some(_) => {
            drop(data);
            return bad(StatusCode::BAD_REQUEST, "webhooks must be an array");
        }
    };
    if entries.iter().any(|e| e.get("subscriptionId").is_some()) {
        drop(data);
        return bad(
            StatusCode::BAD_REQUEST,
            "subscriptionId is assigned by the service",
        );
    }
    let webhooks = match merge_webhooks(shared.dialect, &mut data, &[], &entries) {
        Ok(webhooks) => webhooks,
        Err(e) => {
            drop(data);
            return bad(StatusCode::BAD_REQUEST, &e);
        }
    };
    let mut fields = object;
    fields.remove("webhooks");
    let id = uuid::Uuid::new_v4().to_string();
    fields.insert("id".into(), json!(id));
    fields.insert("partnerId".into(), json!(PARTNER_ID));
    fields.insert(
        "status".into(),
        json!(if shared.dialect.extra {
            "approved-pending"
        } else {
            "development"
        }),
    );
    fields.insert(
        "environment".into(),
        json!(if shared.dialect.extra {
            "prod"
        } else {
            "sandbox"
        }),
    );
    let product = StoredProduct { fields, webhooks };
    let shown = product.shown();
    data.products.push(product);
    drop(data);
    let location = format!("{}/partner/v2/products/{id}", shared.base_url);
    json_answer(
        &shared,
        &headers,
        StatusCode::CREATED,
        &shown,
        &[(header::LOCATION, location)],
    )
}

pub(super) async fn patch_product(
    State(shared): State<Arc<Shared>>,
    headers: HeaderMap,
    Path(id): Path<String>,
    body: Bytes,
) -> Response {
    if let Err(refused) = admit(&shared, &headers) {
        return refused;
    }
    let content_type = headers
        .get(header::CONTENT_TYPE)
        .and_then(|v| v.to_str().ok())
        .unwrap_or("");
    if !content_type.starts_with("application/merge-patch+json")
        && !content_type.starts_with("application/json")
    {
        return api_error(
            &shared,
            &headers,
            StatusCode::UNSUPPORTED_MEDIA_TYPE,
            "Unsupported Media Type",
            "send application/merge-patch+json",
            &[],
        );
    }
    let bad = |detail: &str| {
        api_error(
            &shared,
            &headers,
            StatusCode::BAD_REQUEST,
            "Bad Request",
            detail,
            &[],
        )
    };
    let patch = match read_object(&body) {
        Ok(patch) => patch,
        Err(e) => return bad(&e),
    };
    let mut data = shared.lock();
    let Some(index) = data.products.iter().position(|p| p.id() == id) else {
        drop(data);
        return missing(&shared, &headers, "product");
    };
    for read_only in ["id", "partnerId", "name", "environment", "status"] {
        if let Some(value) = patch.get(read_only) {
            if data.products[index].fields.get(read_only) != Some(value) {
                drop(data);
                return bad(&format!("{read_only} is read-only"));
            }
        }
    }
    let mut product = data.products[index].clone();
    if let Some(entries) = patch.get("webhooks") {
        let Some(entries) = entries.as_array() else {
            drop(data);
            return bad("webhooks must be an array");
        };
        let current = product.webhooks.clone();
        match merge_webhooks(shared.dialect, &mut data, &current, entries) {
            Ok(webhooks) => product.webhooks = webhooks,
            Err(e) => {
                drop(data);
                return bad(&e);
            }
        }
    }
    for (field, value) in &patch {
        if field == "webhooks" {
            continue;
        }
        if value.is_null() {
            product.fields.remove(field);
        } else {
            product.fields.insert(field.clone(), value.clone());
        }
    }
    if !shared.dialect.minimal {
        product
            .fields
            .insert("updated".into(), date(shared.dialect, Utc::now()));
    }
    let shown = product.shown();
    data.products[index] = product;
    drop(data);
    json_answer(&shared, &headers, StatusCode::OK, &shown, &[])
}
