//! Products and transactions listings: the commands (see `services::listings`).
use partner_api::read::{Product, Transaction};
use partner_console_core::bridge::{
    ExportRequest, FileJobResult, PageQuery, PageView, Received, SearchRequest, SearchResult,
    SortKeys,
};
use partner_console_core::services::listings;
use partner_console_core::Console;
use partner_console_core::Result;
use tauri::State;

#[tauri::command]
pub fn sort_keys(state: State<'_, Console>) -> SortKeys {
    listings::sort_keys(&state)
}

#[tauri::command]
pub async fn list_products(
    state: State<'_, Console>,
    query: PageQuery,
) -> Result<PageView<Received<Product>>> {
    listings::products(&state, &query).await
}

#[tauri::command]
pub async fn list_transactions(
    state: State<'_, Console>,
    query: PageQuery,
) -> Result<PageView<Received<Transaction>>> {
    listings::transactions(&state, &query).await
}

#[tauri::command]
pub async fn search_listing(
    state: State<'_, Console>,
    request: SearchRequest,
) -> Result<SearchResult> {
    listings::search(&state, request).await
}

#[tauri::command]
pub fn cancel_search(state: State<'_, Console>, search_id: String) {
    listings::cancel_search(&state, &search_id);
}

/// Exports a whole listing (every page, in the current sort) to a file the user picks in the
/// save dialog, reporting progress as a job the user can stop; nothing is written when stopped.
#[tauri::command]
pub async fn export_listing(
    state: State<'_, Console>,
    request: ExportRequest,
) -> Result<FileJobResult> {
    listings::export(&state, request).await
}
