//! What every workspace call shares: the handlers' state ([`Workspace`]), the member a call
//! is made by and their role's check ([`Caller`]), the answer an error becomes ([`ApiError`]),
//! and a JSON body whose failure to read is the caller's mistake ([`Body`]).

use crate::audit::{self, Outcome};
use crate::error::Error;
use crate::failed_logins::FailedLogins;
use crate::live::Live;
use crate::members::{self, Member};
use crate::roles::Action;
use axum::extract::{ConnectInfo, FromRequestParts};
use axum::http::request::Parts;
use axum::http::{header, HeaderValue, StatusCode};
use axum::response::{IntoResponse, Response};
use axum::Json;
use serde_json::json;
use sqlx::PgPool;
use std::net::SocketAddr;
use std::sync::Arc;

/// What the API's handlers share.
#[derive(Debug)]
pub struct Workspace {
    pub pool: PgPool,
    pub live: Live,
    pub failed_logins: FailedLogins,
    /// The signing keys (a replay re-signs nothing, but sends through the listener's own
    /// outbound path, which asks for them).
    pub keys: crate::signing_keys::WorkspaceKeys,
    /// The service connection the servers call with for everyone.
    pub service: crate::service::Service,
    /// The support index, synced once for every console.
    pub index: crate::support_index::WorkspaceIndex,
    /// The webhook intake: a recovery of a missed notification is taken by it in process
    /// (`crate::intake::take_made_here`).
    pub intake: Arc<crate::intake::Intake>,
    /// Cancelled when the server stops: live feeds end, so a graceful stop does not wait on
    /// them forever.
    pub shutdown: tokio_util::sync::CancellationToken,
}

/// The member a call is made by (from its `Authorization: Bearer` token).
#[derive(Debug, Clone)]
pub struct Caller(pub Member);

impl FromRequestParts<Arc<Workspace>> for Caller {
    type Rejection = ApiError;

    async fn from_request_parts(
        parts: &mut Parts,
        workspace: &Arc<Workspace>,
    ) -> Result<Self, Self::Rejection> {
        let address = parts
            .extensions
            .get::<ConnectInfo<SocketAddr>>()
            .map(|info| info.0.ip());
        if let Some(wait) = address.and_then(|a| workspace.failed_logins.refused(a)) {
            return Err(Error::TooManyFailedLogins(wait).into());
        }
        let token = parts
            .headers
            .get(header::AUTHORIZATION)
            .and_then(|value| value.to_str().ok())
            .and_then(|value| value.strip_prefix("Bearer "));
        let member = match token {
            Some(token) => members::by_token(&workspace.pool, token).await?,
            None => None,
        };
        match member {
            Some(member) => Ok(Caller(member)),
            None => {
                if let Some(address) = address {
                    workspace.failed_logins.failed(address);
                }
                Err(Error::Unauthorized.into())
            }
        }
    }
}

impl Caller {
    /// Refuses, and records the refusal, unless the member's role allows `action`.
    pub async fn may(
        &self,
        workspace: &Workspace,
        action: Action,
        target: &str,
    ) -> Result<(), ApiError> {
        if self.0.role.may(action) {
            return Ok(());
        }
        audit::record(
            &workspace.pool,
            &self.0,
            action,
            target,
            Outcome::Refused,
            "",
        )
        .await?;
        Err(Error::Forbidden {
            role: self.0.role,
            action,
        }
        .into())
    }

    /// Records a write that was done.
    pub async fn done(
        &self,
        workspace: &Workspace,
        action: Action,
        target: &str,
        detail: &str,
    ) -> Result<(), ApiError> {
        audit::record(
            &workspace.pool,
            &self.0,
            action,
            target,
            Outcome::Done,
            detail,
        )
        .await?;
        Ok(())
    }
}

/// An [`Error`] as an HTTP answer.
#[derive(Debug)]
pub struct ApiError(pub Error);

impl From<Error> for ApiError {
    fn from(error: Error) -> Self {
        ApiError(error)
    }
}

impl IntoResponse for ApiError {
    fn into_response(self) -> Response {
        let message = self.0.to_string();
        let (status, code, extra) = match &self.0 {
            Error::Forbidden { role, action } => (
                StatusCode::FORBIDDEN,
                "forbidden",
                json!({"role": role, "needs": action.least_role(), "action": action}),
            ),
            Error::Unauthorized => (StatusCode::UNAUTHORIZED, "unauthorized", json!({})),
            Error::TooManyFailedLogins(_) => (
                StatusCode::TOO_MANY_REQUESTS,
                "too-many-failed-logins",
                json!({}),
            ),
            Error::Invalid(_) => (StatusCode::BAD_REQUEST, "invalid", json!({})),
            Error::NotFound(_) => (StatusCode::NOT_FOUND, "not-found", json!({})),
            Error::Database(_) | Error::Migration(_) | Error::NotInitialised => {
                tracing::error!(%message, "a workspace call failed");
                (StatusCode::SERVICE_UNAVAILABLE, "unavailable", json!({}))
            }
            Error::NoService => (StatusCode::CONFLICT, "no-service", json!({})),
            // The service's refusal of what the member asked (a bad response, an unknown
            // transaction) is theirs to mend; anything else is the service's or the
            // connection's, which the member cannot mend: a bad gateway.
            Error::Service {
                status: Some(status @ (400 | 404 | 409 | 422)),
                ..
            } => (
                StatusCode::from_u16(*status).unwrap_or(StatusCode::BAD_REQUEST),
                "service-refused",
                json!({"serviceStatus": status}),
            ),
            Error::Service { status, .. } => {
                tracing::warn!(%message, "a call to the service failed");
                (
                    StatusCode::BAD_GATEWAY,
                    "service-failed",
                    json!({"serviceStatus": status}),
                )
            }
            Error::Index(_) => {
                tracing::error!(%message, "a workspace call failed");
                (StatusCode::SERVICE_UNAVAILABLE, "unavailable", json!({}))
            }
            Error::ServerKey(_) | Error::Io(_) => {
                tracing::error!(%message, "a workspace call failed");
                (StatusCode::INTERNAL_SERVER_ERROR, "server", json!({}))
            }
        };
        let mut body = json!({"error": code, "message": message});
        if let (Some(body), Some(extra)) = (body.as_object_mut(), extra.as_object()) {
            body.extend(extra.clone());
        }
        let mut response = (status, Json(body)).into_response();
        if let Error::TooManyFailedLogins(wait) = self.0 {
            if let Ok(value) = HeaderValue::from_str(&wait.to_string()) {
                response.headers_mut().insert(header::RETRY_AFTER, value);
            }
        }
        if status == StatusCode::UNAUTHORIZED {
            response.headers_mut().insert(
                header::WWW_AUTHENTICATE,
                HeaderValue::from_static("Bearer realm=\"partner workspace\""),
            );
        }
        response
    }
}

pub type ApiResult<T> = Result<T, ApiError>;

/// A JSON body that did not read is the caller's mistake (400 with serde's words), not ours.
#[derive(Debug)]
pub struct Body<T>(pub T);

impl<T: serde::de::DeserializeOwned> axum::extract::FromRequest<Arc<Workspace>> for Body<T> {
    type Rejection = ApiError;

    async fn from_request(
        request: axum::extract::Request,
        workspace: &Arc<Workspace>,
    ) -> Result<Self, Self::Rejection> {
        Json::<T>::from_request(request, workspace)
            .await
            .map(|Json(value)| Body(value))
            .map_err(|rejection| ApiError(Error::Invalid(rejection.body_text())))
    }
}
