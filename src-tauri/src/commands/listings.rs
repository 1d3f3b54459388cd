//! Products and transactions listings: the commands (see `services::listings`).
use crate::bridge::{
    ExportRequest, FileJobResult, PageQuery, PageView, SearchRequest, SearchResult, SortKeys,
};
use crate::error::Result;
use crate::services::listings;
use crate::state::AppState;
use partner_api::{Product, Sortable, Transaction};
use tauri::{AppHandle, State};

#[tauri::command]
pub fn sort_keys() -> SortKeys {
    SortKeys {
        products: Product::SORT_KEYS.iter().map(|k| k.to_string()).collect(),
        transactions: Transaction::SORT_KEYS
            .iter()
            .map(|k| k.to_string())
            .collect(),
    }
}

#[tauri::command]
pub async fn list_products(
    state: State<'_, AppState>,
    query: PageQuery,
) -> Result<PageView<Product>> {
    listings::page(&state.client()?, &query).await
}

#[tauri::command]
pub async fn list_transactions(
    state: State<'_, AppState>,
    query: PageQuery,
) -> Result<PageView<Transaction>> {
    listings::page(&state.client()?, &query).await
}

#[tauri::command]
pub async fn search_listing(app: AppHandle, request: SearchRequest) -> Result<SearchResult> {
    listings::search(&app, request).await
}

#[tauri::command]
pub fn cancel_search(state: State<'_, AppState>, search_id: String) {
    listings::cancel_search(&state, &search_id);
}

/// Exports a whole listing (every page, in the current sort) to a file the user picks in the
/// save dialog, reporting progress as a job the user can stop; nothing is written when stopped.
#[tauri::command]
pub async fn export_listing(app: AppHandle, request: ExportRequest) -> Result<FileJobResult> {
    listings::export(&app, request).await
}
