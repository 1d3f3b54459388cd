//! The inspector's reads and its files: every list, count and filter choice is answered by the
//! capture store (`partner_listener::StoreReader::page` / `facets`), so the page holds only the
//! rows on screen whether the store has a hundred captures or a million; exports and imports go
//! through the desktop's dialogs and run as jobs with progress and cancel.
//!
//! The store is read on the blocking pool: a read at a million captures may take tens of
//! milliseconds and must not hold an async worker.
//!
//! While the app has joined a team workspace (`services::workspace`), the inspector is the
//! team's: its page, counts, detail, attempts, comparison and clear are the workspace's
//! captures, asked of its server with the same query types (the server answers the local
//! store's `CaptureQuery` / `CapturePage` / `Capture`), so the screen is the same either way.
//! This machine's own store is left as it is (its listener may still run; `partner listen`
//! reads it), and comes back on screen when the workspace is left. What the member's role may
//! not do (clear: developer and up) is refused here with the sentence the screen shows, before
//! anything is sent; the server checks again.
use crate::bridge::{
    CaptureExportForm, CaptureFileFormat, CaptureSummary, ClearCapturesForm, FileJobResult,
    InspectorFacets, InspectorPage, InspectorQuery, OpenResource, OutboundView,
};
use crate::console::Console;
use crate::error::{AppError, ErrorKind, Result};
use crate::events::summary;
use crate::services::file_dialog::{self, FileChoice};
use crate::services::jobs::Job;
use crate::services::workspace;
use crate::state::AppState;
use partner_api::{ResourceAddress, ResourceRefMismatch};
use partner_listener::export::{ExportFormat, ExportReport};
use partner_listener::{
    Capture, CaptureFilter, CapturePage, CaptureQuery, Facets, Grouping, HitCount, OutboundRecord,
    Store, Verdict,
};
use partner_workspace::roles::Action;
use std::ops::ControlFlow;
use std::path::{Path, PathBuf};

/// The most rows one inspector read returns.
pub const MAX_PAGE: u32 = 500;

/// Runs a read of the store on the blocking pool (every service that reads captures goes
/// through here).
///
/// A read that takes longer than [`SLOW_READ`] from the asking to the answer is logged with
/// how long it waited for a thread and how long the store took: the inspector's reads take
/// 1–50 ms at a million captures, so one that took more went with something else (the machine,
/// a lock, the disk), and the log tells which side it was on.
pub(crate) async fn read<T: Send + 'static>(
    store: Store,
    work: impl FnOnce(&Store) -> Result<T> + Send + 'static,
) -> Result<T> {
    let asked = std::time::Instant::now();
    let (waited, answer) = tokio::task::spawn_blocking(move || (asked.elapsed(), work(&store)))
        .await
        .map_err(|e| {
            AppError::new(
                ErrorKind::Internal,
                format!("Reading captures failed: {e}."),
                "Try again.",
            )
        })?;
    let took = asked.elapsed();
    if took > SLOW_READ {
        tracing::warn!(
            read = std::any::type_name::<T>(),
            waited_for_a_thread_ms = waited.as_millis() as u64,
            in_the_store_ms = took.saturating_sub(waited).as_millis() as u64,
            "a capture store read was slow"
        );
    }
    answer
}

/// A store read slower than this is logged (see [`read`]).
const SLOW_READ: std::time::Duration = std::time::Duration::from_millis(250);

/// Refuses `what` (a tool that reads this machine's own store: the signature debugger, send
/// again, export, import, the picture of a capture) while a team workspace is joined: the
/// inspector then shows the workspace's captures, whose ids name other captures here, and a
/// tool that read this store by them would answer about a capture the user is not looking at.
pub fn local_only(state: &AppState, what: &str) -> Result<()> {
    match workspace::joined(state) {
        None => Ok(()),
        Some(joined) => Err(AppError::new(
            ErrorKind::InvalidInput,
            format!(
                "{what} works on this machine's own captures, and the inspector shows the team workspace's ({}).",
                joined.describe()
            ),
            "Leave the workspace in Connections to use it on this machine's captures; the workspace's own captures are checked by its server, whose verdict the inspector shows.",
        )),
    }
}

/// One window of the inspector's list: the workspace's captures while joined, else the store's.
pub async fn page(state: &AppState, query: InspectorQuery) -> Result<InspectorPage> {
    let filter = query.filter.tidied();
    let offset = query.offset;
    let grouping = if query.grouped {
        Grouping::ByNotification
    } else {
        Grouping::EveryAttempt
    };
    let limit = u64::from(query.limit.clamp(1, MAX_PAGE));
    let count = if query.count_past_page {
        HitCount::UpToCap
    } else {
        HitCount::ThroughPage
    };
    let asked = CaptureQuery {
        filter,
        grouping,
        offset,
        limit,
        count,
    };
    if let Some(joined) = workspace::joined(state) {
        let page = workspace::answered(state, joined.client.captures_page(&asked, None).await)?;
        return Ok(page_view(offset, &page));
    }
    let store = state.captures()?;
    read(store, move |store| {
        Ok(page_view(offset, &store.page(&asked)?))
    })
    .await
}

fn page_view(offset: u64, page: &CapturePage) -> InspectorPage {
    InspectorPage {
        offset,
        total: page.total,
        total_capped: page.total_capped,
        unsearched: page.unsearched,
        items: page
            .items
            .iter()
            .map(|listed| CaptureSummary {
                group_attempts: listed.group_attempts,
                ..summary(&listed.capture)
            })
            .collect(),
    }
}

/// The filter's choices and the verdict counts under the rest of the filter (the workspace's
/// while joined).
pub async fn facets(state: &AppState, filter: CaptureFilter) -> Result<InspectorFacets> {
    let filter = filter.tidied();
    if let Some(joined) = workspace::joined(state) {
        let answer = workspace::answered(state, joined.client.captures_facets(&filter).await)?;
        return Ok(facets_view(answer.facets, answer.stored));
    }
    let store = state.captures()?;
    read(store, move |store| {
        let facets = store.facets(&filter)?;
        let stored = store.count(&CaptureFilter::default())?;
        Ok(facets_view(facets, stored))
    })
    .await
}

fn facets_view(facets: Facets, stored: u64) -> InspectorFacets {
    InspectorFacets {
        capped: facets.capped,
        total: facets.total,
        verdicts: facets.verdicts,
        event_types: facets.event_types,
        resource_types: facets.resource_types,
        subscriptions: facets.subscriptions,
        stored,
    }
}

/// Readies the store's read connections for the inspector's first searches
/// ([`partner_listener::StoreReader::warm_up`]): the Webhooks screen asks for it when it is
/// made ready, after the first screen, so it never competes with the products' first rows.
pub async fn warm_up(state: &AppState) -> Result<()> {
    if workspace::joined(state).is_some() {
        // The workspace's server keeps its own connections warm.
        return Ok(());
    }
    let store = state.captures()?;
    read(store, |store| Ok(store.warm_up()?)).await
}

/// Deletes the captures the filter shows (every capture without one), up to `form.up_to_id`;
/// returns how many were deleted.
///
/// While joined, the workspace's captures, for every member: a role that may not clear
/// (below developer) is refused before anything is sent.
pub async fn clear(state: &AppState, form: ClearCapturesForm) -> Result<u64> {
    let mut filter = match &form.filter {
        Some(filter) => filter.clone().tidied(),
        None => CaptureFilter::default(),
    };
    filter.max_id = Some(form.up_to_id);
    if let Some(joined) = workspace::joined(state) {
        joined.may(Action::Clear)?;
        return workspace::answered(state, joined.client.captures_clear(&filter).await);
    }
    let store = state.captures()?;
    Ok(store.clear(&filter).await?)
}

/// Every attempt of the notification capture `id` belongs to, first first.
pub async fn attempts(state: &AppState, id: i64) -> Result<Vec<CaptureSummary>> {
    if let Some(joined) = workspace::joined(state) {
        let attempts = workspace::answered(state, joined.client.capture_attempts(id).await)?;
        return Ok(attempts.iter().map(summary).collect());
    }
    let store = state.captures()?;
    read(store, move |store| {
        Ok(store.attempts_of(id)?.iter().map(summary).collect())
    })
    .await
}

/// A forward or replay as the detail pane shows it.
pub fn outbound_view(record: &OutboundRecord) -> OutboundView {
    OutboundView {
        kind: record.kind.as_str().to_string(),
        url: record.url.clone(),
        sent_at: record.sent_at.to_rfc3339(),
        status: record.status,
        response_headers: record
            .response_headers
            .iter()
            .map(|h| (h.name.clone(), h.value.clone()))
            .collect(),
        response_body: record.response_body.clone(),
        elapsed_ms: record.elapsed_ms,
        error: record.error.clone(),
    }
}

/// Where "Open" takes the user from `capture`, on the connection at `base_url` (none when no
/// connection is active): offered only for a notification whose signature verified and whose
/// `resourceRef` is a transaction or event of that connection's service.
pub fn open_resource(capture: &Capture, base_url: Option<&str>) -> OpenResource {
    let refused = |reason: String| OpenResource::Refused { reason };
    if capture.verdict != Verdict::Valid {
        return refused(format!(
            "Not offered: the notification's verdict is {}, so nothing in it can be trusted.",
            capture.verdict.as_str()
        ));
    }
    let Some(reference) = capture.fields.resource_ref.as_deref() else {
        return refused("Not offered: the notification has no resourceRef.".into());
    };
    let Some(base_url) = base_url else {
        return refused("Not offered: no connection is active.".into());
    };
    match partner_api::resource_at(base_url, reference) {
        Ok(ResourceAddress::Transaction { transaction_id }) => {
            OpenResource::Transaction { transaction_id }
        }
        Ok(ResourceAddress::Event {
            transaction_id,
            event_id,
        }) => OpenResource::Event {
            transaction_id,
            event_id,
        },
        Err(ResourceRefMismatch::OtherService { found, expected }) => refused(format!(
            "Not offered: the resourceRef points at {found}, not at the service this console reads ({expected})."
        )),
        Err(mismatch) => refused(format!("Not offered: {mismatch}.")),
    }
}

impl CaptureFileFormat {
    fn library(self) -> ExportFormat {
        match self {
            CaptureFileFormat::Jsonl => ExportFormat::JsonLines,
            CaptureFileFormat::Har => ExportFormat::Har,
        }
    }

    fn extension(self) -> &'static str {
        match self {
            CaptureFileFormat::Jsonl => "jsonl",
            CaptureFileFormat::Har => "har",
        }
    }

    fn kind(self) -> &'static str {
        match self {
            CaptureFileFormat::Jsonl => "JSON Lines",
            CaptureFileFormat::Har => "HAR 1.2",
        }
    }
}

/// Exports the chosen or filtered captures to a file the user picks in the save dialog.
/// Written beside the target first and moved over it at the end, so a cancelled or failed
/// export leaves no half file and never clobbers what was there.
pub async fn export(app: &Console, form: CaptureExportForm) -> Result<FileJobResult> {
    let state = app.state();
    local_only(state, "Export")?;
    let store = state.captures()?;
    let mut filter = form.filter.clone().tidied();
    if let Some(ids) = form.ids.filter(|ids| !ids.is_empty()) {
        filter = CaptureFilter {
            ids,
            ..CaptureFilter::default()
        };
    }
    let choice = FileChoice {
        title: "Export captures".into(),
        suggested_name: crate::services::file_dialog::suggested_name(
            "captures",
            form.format.extension(),
        ),
        folder: state.exports_dir(),
        kind: form.format.kind(),
        extensions: match form.format {
            CaptureFileFormat::Jsonl => &["jsonl"],
            CaptureFileFormat::Har => &["har"],
        },
    };
    let Some(path) = file_dialog::save(app, choice).await else {
        return Ok(FileJobResult::closed());
    };
    let job = Job::start(app, &form.job_id);
    let format = form.format.library();
    let total = store.count(&filter).ok();
    let target = path.clone();
    let report = tokio::task::spawn_blocking(move || -> Result<ExportReport> {
        write_replacing(&target, |out| {
            let mut progress = |done: u64| {
                job.progress(done, total);
                if job.cancelled() {
                    ControlFlow::Break(())
                } else {
                    ControlFlow::Continue(())
                }
            };
            let report =
                partner_listener::export::export_with(&store, &filter, format, out, &mut progress)?;
            Ok((!report.cancelled, report))
        })
    })
    .await
    .map_err(|e| {
        AppError::new(
            ErrorKind::Internal,
            format!("The export failed: {e}."),
            "Try again.",
        )
    })??;
    Ok(FileJobResult {
        path: Some(path.display().to_string()),
        count: report.written,
        skipped: 0,
        cancelled: report.cancelled,
    })
}

/// Imports captures from a JSON Lines file the user picks in the open dialog. Captures already
/// in the store (same id) are skipped; a cancel keeps what was imported until then.
pub async fn import(app: &Console, job_id: String) -> Result<FileJobResult> {
    let state = app.state();
    local_only(state, "Import")?;
    let store = state.captures()?;
    let choice = FileChoice {
        title: "Import captures".into(),
        suggested_name: "captures.jsonl".into(),
        folder: state.exports_dir(),
        kind: "JSON Lines",
        extensions: &["jsonl"],
    };
    let Some(path) = file_dialog::open(app, choice).await else {
        return Ok(FileJobResult::closed());
    };
    let file = std::fs::File::open(&path)
        .map_err(|e| AppError::io(&format!("open {}", path.display()), &e))?;
    let job = Job::start(app, &job_id);
    let runtime = tokio::runtime::Handle::current();
    let indexing = store.clone();
    let job = std::sync::Arc::new(job);
    let reading = job.clone();
    // Read on a blocking thread (the file may be gigabytes); the store's writer does the rest.
    let report = tokio::task::spawn_blocking(move || {
        let job = reading;
        let reader = std::io::BufReader::new(file);
        let mut progress = |lines: u64| {
            job.progress(lines, None);
            if job.cancelled() {
                ControlFlow::Break(())
            } else {
                ControlFlow::Continue(())
            }
        };
        runtime.block_on(partner_listener::export::import_jsonl_with(
            &store,
            reader,
            &mut progress,
        ))
    })
    .await
    .map_err(|e| {
        AppError::new(
            ErrorKind::Internal,
            format!("The import failed: {e}."),
            "Try again.",
        )
    })??;
    // The import ends when a search of what it brought is answered from the index: an import
    // indexes as it goes, and when the indexer was far behind (a store re-indexed after a
    // migration) this waits for it, with that progress shown; Cancel stops the wait only.
    let mut first: Option<u64> = None;
    let searchable = !report.cancelled
        && indexing
            .wait_until_searchable(
                |left| {
                    let total = *first.get_or_insert(left);
                    if total > 0 {
                        job.progress_noted(total - left, Some(total), "indexing for search");
                    }
                },
                job.stop.cancelled(),
            )
            .await?;
    Ok(FileJobResult {
        path: Some(path.display().to_string()),
        count: report.imported,
        skipped: report.skipped,
        cancelled: report.cancelled || !searchable,
    })
}

impl FileJobResult {
    /// The user closed the dialog: nothing was read or written.
    pub fn closed() -> Self {
        Self {
            path: None,
            count: 0,
            skipped: 0,
            cancelled: false,
        }
    }
}

/// Writes `path` through `write` into a new file beside it, then moves that file over `path`
/// when `write` says to keep it (`true`), or removes it (`false`, or an error).
pub fn write_replacing<T>(
    path: &Path,
    write: impl FnOnce(&mut dyn std::io::Write) -> Result<(bool, T)>,
) -> Result<T> {
    let partial = partial_path(path);
    if let Some(parent) = path.parent().filter(|p| !p.as_os_str().is_empty()) {
        std::fs::create_dir_all(parent)
            .map_err(|e| AppError::io("create the export folder", &e))?;
    }
    let file = std::fs::File::create(&partial)
        .map_err(|e| AppError::io(&format!("write {}", partial.display()), &e))?;
    let mut out = std::io::BufWriter::new(file);
    let outcome = write(&mut out).and_then(|(keep, value)| {
        use std::io::Write;
        out.flush()
            .and_then(|()| out.get_ref().sync_all())
            .map_err(|e| AppError::io(&format!("write {}", partial.display()), &e))?;
        Ok((keep, value))
    });
    drop(out);
    match outcome {
        Ok((true, value)) => {
            std::fs::rename(&partial, path)
                .map_err(|e| AppError::io(&format!("write {}", path.display()), &e))?;
            Ok(value)
        }
        Ok((false, value)) => {
            let _ = std::fs::remove_file(&partial);
            Ok(value)
        }
        Err(error) => {
            let _ = std::fs::remove_file(&partial);
            Err(error)
        }
    }
}

fn partial_path(path: &Path) -> PathBuf {
    let mut name = path.file_name().unwrap_or_default().to_os_string();
    name.push(".partial");
    path.with_file_name(name)
}

/// Two captures side by side: their bodies path by path, their headers, their verdicts.
pub fn compare(
    state: &AppState,
    first: i64,
    second: i64,
) -> Result<partner_listener::compare::Comparison> {
    let store = state.captures()?;
    Ok(partner_listener::compare::compare(
        &store.get(first)?,
        &store.get(second)?,
    ))
}

/// [`compare`] as the window asks for it: the workspace's captures while joined, else the
/// store's, read on the blocking pool.
pub async fn compare_shown(
    app: &Console,
    first: i64,
    second: i64,
) -> Result<partner_listener::compare::Comparison> {
    if let Some(joined) = workspace::joined(app.state()) {
        let state = app.state();
        let one = workspace::answered(state, joined.client.capture(first).await)?;
        let other = workspace::answered(state, joined.client.capture(second).await)?;
        return Ok(partner_listener::compare::compare(&one, &other));
    }
    app.blocking(move |app| compare(app, first, second)).await
}

/// Everything the inspector shows of capture `id`: headers, body raw and pretty, its
/// notification's attempts, what was forwarded or replayed, and whether it can be opened.
pub fn detail(state: &AppState, id: i64) -> Result<crate::bridge::CaptureDetail> {
    let store = state.captures()?;
    let capture = store.get(id)?;
    let attempts = store.attempts_of(id)?.iter().map(summary).collect();
    let outbound = store.outbound_of(id)?.iter().map(outbound_view).collect();
    Ok(detail_view(
        &capture,
        attempts,
        outbound,
        state.base_url().as_deref(),
    ))
}

/// [`detail`] as the window asks for it: a capture of the workspace while joined (its server
/// keeps no record of forwards, so none are listed; "Open" is offered for a notification about
/// the service the workspace's servers call, which the transaction page then reads through the
/// workspace), else of the store, read on the blocking pool.
pub async fn detail_shown(app: &Console, id: i64) -> Result<crate::bridge::CaptureDetail> {
    if let Some(joined) = workspace::joined(app.state()) {
        let state = app.state();
        let capture = workspace::answered(state, joined.client.capture(id).await)?;
        let attempts = workspace::answered(state, joined.client.capture_attempts(id).await)?;
        let service = workspace::answered(state, joined.client.service_connection().await)?;
        return Ok(detail_view(
            &capture,
            attempts.iter().map(summary).collect(),
            Vec::new(),
            service.as_ref().map(|service| service.base_url.as_str()),
        ));
    }
    app.blocking(move |app| detail(app, id)).await
}

fn detail_view(
    capture: &Capture,
    attempts: Vec<CaptureSummary>,
    outbound: Vec<OutboundView>,
    base_url: Option<&str>,
) -> crate::bridge::CaptureDetail {
    let raw_body = capture.body_text().unwrap_or_default();
    let pretty_body = serde_json::from_str::<serde_json::Value>(&raw_body)
        .ok()
        .and_then(|v| serde_json::to_string_pretty(&v).ok());
    crate::bridge::CaptureDetail {
        summary: summary(capture),
        headers: capture
            .headers
            .iter()
            .map(|h| (h.name.clone(), h.value.clone()))
            .collect(),
        raw_body,
        pretty_body,
        resource_ref: capture.fields.resource_ref.clone(),
        departures: if capture.fields.is_notification() {
            capture
                .fields
                .departures()
                .iter()
                .map(ToString::to_string)
                .collect()
        } else {
            Vec::new()
        },
        attempts,
        answered_status: capture.response.status,
        outbound,
        open: open_resource(capture, base_url),
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use partner_listener::{Capture, NotificationFields, ResponseRecord};

    fn capture(verdict: Verdict, resource_ref: Option<&str>) -> Capture {
        Capture {
            id: 1,
            received_at: chrono::Utc::now(),
            method: "POST".into(),
            path: "/webhooks".into(),
            headers: Vec::new(),
            body: None,
            body_size: 0,
            peer: None,
            verdict,
            matched_key: None,
            subscription_id: Some("sub".into()),
            fields: NotificationFields {
                resource_ref: resource_ref.map(str::to_string),
                ..NotificationFields::default()
            },
            attempt: 1,
            notification_id: None,
            response: ResponseRecord {
                status: 200,
                body: String::new(),
                from_test_mode: false,
                delay_ms: 0,
            },
            processing_micros: 0,
            replay: false,
        }
    }

    const BASE: &str = "http://127.0.0.1:3000";

    #[test]
    fn open_is_offered_only_for_a_verified_notification_about_the_active_service() {
        let event = format!("{BASE}/partner/v2/transactions/t-1/events/e-1");
        match open_resource(&capture(Verdict::Valid, Some(&event)), Some(BASE)) {
            OpenResource::Event {
                transaction_id,
                event_id,
            } => assert_eq!((transaction_id.as_str(), event_id.as_str()), ("t-1", "e-1")),
            other => panic!("{other:?}"),
        }
        let transaction = format!("{BASE}/partner/v2/transactions/t-1");
        assert!(matches!(
            open_resource(&capture(Verdict::Valid, Some(&transaction)), Some(BASE)),
            OpenResource::Transaction { .. }
        ));
        let refused = |c: &Capture, base: Option<&str>| match open_resource(c, base) {
            OpenResource::Refused { reason } => reason,
            other => panic!("offered: {other:?}"),
        };
        assert!(refused(
            &capture(Verdict::InvalidSignature, Some(&event)),
            Some(BASE)
        )
        .contains("invalid-signature"));
        assert!(refused(&capture(Verdict::Valid, None), Some(BASE)).contains("no resourceRef"));
        assert!(refused(&capture(Verdict::Valid, Some(&event)), None).contains("no connection"));
        let elsewhere = "http://evil.example/partner/v2/transactions/t-1";
        let reason = refused(&capture(Verdict::Valid, Some(elsewhere)), Some(BASE));
        assert!(
            reason.contains("http://evil.example") && reason.contains(BASE),
            "{reason}"
        );
    }

    #[test]
    fn the_inspector_filter_reads_times_and_leaves_blanks_out() {
        let query: InspectorQuery = serde_json::from_value(serde_json::json!({
            "filter": {"verdicts": ["valid"], "eventType": "  ", "since": "2026-11-24T09:30:00+01:00",
                       "until": "", "text": " loan 42 "},
            "grouped": false, "offset": 0, "limit": 10, "countPastPage": true
        }))
        .expect("the UI's query");
        let filter = query.filter.tidied();
        assert_eq!(filter.verdicts, vec![Verdict::Valid]);
        assert_eq!(filter.event_type, None);
        assert_eq!(filter.until, None);
        assert_eq!(filter.text.as_deref(), Some("loan 42"));
        assert_eq!(
            filter.since.map(|t| t.to_rfc3339()),
            Some("2026-11-24T08:30:00+00:00".into())
        );
        let bad = serde_json::from_value::<InspectorQuery>(serde_json::json!({
            "filter": {"until": "yesterday"},
            "grouped": false, "offset": 0, "limit": 10, "countPastPage": true
        }))
        .expect_err("not a time");
        assert!(bad.to_string().contains("\"yesterday\""), "{bad}");
    }

    #[test]
    fn a_stopped_or_failed_export_leaves_no_file_and_the_old_one_untouched() {
        let dir = tempfile::tempdir().expect("dir");
        let path = dir.path().join("captures.jsonl");
        std::fs::write(&path, "what was there").expect("write");
        // Stopped: nothing replaces it, nothing is left beside it.
        write_replacing(&path, |out| {
            out.write_all(b"half").expect("write");
            Ok((false, ()))
        })
        .expect("stopped");
        assert_eq!(
            std::fs::read_to_string(&path).expect("read"),
            "what was there"
        );
        // Failed: the same.
        let failed = write_replacing(&path, |out| -> Result<(bool, ())> {
            out.write_all(b"half").expect("write");
            Err(AppError::invalid("broken"))
        });
        assert!(failed.is_err());
        assert_eq!(
            std::fs::read_to_string(&path).expect("read"),
            "what was there"
        );
        // Finished: moved over it.
        write_replacing(&path, |out| {
            out.write_all(b"whole").expect("write");
            Ok((true, ()))
        })
        .expect("done");
        assert_eq!(std::fs::read_to_string(&path).expect("read"), "whole");
        let names: Vec<_> = std::fs::read_dir(dir.path())
            .expect("list")
            .map(|e| e.expect("entry").file_name())
            .collect();
        assert_eq!(names.len(), 1, "no partial file: {names:?}");
    }
}
