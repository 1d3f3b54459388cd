//! `POST /oauth2/v1/token`, `.../introspection`, `.../revocation`.
//!
//! Client credentials come as HTTP Basic (the spec) or, for issuance only when no Basic
//! header is sent, as `client_id`/`client_secret` in the form (the field notes). Unknown form
//! parameters are ignored as OAuth 2.0 asks; a repeated one is an error.
//!
//! The client is authenticated before the body is read: a request without credentials is a 401
//! whatever its body, as for every other endpoint (only issuance without Basic has to read the
//! form first, and then a body that is not a form is a 401 too: nothing names the client).

use crate::error::HttpError;
use crate::extract::{self, form_body, get};
use crate::state::SharedState;
use crate::tokens::{Client, TokenRefusal};
use axum::body::Bytes;
use axum::extract::State;
use axum::http::{header, HeaderMap, HeaderValue, StatusCode};
use axum::response::{IntoResponse, Response};
use base64::engine::general_purpose::STANDARD;
use base64::Engine;
use partner_api::token::{check_grant, IDENTITY_TYPE, SCOPE, TOKEN_TYPE};
use partner_api::{ApiError, Introspection, TokenForm, TokenRequest, TokenResponse};
use utoipa_axum::router::OpenApiRouter;
use utoipa_axum::routes;

pub fn router() -> OpenApiRouter<SharedState> {
    OpenApiRouter::new()
        .routes(routes!(issue_token))
        .routes(routes!(introspect_token))
        .routes(routes!(revoke_token))
}

/// A 401 for client authentication, asking for Basic.
fn client_unauthorized(summary: &str) -> HttpError {
    HttpError::unauthorized(summary.to_string())
}

fn with_basic_challenge(error: HttpError) -> Response {
    let mut response = error.into_response();
    if response.status() == StatusCode::UNAUTHORIZED {
        response.headers_mut().insert(
            header::WWW_AUTHENTICATE,
            HeaderValue::from_static("Basic realm=\"partner-api\""),
        );
    }
    response
}

/// Id and secret from `Authorization: Basic`, if that header is there.
fn basic_credentials(headers: &HeaderMap) -> Result<Option<(String, String)>, HttpError> {
    let Some(value) = headers.get(header::AUTHORIZATION) else {
        return Ok(None);
    };
    let malformed = || client_unauthorized("the Authorization header is not valid HTTP Basic");
    let value = value.to_str().map_err(|_| malformed())?;
    let Some((scheme, encoded)) = value.split_once(' ') else {
        return Err(malformed());
    };
    if !scheme.eq_ignore_ascii_case("basic") {
        return Err(client_unauthorized(
            "this endpoint needs HTTP Basic with the API client id and secret",
        ));
    }
    let decoded = STANDARD.decode(encoded.trim()).map_err(|_| malformed())?;
    let text = String::from_utf8(decoded).map_err(|_| malformed())?;
    let (id, secret) = text.split_once(':').ok_or_else(malformed)?;
    Ok(Some((id.to_string(), secret.to_string())))
}

fn authentication_required() -> HttpError {
    client_unauthorized(
        "client authentication is required: HTTP Basic with the API client id and secret",
    )
}

/// The client of an introspection or revocation: HTTP Basic only.
fn authenticate_basic<'s>(
    state: &'s SharedState,
    headers: &HeaderMap,
) -> Result<&'s Client, HttpError> {
    let credentials = basic_credentials(headers)?.ok_or_else(authentication_required)?;
    check_credentials(state, credentials)
}

/// The parameters of a form body, in order.
type FormPairs = Vec<(String, String)>;

/// The client of an issuance and its form: Basic first, else `client_id`/`client_secret` in
/// the form.
fn authenticate_issuance<'s>(
    state: &'s SharedState,
    headers: &HeaderMap,
    body: &[u8],
) -> Result<(&'s Client, FormPairs), HttpError> {
    if let Some(credentials) = basic_credentials(headers)? {
        let client = check_credentials(state, credentials)?;
        return Ok((client, form_body(headers, body)?));
    }
    let form = form_body(headers, body).map_err(|_| authentication_required())?;
    let credentials = match (get(&form, "client_id"), get(&form, "client_secret")) {
        (Some(id), Some(secret)) => (id.to_string(), secret.to_string()),
        _ => return Err(authentication_required()),
    };
    Ok((check_credentials(state, credentials)?, form))
}

fn check_credentials(
    state: &SharedState,
    credentials: (String, String),
) -> Result<&Client, HttpError> {
    state
        .tokens
        .authenticate(&credentials.0, &credentials.1)
        .ok_or_else(|| {
            tracing::info!(client_id = %extract::printable(&credentials.0), "client authentication failed");
            client_unauthorized("invalid client credentials")
        })
}

fn token_param(form: &[(String, String)]) -> Result<&str, HttpError> {
    match get(form, "token") {
        Some(token) if !token.is_empty() => Ok(token),
        _ => Err(HttpError::invalid("the form needs a `token` parameter")),
    }
}

fn refused_token(refusal: TokenRefusal) -> HttpError {
    match refusal {
        TokenRefusal::Expired => HttpError::unauthorized("the token has expired"),
        TokenRefusal::Unknown => {
            HttpError::unauthorized("the token is not valid (unknown, revoked or another client's)")
        }
    }
}

/// Issue an access token (Client Credentials grant).
#[utoipa::path(
    post,
    path = "/oauth2/v1/token",
    tag = "tokens",
    security(("basic" = [])),
    request_body(content = TokenRequest, content_type = "application/x-www-form-urlencoded",
        description = "`grant_type=client_credentials&scope=pc pcapi` (and `client_id`, `client_secret` when not sent as Basic)"),
    responses(
        (status = 201, description = "A new bearer token", body = TokenResponse,
            headers(("Cache-Control" = String, description = "`no-store`: a token is never cached")),
            links(
                ("Introspect" = (operation_id = "introspect_token",
                    request_body = json!({"token": "$response.body#/access_token"}))),
                ("Revoke" = (operation_id = "revoke_token",
                    request_body = json!({"token": "$response.body#/access_token"}))),
            )),
        (status = 400, description = "Wrong grant type or scope, or a malformed form", body = ApiError),
        (status = 401, description = "Missing or invalid client credentials", body = ApiError,
            headers(("WWW-Authenticate" = String, description = "`Basic realm=\"partner-api\"`"))),
        (status = 413, description = "Body too large", body = ApiError),
        (status = 415, description = "Not a form body", body = ApiError),
    )
)]
async fn issue_token(
    State(state): State<SharedState>,
    headers: HeaderMap,
    body: Bytes,
) -> Response {
    let result = (|| {
        let (client, form) = authenticate_issuance(&state, &headers, &body)?;
        check_grant(get(&form, "grant_type"), get(&form, "scope"))
            .map_err(|m| HttpError::invalid("the token request is not valid").with_details(m))?;
        let (token, expires_in) = state.tokens.issue(client);
        tracing::info!(client_id = %client.client_id, "access token issued");
        Ok::<_, HttpError>(super::json(
            StatusCode::CREATED,
            &TokenResponse {
                access_token: token,
                token_type: TOKEN_TYPE.into(),
                expires_in,
            },
        ))
    })();
    let mut response = result.unwrap_or_else(with_basic_challenge);
    response
        .headers_mut()
        .insert(header::CACHE_CONTROL, HeaderValue::from_static("no-store"));
    response
}

/// Introspect a token of the calling client.
#[utoipa::path(
    post,
    path = "/oauth2/v1/token/introspection",
    tag = "tokens",
    security(("basic" = [])),
    request_body(content = TokenForm, content_type = "application/x-www-form-urlencoded", description = "`token=<access token>`"),
    responses(
        (status = 200, description = "The token is active", body = Introspection),
        (status = 400, description = "No token parameter, or a malformed form", body = ApiError),
        (status = 401, description = "Invalid client credentials, or the token is not valid (expired, revoked, unknown)", body = ApiError),
        (status = 413, description = "Body too large", body = ApiError),
        (status = 415, description = "Not a form body", body = ApiError),
    )
)]
async fn introspect_token(
    State(state): State<SharedState>,
    headers: HeaderMap,
    body: Bytes,
) -> Response {
    let result = (|| {
        let client = authenticate_basic(&state, &headers)?;
        let form = form_body(&headers, &body)?;
        let token = token_param(&form)?;
        let lifetime = state.tokens.inspect(client, token).map_err(refused_token)?;
        Ok::<_, HttpError>(super::json(
            StatusCode::OK,
            &Introspection {
                active: true,
                scope: SCOPE.into(),
                client_id: client.client_id.clone(),
                token_type: TOKEN_TYPE.into(),
                exp: lifetime.expires_at().timestamp(),
                environment: "sandbox".into(),
                identity_type: IDENTITY_TYPE.into(),
                encompass_client_id: client.partner_id.clone(),
            },
        ))
    })();
    result.unwrap_or_else(with_basic_challenge)
}

/// Revoke a token of the calling client.
#[utoipa::path(
    post,
    path = "/oauth2/v1/token/revocation",
    tag = "tokens",
    security(("basic" = [])),
    request_body(content = TokenForm, content_type = "application/x-www-form-urlencoded", description = "`token=<access token>`"),
    responses(
        (status = 204, description = "Revoked"),
        (status = 400, description = "No token parameter, or a malformed form", body = ApiError),
        (status = 401, description = "Invalid client credentials, or the token is not valid (expired, already revoked, unknown)", body = ApiError),
        (status = 413, description = "Body too large", body = ApiError),
        (status = 415, description = "Not a form body", body = ApiError),
    )
)]
async fn revoke_token(
    State(state): State<SharedState>,
    headers: HeaderMap,
    body: Bytes,
) -> Response {
    let result = (|| {
        let client = authenticate_basic(&state, &headers)?;
        let form = form_body(&headers, &body)?;
        let token = token_param(&form)?;
        state.tokens.revoke(client, token).map_err(refused_token)?;
        tracing::info!(client_id = %client.client_id, "access token revoked");
        Ok::<_, HttpError>(StatusCode::NO_CONTENT.into_response())
    })();
    result.unwrap_or_else(with_basic_challenge)
}
