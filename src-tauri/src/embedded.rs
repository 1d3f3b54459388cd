//! The embedded sandbox of the first run: started in-process on loopback with demo data.
use crate::bridge::ConnectionView;
use crate::state::AppState;
use chrono::{DateTime, Utc};
use partner_client::PartnerClient;

/// The embedded sandbox and its connection.
#[derive(Debug)]
pub struct Embedded {
    pub view: ConnectionView,
    pub client: PartnerClient,
}

/// The time the token countdowns run on: the embedded sandbox's clock when it is active.
pub fn now(_state: &AppState) -> DateTime<Utc> {
    Utc::now()
}

impl Embedded {
    pub async fn stop(self) {}
}

pub async fn start(_app: &tauri::AppHandle) -> Result<(), crate::error::AppError> {
    Err(crate::error::AppError::not_connected())
}
