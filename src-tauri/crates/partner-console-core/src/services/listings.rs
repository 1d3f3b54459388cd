//! Products and transactions listings: one page, search across all pages, export of all pages.
//! Paging and sort rules are `partner-api`'s, applied by `partner-client` before it sends; the
//! search rule and the CSV flattening are `partner-client`'s `listing_export`, shared with the CLI.
//! The one rule of a screen's default sort lives here (`remembered_page`): a service that does
//! not sort by it gets the page asked again without `sort`, shown with a note, because the
//! console chose that sort and the user did not; a sort the user chose is refused as before.
use crate::bridge::Received;
use crate::bridge::{
    ExportFormat, ExportRequest, FileJobResult, ListingKind, PageQuery, PageView, SearchProgress,
    SearchRequest, SearchResult,
};
use crate::console::{AppEvent, Console};
use crate::error::ErrorKind;
use crate::error::{AppError, Result};
use crate::services::file_dialog::{self, FileChoice};
use crate::services::jobs::Job;
use crate::state::locked;
use crate::state::AppState;
use futures::StreamExt;
use partner_api::{read, Product, ServiceSorts, SortSpec, Sortable, Transaction};
use partner_client::listing_export::{self, TextSearch};
use partner_client::{Listed, PageRequest, PagerOptions, PartnerClient};
use serde::Serialize;
use std::path::Path;

/// How the active connection sorts: the embedded sandbox's keys are known (ours), any other
/// service's are not (`partner_api::ServiceSorts`, the one home of that decision), with what
/// that service said of keys tried before (kept with its saved connection).
struct Sorting {
    sorts: ServiceSorts,
    /// The saved connection whose `sorts_tried` learns from the answers (`None`: the embedded
    /// sandbox, or a connection not saved).
    saved_id: Option<String>,
    tried: partner_local::SortsTried,
}

fn sorting(state: &AppState) -> Result<Sorting> {
    let inner = state.lock();
    let active = inner.active.as_ref().ok_or_else(AppError::not_connected)?;
    if active.view.embedded {
        return Ok(Sorting {
            sorts: ServiceSorts::Sandbox,
            saved_id: None,
            tried: partner_local::SortsTried::default(),
        });
    }
    let saved = inner.settings.connection(&active.view.id);
    Ok(Sorting {
        sorts: ServiceSorts::Unknown,
        saved_id: saved.map(|s| s.id.clone()),
        tried: saved.map(|s| s.sorts_tried.clone()).unwrap_or_default(),
    })
}

impl Sorting {
    /// The sort string checked before sending: the syntax always, the sandbox's keys on the
    /// sandbox, and on another service no key it refused before unless the user asks again
    /// (`try_refused`).
    fn spec<T: Listed>(&self, raw: &str, try_refused: bool) -> Result<SortSpec> {
        let spec = self.parsed::<T>(raw)?;
        if !try_refused {
            if let Some((key, words)) = self.refused_before::<T>(&spec) {
                return Err(AppError::new(
                    ErrorKind::InvalidInput,
                    format!(
                        "This service refused sorting by `{key}` before ({words}), so it was not sent again."
                    ),
                    "Sort by another column, or ask the service again with \"Try it anyway\".",
                ));
            }
        }
        Ok(spec)
    }

    /// The sort string read as this connection sorts (its syntax; the sandbox's keys).
    fn parsed<T: Listed>(&self, raw: &str) -> Result<SortSpec> {
        self.sorts
            .parse::<T>(raw)
            .map_err(|e| AppError::invalid(format!("The sort string is not accepted: {e}.")))
    }

    /// The first key of `spec` this service refused before, with its words.
    fn refused_before<T: Listed>(&self, spec: &SortSpec) -> Option<(String, String)> {
        let keys: Vec<&str> = spec.keys().iter().map(|k| k.field.as_str()).collect();
        self.tried
            .listing(T::PATH)
            .and_then(|tried| tried.first_refused(&keys))
            .map(|(key, words)| (key.to_owned(), words.to_owned()))
    }
}

/// Learns from a page's answer what the service takes: a page that came back accepted its
/// sort's keys, a 400 refused one of them (put on a key only when it can be told which).
fn learn<T: Listed>(
    state: &AppState,
    sorting: &Sorting,
    spec: &SortSpec,
    outcome: std::result::Result<(), &partner_client::ClientError>,
) {
    let Some(id) = &sorting.saved_id else { return };
    if spec.is_empty() {
        return;
    }
    let keys: Vec<&str> = spec.keys().iter().map(|k| k.field.as_str()).collect();
    let refusal = match outcome {
        Ok(()) => None,
        Err(partner_client::ClientError::InvalidRequest {
            status: 400,
            message,
        }) => Some(message.clone()),
        Err(_) => return,
    };
    let learnt = crate::services::settings::update(state, |settings| {
        let Some(saved) = settings.connections.iter_mut().find(|c| &c.id == id) else {
            return;
        };
        let Some(tried) = saved.sorts_tried.listing_mut(T::PATH) else {
            return;
        };
        match &refusal {
            None => tried.accept(keys.iter().copied()),
            Some(words) => {
                tried.refuse(&keys, words);
            }
        }
    });
    if let Err(error) = learnt {
        tracing::warn!(%error.message, "what the service said of a sort could not be kept");
    }
}

/// The sandbox's sort keys for each listing, whether the active connection is the sandbox
/// (whose keys are known) and what its service said of keys tried, for the column headers.
pub fn sort_keys(state: &AppState) -> crate::bridge::SortKeys {
    let sorting = sorting(state).ok();
    let tried = |path: &str| -> Vec<crate::bridge::TriedSortKey> {
        let Some(keys) = sorting.as_ref().and_then(|s| s.tried.listing(path)) else {
            return Vec::new();
        };
        keys.accepted
            .iter()
            .map(|key| crate::bridge::TriedSortKey {
                key: key.clone(),
                refusal: None,
            })
            .chain(
                keys.refused
                    .iter()
                    .map(|(key, words)| crate::bridge::TriedSortKey {
                        key: key.clone(),
                        refusal: Some(words.clone()),
                    }),
            )
            .collect()
    };
    crate::bridge::SortKeys {
        products: Product::SORT_KEYS.iter().map(|k| k.to_string()).collect(),
        transactions: Transaction::SORT_KEYS
            .iter()
            .map(|k| k.to_string())
            .collect(),
        known: sorting
            .as_ref()
            .is_none_or(|s| s.sorts == ServiceSorts::Sandbox),
        tried_products: tried("products"),
        tried_transactions: tried("transactions"),
    }
}

/// One page of the active connection's products.
pub async fn products(
    state: &AppState,
    query: &PageQuery,
) -> Result<PageView<Received<read::ProductView>>> {
    remembered_page(state, query).await
}

/// One page of the active connection's transactions.
pub async fn transactions(
    state: &AppState,
    query: &PageQuery,
) -> Result<PageView<Received<read::TransactionView>>> {
    remembered_page(state, query).await
}

/// A page of the active connection, its sort checked as that connection sorts, and what the
/// service said of the sort kept.
async fn remembered_page<T: Listed + Serialize + ts_rs::TS>(
    state: &AppState,
    query: &PageQuery,
) -> Result<PageView<Received<T>>> {
    let client = state.client()?;
    let sorting = sorting(state)?;
    let try_refused = query.try_refused.unwrap_or(false);
    // The screen's default sort, unless the user asked to send a refused sort again.
    let fallback = query.default_sort.unwrap_or(false) && !try_refused;
    if fallback {
        let spec = sorting.parsed::<T>(&query.sort)?;
        if sorting.refused_before::<T>(&spec).is_some() {
            // Refused before: not sent again, the service's own order at once.
            return unsorted_page(&client, query).await;
        }
    }
    let spec = sorting.spec::<T>(&query.sort, try_refused)?;
    let request = PageRequest::new(query.start, u64::from(query.limit))
        .map_err(|e| AppError::invalid(format!("{e}.")))?
        .sorted(spec.clone());
    let page = client.list::<T>(&request).await;
    learn::<T>(state, &sorting, &spec, page.as_ref().map(drop));
    match page {
        Err(partner_client::ClientError::InvalidRequest { .. }) if fallback && !spec.is_empty() => {
            // The same page without `sort`: if the service answers it, the sort was what it
            // refused; if not, its first answer is the one to show.
            match unsorted_page(&client, query).await {
                Ok(view) => Ok(view),
                Err(_) => view_of(page?, query),
            }
        }
        page => view_of(page?, query),
    }
}

/// A default sort the service does not take: the page without `sort`, in the service's own
/// order, with a quiet note instead of an error. Why: the console picks the default
/// (`listingName`, `-created`), not the user, and the spec names no sort key every service
/// takes, so a service that refuses it must not leave the first screen empty under an error.
/// A sort the user chose is never dropped (its refusal is shown).
async fn unsorted_page<T: Listed + Serialize + ts_rs::TS>(
    client: &PartnerClient,
    query: &PageQuery,
) -> Result<PageView<Received<T>>> {
    let request = PageRequest::new(query.start, u64::from(query.limit))
        .map_err(|e| AppError::invalid(format!("{e}.")))?;
    let mut view = view_of(client.list::<T>(&request).await?, query)?;
    view.sort_note = Some(format!(
        "Shown in the service's own order: this service does not sort by {}.",
        query.sort.trim()
    ));
    view.sort = String::new();
    Ok(view)
}

/// One page of a listing on any service (every well-formed key is sent; the service judges),
/// each item as the service sent it.
pub async fn page<T: Listed + Serialize + ts_rs::TS>(
    client: &PartnerClient,
    query: &PageQuery,
) -> Result<PageView<Received<T>>> {
    let sort = ServiceSorts::Unknown
        .parse::<T>(&query.sort)
        .map_err(|e| AppError::invalid(format!("The sort string is not accepted: {e}.")))?;
    let request = PageRequest::new(query.start, u64::from(query.limit))
        .map_err(|e| AppError::invalid(format!("{e}.")))?
        .sorted(sort);
    view_of(client.list::<T>(&request).await?, query)
}

fn view_of<T: ts_rs::TS>(
    page: partner_client::Page<read::Document<T>>,
    query: &PageQuery,
) -> Result<PageView<Received<T>>> {
    Ok(PageView {
        items: page.items.into_iter().map(Received::from).collect(),
        total: page.total,
        start: page.start,
        limit: page.limit,
        sort: query.sort.clone(),
        sort_note: None,
    })
}

/// Walks every page of a listing, as JSON values, calling `each` after every item.
/// The sort is checked as the connection sorts (a key the service refused before is not sent).
async fn walk<T: Listed + Serialize>(
    client: &PartnerClient,
    sorting: &Sorting,
    sort: &str,
    stop: &tokio_util::sync::CancellationToken,
    mut each: impl FnMut(serde_json::Value, u64),
) -> Result<bool> {
    let sort = sorting.spec::<T>(sort, false)?;
    let mut stream = client.pager::<T>(sort, PagerOptions::default())?;
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
        ListingKind::Products => client.list::<read::ProductView>(&request).await?.total,
        ListingKind::Transactions => client.list::<read::TransactionView>(&request).await?.total,
    })
}

/// Searches a whole listing for `request.text` (every page, in the current sort), reporting
/// progress as it goes; [`cancel_search`] stops it, keeping what was found.
pub async fn search(app: &Console, request: SearchRequest) -> Result<SearchResult> {
    let state = app.state();
    let client = state.client()?;
    let sorting = sorting(state)?;
    let stop = state.shutdown.child_token();
    locked(&state.searches).insert(request.search_id.clone(), stop.clone());
    let search = TextSearch::new(&request.text);
    // (scanned, total, matched) as last told, so a wait is told beside it.
    let last = std::sync::Arc::new(std::sync::Mutex::new((0u64, 0u64, 0u64)));
    let _waits = {
        let app = app.clone();
        let search_id = request.search_id.clone();
        let last = last.clone();
        crate::services::jobs::watch_waits(&client, move |note| {
            let (scanned, total, matched) = *locked(&last);
            app.emit(AppEvent::SearchProgress(SearchProgress {
                search_id: search_id.clone(),
                scanned,
                total,
                matched,
                note,
            }));
        })
    };
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
                *locked(&last) = (seen, total, items.len() as u64);
                if seen.is_multiple_of(50) || seen == total {
                    app.emit(AppEvent::SearchProgress(SearchProgress {
                        search_id: request.search_id.clone(),
                        scanned: seen,
                        total,
                        matched: items.len() as u64,
                        note: None,
                    }));
                }
            };
            match request.kind {
                ListingKind::Products => {
                    walk::<read::ProductView>(&client, &sorting, &request.sort, &stop, &mut on_item)
                        .await
                }
                ListingKind::Transactions => {
                    walk::<read::TransactionView>(
                        &client,
                        &sorting,
                        &request.sort,
                        &stop,
                        &mut on_item,
                    )
                    .await
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
    let sorting = sorting(state)?;
    let job = Job::start(app, &request.job_id);
    let _waits = job.tell_waits(&client);
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
            walk::<read::ProductView>(&client, &sorting, &request.sort, &job.stop, collect).await?
        }
        ListingKind::Transactions => {
            walk::<read::TransactionView>(&client, &sorting, &request.sort, &job.stop, collect)
                .await?
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
