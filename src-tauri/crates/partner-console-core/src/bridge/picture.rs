//! The notification picture's questions and answers (`services::picture`): which notification
//! to draw, the file it is exported as, and the drawing with the story it was drawn from (the
//! story's own types are the transaction's timeline, `super::transaction_notifications`).

use super::NotificationStory;
use serde::{Deserialize, Serialize};
use ts_rs::TS;

/// Which notification to draw (`services::picture`).
#[derive(Debug, Clone, Serialize, Deserialize, TS)]
#[serde(tag = "of", rename_all = "camelCase")]
pub enum PictureOf {
    /// The notification a capture belongs to (the inspector's picture).
    #[serde(rename_all = "camelCase")]
    Capture {
        #[ts(type = "number")]
        capture_id: i64,
    },
    /// One notification, as a transaction's timeline names it.
    #[serde(rename_all = "camelCase")]
    Notification {
        subscription_id: String,
        resource_type: String,
        event_id: String,
    },
    /// The newest notification of a transaction (the Demo's live picture).
    #[serde(rename_all = "camelCase")]
    NewestOfTransaction { transaction_id: String },
}

/// The file a picture is exported as.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize, TS)]
#[serde(rename_all = "lowercase")]
pub enum PictureFormat {
    Svg,
    Png,
}

/// A notification's life drawn as a sequence picture, and the story it was drawn from.
#[derive(Debug, Clone, Serialize, Deserialize, TS)]
#[serde(rename_all = "camelCase")]
pub struct NotificationPicture {
    /// SVG coloured through the window's theme (the exported file has fixed colours).
    pub svg: String,
    pub width: u32,
    pub height: u32,
    pub title: String,
    pub story: NotificationStory,
}
