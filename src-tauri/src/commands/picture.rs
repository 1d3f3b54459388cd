//! The life of a notification, drawn: for the window, and exported as SVG or PNG.
use partner_console_core::bridge::{FileJobResult, NotificationPicture, PictureFormat, PictureOf};
use partner_console_core::services::picture;
use partner_console_core::{Console, Result};
use tauri::State;

/// The picture of a notification; none while the console knows nothing of it.
#[tauri::command]
pub async fn notification_picture(
    state: State<'_, Console>,
    of: PictureOf,
) -> Result<Option<NotificationPicture>> {
    picture::draw(&state, of).await
}

/// The picture saved as an SVG or PNG file, through the save dialog.
#[tauri::command]
pub async fn export_notification_picture(
    state: State<'_, Console>,
    of: PictureOf,
    format: PictureFormat,
) -> Result<FileJobResult> {
    picture::export(&state, of, format).await
}
