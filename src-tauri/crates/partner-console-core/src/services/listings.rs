//! Products and transactions listings: one page, search across all pages, export of all pages.
//! Paging and sort rules are `partner-api`'s, applied by `partner-client` before it sends; the
//! search rule and the CSV flattening are `partner-client`'s `listing_export`, shared with the CLI.
use crate::bridge::Received;
use crate::bridge::{
    ExportFormat, ExportRequest, FileJobResult, ListingKind, PageQuery, PageView, SearchProgress,
    SearchRequest, SearchResult,
};
use crate::console::{AppEvent, Console};
use crate::error::{AppError, Result};
use crate::services::file_dialog::{self, FileChoice};
use crate::services::jobs::Job;
use crate::state::locked;
use crate::state::AppState;
use futures::StreamExt;
use partner_api::{read, Product, SortSpec, Sortable, Transaction};
use partner_client::listing_export::{self, TextSearch};
use partner_client::{Listed, PageRequest, PagerOptions, PartnerClient};
use serde::Serialize;
use std::path::Path;

fn sort_spec<T: Sortable>(raw: &str) -> Result<SortSpec> {
    SortSpec::parse(raw, T::SORT_KEYS)
        .map_err(|e| AppError::invalid(format!("The sort string is not accepted: {e}.")))
}

/// The sort keys the embedded sandbox knows for each listing.
pub fn sort_keys() -> crate::bridge::SortKeys {
    crate::bridge::SortKeys {
        products: Product::SORT_KEYS.iter().map(|k| k.to_string()).collect(),
        transactions: Transaction::SORT_KEYS
            .iter()
            .map(|k| k.to_string())
            .collect(),
    }
}

/// One page of the active connection's products.
pub async fn products(
    state: &AppState,
    query: &PageQuery,
) -> Result<PageView<Received<read::Product>>> {
    page(&state.client()?, query).await
}

/// One page of the active connection's transactions.
pub async fn transactions(
    state: &AppState,
    query: &PageQuery,
) -> Result<PageView<Received<read::Transaction>>> {
    page(&state.client()?, query).await
}

/// One page of a listing, in the sort asked for: each item as the service sent it.
pub async fn page<T: Listed + Serialize + ts_rs::TS>(
    client: &PartnerClient,
    query: &PageQuery,
) -> Result<PageView<Received<T>>> {
    let request = PageRequest::new(query.start, u64::from(query.limit))
        .map_err(|e| AppError::invalid(format!("{e}.")))?
        .sorted(sort_spec::<T>(&query.sort)?);
    let page = client.list::<T>(&request).await?;
    Ok(PageView {
        items: page.items.into_iter().map(Received::from).collect(),
        total: page.total,
        start: page.start,
        limit: page.limit,
        sort: query.sort.clone(),
    })
}

/// Walks every page of a listing, as JSON values, calling `each` after every item.
async fn walk<T: Listed + Serialize>(
    client: &PartnerClient,
    sort: &str,
    stop: &tokio_util::sync::CancellationToken,
    mut each: impl FnMut(serde_json::Value, u64),
) -> Result<bool> {
    let mut stream = client.pager::<T>(sort_spec::<T>(sort)?, PagerOptions::default())?;
    let mut seen = 0u64;
    loop {
        let next = tokio::select! {
            next = stream.next() => next,
            () = stop.cancelled() => return Ok(true),
        };
        let Some(item) = next else { return Ok(false) };
        seen += 1;
        let value = serde_json::to_value(item?).map_err(|e| {
            AppError::new(
                crate::error::ErrorKind::Internal,
                format!("Could not read an item: {e}."),
                "Try again.",
            )
        })?;
        each(value, seen);
    }
}

async fn total_of(client: &PartnerClient, kind: ListingKind) -> Result<u64> {
    let request = PageRequest::new(0, 1).map_err(|e| AppError::invalid(format!("{e}.")))?;
    Ok(match kind {
        ListingKind::Products => client.list::<read::Product>(&request).await?.total,
        ListingKind::Transactions => client.list::<read::Transaction>(&request).await?.total,
    })
}

/// Searches a whole listing for `request.text` (every page, in the current sort), reporting
/// progress as it goes; [`cancel_search`] stops it, keeping what was found.
pub async fn search(app: &Console, request: SearchRequest) -> Result<SearchResult> {
    let state = app.state();
    let client = state.client()?;
    let stop = state.shutdown.child_token();
    locked(&state.searches).insert(request.search_id.clone(), stop.clone());
    let search = TextSearch::new(&request.text);
    let total = total_of(&client, request.kind).await;
    let mut items = Vec::new();
    let mut scanned = 0;
    let outcome = match total {
        Err(error) => Err(error),
        Ok(total) => {
            let mut on_item = |value: serde_json::Value, seen: u64| {
                scanned = seen;
                if search.matches(&value) {
                    items.push(value);
                }
                if seen.is_multiple_of(50) || seen == total {
                    app.emit(AppEvent::SearchProgress(SearchProgress {
                        search_id: request.search_id.clone(),
                        scanned: seen,
                        total,
                        matched: items.len() as u64,
                    }));
                }
            };
            match request.kind {
                ListingKind::Products => {
                    walk::<read::Product>(&client, &request.sort, &stop, &mut on_item).await
                }
                ListingKind::Transactions => {
                    walk::<read::Transaction>(&client, &request.sort, &stop, &mut on_item).await
                }
            }
        }
    };
    locked(&state.searches).remove(&request.search_id);
    let cancelled = outcome?;
    Ok(SearchResult {
        search_id: request.search_id,
        cancelled,
        scanned,
        items,
    })
}

/// Stops the search `search_id` (its answer says it was cancelled).
pub fn cancel_search(state: &AppState, search_id: &str) {
    if let Some(stop) = locked(&state.searches).remove(search_id) {
        stop.cancel();
    }
}

/// How often, in items, a listing export reports its progress (a page is at most 50).
const LISTING_PROGRESS_EVERY: u64 = 50;

/// Writes JSON values as a JSON array, or as CSV flattened by `partner-client`'s
/// [`listing_export`](partner_client::listing_export) (the same CSV the `partner` command
/// prints), replacing the file only once the whole export is written.
pub fn write_export(path: &Path, format: ExportFormat, rows: &[serde_json::Value]) -> Result<()> {
    let encoded = match format {
        ExportFormat::Json => serde_json::to_vec_pretty(rows).map_err(std::io::Error::other),
        ExportFormat::Csv => listing_export::write_csv(Vec::new(), rows),
    };
    let bytes = encoded.map_err(|e| {
        AppError::new(
            crate::error::ErrorKind::Internal,
            format!("Could not encode the export: {e}."),
            "Try again.",
        )
    })?;
    crate::services::captures::write_replacing(path, |out| {
        out.write_all(&bytes)
            .map_err(|e| AppError::io(&format!("write {}", path.display()), &e))?;
        Ok((true, ()))
    })
}

/// Exports a whole listing (every page, in the current sort) to a file the user picks in the
/// save dialog, reporting progress as a job the user can stop; nothing is written when stopped.
pub async fn export(app: &Console, request: ExportRequest) -> Result<FileJobResult> {
    let state = app.state();
    let client = state.client()?;
    let stem = match request.kind {
        ListingKind::Products => "products",
        ListingKind::Transactions => "transactions",
    };
    let choice = FileChoice::table_export(
        format!("Export {stem}"),
        stem,
        request.format,
        state.exports_dir(),
    );
    let Some(path) = file_dialog::save(app, choice).await else {
        return Ok(FileJobResult::closed());
    };
    let job = Job::start(app, &request.job_id);
    let total = total_of(&client, request.kind).await.ok();
    let mut rows = Vec::new();
    let collect = |value: serde_json::Value, seen: u64| {
        rows.push(value);
        if seen.is_multiple_of(LISTING_PROGRESS_EVERY) || Some(seen) == total {
            job.progress(seen, total);
        }
    };
    let cancelled = match request.kind {
        ListingKind::Products => {
            walk::<read::Product>(&client, &request.sort, &job.stop, collect).await?
        }
        ListingKind::Transactions => {
            walk::<read::Transaction>(&client, &request.sort, &job.stop, collect).await?
        }
    };
    if cancelled {
        return Ok(FileJobResult {
            path: Some(path.display().to_string()),
            count: rows.len() as u64,
            skipped: 0,
            cancelled: true,
        });
    }
    write_export(&path, request.format, &rows)?;
    Ok(FileJobResult {
        path: Some(path.display().to_string()),
        count: rows.len() as u64,
        skipped: 0,
        cancelled: false,
    })
}
