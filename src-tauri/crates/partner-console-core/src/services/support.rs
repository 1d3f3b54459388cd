//! The support desk: the active connection's local index (`partner-index`: an encrypted copy of
//! its transactions and products, its key in the keychain). "Go to" any id is
//! `services::go_to`.
//!
//! Why a cache of the open index: SQLCipher decrypts every page it reads, and the index keeps a
//! page cache of its own; opening the file for each question would throw it away (and read the
//! key from the keychain, a D-Bus round trip, every time). The index of the active connection
//! stays open until another connection is asked about or the user forgets it.
//!
//! Questions never walk pages: `find` and `counts` are the index's. Only a sync talks to the
//! service, and a captured notification refreshes the one transaction it names
//! ([`follow_captures`]).
//!
//! Joined to a team workspace (`services::workspace`), the desk asks the team's index instead:
//! the workspace's `transactions/state`, `find`, `counts` and `sync`, whose bodies are
//! `partner-index`'s own types, so the screens get the same views either way. The team's
//! servers hold the service connection and sync once for everyone; this machine's copy is left
//! as it is, and used again when the workspace is left.
use crate::bridge::{
    ConnectionView, FileJobResult, Progress, SupportCount, SupportCounts, SupportExportForm,
    SupportFilter, SupportIndexView, SupportPage, SupportQuery, SupportSyncForm, SupportSyncResult,
};
use crate::console::{AppEvent, Console};
use crate::error::{AppError, ErrorKind, Result};
use crate::services::file_dialog::{self, FileChoice};
use crate::services::jobs::Job;
use crate::services::workspace::{self, Joined};
use crate::state::locked;
use crate::state::{AppState, FileIdentity, OpenIndex};
use partner_api::ResourceAddress;
use partner_client::PartnerClient;
use partner_index::{ChangeKind, Index, SyncEnd};
use partner_listener::{Listener, LiveEvent, Verdict};
use partner_local::Environment;
use partner_workspace::roles::Action;
use serde_json::json;
use tokio_util::sync::CancellationToken;

/// The most transactions one page of answers holds.
const MAX_PAGE: u32 = 200;

/// The active connection's view and client.
fn active(state: &AppState) -> Result<(ConnectionView, PartnerClient)> {
    state
        .lock()
        .active
        .as_ref()
        .map(|a| (a.view.clone(), a.client.clone()))
        .ok_or_else(AppError::not_connected)
}

/// The index's name for a connection: its base URL and client id (the CLI finds the same file).
fn index_id(view: &ConnectionView) -> Result<String> {
    let base = url::Url::parse(&view.base_url).map_err(|e| {
        AppError::new(
            ErrorKind::Internal,
            format!(
                "The connection's base URL {} is not a URL: {e}.",
                view.base_url
            ),
            "Edit the connection.",
        )
    })?;
    Ok(partner_index::index_id(&base, &view.client_id))
}

/// The open index of `view`'s connection; with `create`, made when there is none yet. Runs on
/// the blocking pool (the keychain, the file).
async fn open(state: &AppState, view: &ConnectionView, create: bool) -> Result<Option<Index>> {
    let id = index_id(view)?;
    let path = partner_index::index_path(&state.data_dir, &id)?;
    {
        let mut open_index = locked(&state.support_index);
        if let Some(open) = open_index.as_ref() {
            if open.id == id && FileIdentity::of(&path) == Some(open.file) {
                return Ok(Some(open.index.clone()));
            }
            // Another connection's, or a file deleted (and perhaps made again) under it.
            *open_index = None;
        }
    }
    if !create && !path.exists() {
        return Ok(None);
    }
    let data_dir = state.data_dir.clone();
    let secrets = state.secrets.clone();
    let opened_id = id.clone();
    let index =
        tokio::task::spawn_blocking(move || Index::open(&data_dir, &opened_id, secrets.as_ref()))
            .await
            .map_err(|e| internal(&e))??;
    if let Some(file) = FileIdentity::of(&path) {
        *locked(&state.support_index) = Some(OpenIndex {
            id,
            index: index.clone(),
            file,
        });
    }
    Ok(Some(index))
}

fn internal(error: &dyn std::fmt::Display) -> AppError {
    AppError::new(
        ErrorKind::Internal,
        format!("The local index could not be read: {error}."),
        "Try again.",
    )
}

/// Runs `work` on the blocking pool (SQLCipher reads decrypt pages: not on an async worker).
async fn blocking<T: Send + 'static>(
    work: impl FnOnce() -> std::result::Result<T, partner_index::Error> + Send + 'static,
) -> Result<T> {
    Ok(tokio::task::spawn_blocking(work)
        .await
        .map_err(|e| internal(&e))??)
}

/// What the active connection's index holds (joined to a workspace: the team's index).
pub async fn view(state: &AppState) -> Result<SupportIndexView> {
    if let Some(joined) = workspace::joined(state) {
        return team_view(state, &joined).await;
    }
    let (connection, _) = active(state)?;
    let index = open(state, &connection, false).await?;
    let index_state = match &index {
        Some(index) => {
            let index = index.clone();
            Some(blocking(move || index.state()).await?)
        }
        None => None,
    };
    let path = partner_index::index_path(&state.data_dir, &index_id(&connection)?)?;
    Ok(SupportIndexView {
        exists: index_state.is_some(),
        as_of: index_state
            .as_ref()
            .and_then(|s| s.as_of)
            .map(|t| t.to_rfc3339()),
        filled: index_state.as_ref().is_some_and(|s| s.filled),
        fill_position: index_state.as_ref().map_or(0, |s| s.fill_position),
        fill_total: index_state.as_ref().and_then(|s| s.fill_total),
        transactions: index_state.as_ref().map_or(0, |s| s.transactions),
        products: index_state.as_ref().map_or(0, |s| s.products),
        production: connection.environment == Environment::Production,
        connection_label: connection.label.clone(),
        path: path.display().to_string(),
        workspace: None,
    })
}

/// What the team workspace's index holds.
async fn team_view(state: &AppState, joined: &Joined) -> Result<SupportIndexView> {
    let index: partner_index::IndexState = workspace::answered(
        state,
        joined
            .client
            .get("/api/v1/transactions/state", &[] as &[(&str, &str)])
            .await,
    )?;
    Ok(team_index_view(joined, &index))
}

fn team_index_view(joined: &Joined, index: &partner_index::IndexState) -> SupportIndexView {
    let url = joined.describe();
    SupportIndexView {
        exists: index.as_of.is_some() || index.transactions > 0,
        as_of: index.as_of.map(|t| t.to_rfc3339()),
        filled: index.filled,
        fill_position: index.fill_position,
        fill_total: index.fill_total,
        transactions: index.transactions,
        products: index.products,
        // The team's servers hold the data: nothing is copied to this machine.
        production: false,
        connection_label: format!("the team workspace {url}"),
        path: url.clone(),
        workspace: Some(url),
    }
}

/// Fills or refreshes the index, as job `form.job_id` (progress as `support-sync-progress`
/// events, stopped by `cancel_job`). A production connection's first copy needs the user's
/// yes (`allow_production`): it holds lenders' and borrowers' data.
pub async fn sync(app: &Console, form: SupportSyncForm) -> Result<SupportSyncResult> {
    let state = app.state();
    if let Some(joined) = workspace::joined(state) {
        return team_sync(app, &joined, form).await;
    }
    let (connection, client) = active(state)?;
    let exists = open(state, &connection, false).await?.is_some();
    if connection.environment == Environment::Production && !exists && !form.allow_production {
        return Err(AppError::new(
            ErrorKind::InvalidInput,
            format!(
                "{} is a production connection: a local copy holds lenders' and borrowers' data.",
                connection.label
            ),
            "Agree to keep an encrypted copy on this machine, or use the service's own pages.",
        ));
    }
    let Some(index) = open(state, &connection, true).await? else {
        return Err(internal(&"no index"));
    };
    let job = Job::start(app, &form.job_id);
    // The last progress told, so a wait the service asks for is told beside it.
    let last = std::sync::Arc::new(std::sync::Mutex::new(Progress {
        job_id: Some(form.job_id.clone()),
        phase: Some("products".into()),
        done: 0,
        total: None,
        note: None,
    }));
    let _waits = {
        let emitter = app.clone();
        let last = last.clone();
        crate::services::jobs::watch_waits(&client, move |note| {
            let mut told = crate::state::locked(&last).clone();
            told.note = note.or(told.note);
            emitter.emit(AppEvent::SupportSyncProgress(told));
        })
    };
    // The fallbacks the sync took, said again with its result (the progress that said them is
    // gone by then).
    let fallbacks = std::sync::Arc::new(std::sync::Mutex::new(Vec::<String>::new()));
    let emitter = app.clone();
    let job_id = form.job_id.clone();
    let noted = fallbacks.clone();
    let report = partner_index::sync(
        &client,
        &index,
        move |progress| {
            let phase = match progress.phase {
                partner_index::SyncPhase::Products => "products",
                partner_index::SyncPhase::Fill => "fill",
                partner_index::SyncPhase::Refresh => "refresh",
            };
            let told = Progress {
                job_id: Some(job_id.clone()),
                phase: Some(phase.into()),
                done: progress.done,
                total: progress.total,
                note: progress.note.clone(),
            };
            if let Some(note) = &progress.note {
                let mut noted = crate::state::locked(&noted);
                // A refusal the fill already told ("the service does not sort by `updated`
                // (…); every refresh reads every item") is not told again by the refresh.
                let refusal = note.split(" (").next().unwrap_or(note);
                if !noted.iter().any(|told| told.contains(refusal)) {
                    noted.push(note.clone());
                }
            }
            *crate::state::locked(&last) = told.clone();
            emitter.emit(AppEvent::SupportSyncProgress(told));
        },
        &job.stop,
    )
    .await?;
    let count = |kind: ChangeKind| report.changes.iter().filter(|c| c.kind == kind).count() as u64;
    let fallbacks = crate::state::locked(&fallbacks).clone();
    Ok(SupportSyncResult {
        cancelled: report.end == SyncEnd::Cancelled,
        filled: report.filled,
        created: count(ChangeKind::Created),
        updated: count(ChangeKind::Updated),
        fallbacks,
        index: view(state).await?,
    })
}

/// Asks the team's servers to sync the workspace's index now (after any sync already under
/// way on another server), as job `form.job_id`. Stopping the job stops waiting for the answer;
/// the servers' sync goes on, for everyone.
async fn team_sync(
    app: &Console,
    joined: &Joined,
    form: SupportSyncForm,
) -> Result<SupportSyncResult> {
    let state = app.state();
    joined.may(Action::SyncIndex)?;
    let job = Job::start(app, &form.job_id);
    app.emit(AppEvent::SupportSyncProgress(Progress {
        job_id: Some(form.job_id.clone()),
        phase: Some("refresh".into()),
        done: 0,
        total: None,
        note: Some(format!(
            "the team's servers are syncing {}'s index",
            joined.describe()
        )),
    }));
    let body = json!({});
    let asked = joined
        .client
        .post::<_, partner_index::SyncReport>("/api/v1/transactions/sync", &body);
    let report = tokio::select! {
        report = asked => workspace::answered(state, report)?,
        () = job.stop.cancelled() => {
            return Ok(SupportSyncResult {
                cancelled: true,
                filled: 0,
                created: 0,
                updated: 0,
                fallbacks: vec![
                    "stopped waiting: the team's servers finish the sync for everyone".to_string(),
                ],
                index: team_view(state, joined).await?,
            });
        }
    };
    let count = |kind: ChangeKind| report.changes.iter().filter(|c| c.kind == kind).count() as u64;
    Ok(SupportSyncResult {
        cancelled: report.end == SyncEnd::Cancelled,
        filled: report.filled,
        created: count(ChangeKind::Created),
        updated: count(ChangeKind::Updated),
        fallbacks: Vec::new(),
        index: team_index_view(joined, &report.state),
    })
}

/// The index's filter for the screen's (bad times and statuses are the user's to correct).
pub fn filter_of(filter: &SupportFilter) -> Result<partner_index::Filter> {
    use crate::services::form::{instant, trimmed};
    Ok(partner_index::Filter {
        status: trimmed(&filter.status),
        product: trimmed(&filter.product),
        request_type: trimmed(&filter.request_type),
        response_status: trimmed(&filter.response_status),
        created_since: instant(&filter.created_since, "created from")?,
        created_before: instant(&filter.created_before, "created before")?,
        updated_since: instant(&filter.updated_since, "updated from")?,
        updated_before: instant(&filter.updated_before, "updated before")?,
        partner_status: trimmed(&filter.partner_status),
        reference_number: trimmed(&filter.reference_number),
        requesting_party: trimmed(&filter.requesting_party),
        loan: filter
            .loan
            .iter()
            .filter(|l| !l.field.trim().is_empty())
            .map(|l| partner_index::LoanField {
                field: l.field.trim().to_string(),
                value: l.value.trim().to_string(),
            })
            .collect(),
        text: trimmed(&filter.text),
    })
}

/// The index, which must exist: questions are never answered by walking the service.
async fn existing(state: &AppState) -> Result<Index> {
    let (connection, _) = active(state)?;
    open(state, &connection, false).await?.ok_or_else(|| {
        AppError::new(
            ErrorKind::InvalidInput,
            format!("{} has no local copy yet.", connection.label),
            "Make one on the Support screen (Sync), then ask again.",
        )
    })
}

/// One page of the transactions the filter selects, newest first (joined: the team's index).
pub async fn find(state: &AppState, query: SupportQuery) -> Result<SupportPage> {
    let filter = filter_of(&query.filter)?;
    let limit = u64::from(query.limit.clamp(1, MAX_PAGE));
    let offset = query.offset;
    let found = match workspace::joined(state) {
        Some(joined) => team_find(state, &joined, &filter, limit, offset).await?,
        None => {
            let index = existing(state).await?;
            blocking(move || index.find(&filter, limit, offset)).await?
        }
    };
    Ok(SupportPage {
        total: found.total,
        offset: found.offset,
        items: found.items.into_iter().map(Into::into).collect(),
        as_of: found.as_of.map(|t| t.to_rfc3339()),
    })
}

/// A page of the team index's answers.
async fn team_find(
    state: &AppState,
    joined: &Joined,
    filter: &partner_index::Filter,
    limit: u64,
    offset: u64,
) -> Result<partner_index::Found> {
    workspace::answered(
        state,
        joined
            .client
            .post(
                "/api/v1/transactions/find",
                &json!({ "filter": filter, "limit": limit, "offset": offset }),
            )
            .await,
    )
}

/// How many transactions the filter selects, per status and per product (joined: the team's
/// index).
pub async fn counts(state: &AppState, filter: SupportFilter) -> Result<SupportCounts> {
    let filter = filter_of(&filter)?;
    let counts: partner_index::Counts = match workspace::joined(state) {
        Some(joined) => workspace::answered(
            state,
            joined
                .client
                .post("/api/v1/transactions/counts", &json!({ "filter": filter }))
                .await,
        )?,
        None => {
            let index = existing(state).await?;
            blocking(move || index.counts(&filter)).await?
        }
    };
    Ok(SupportCounts {
        total: counts.total,
        by_status: counts
            .by_status
            .into_iter()
            .map(|(status, count)| SupportCount {
                key: status.clone(),
                label: status,
                count,
            })
            .collect(),
        by_product: counts
            .by_product
            .into_iter()
            .map(|(id, name, count)| SupportCount {
                key: id,
                label: name,
                count,
            })
            .collect(),
        as_of: counts.as_of.map(|t| t.to_rfc3339()),
    })
}

/// Exports the filtered set (the listing export's CSV shape, or JSON) to a file the user picks.
pub async fn export(app: &Console, form: SupportExportForm) -> Result<FileJobResult> {
    let state = app.state();
    if let Some(joined) = workspace::joined(state) {
        return team_export(app, &joined, form).await;
    }
    let index = existing(state).await?;
    let filter = filter_of(&form.filter)?;
    let format = index_format(form.format);
    let Some(path) = export_file(app, form.format).await else {
        return Ok(FileJobResult::closed());
    };
    let job = Job::start(app, &form.job_id);
    written(path, move |out| {
        let (_, written) = index.export(&filter, None, 0, format, out)?;
        job.progress(written, Some(written));
        Ok(written)
    })
    .await
}

/// Exports the team index's answers to the filter: read a page of [`MAX_FIND_LIMIT`] at a time
/// (the job's progress, stoppable between pages: nothing is written then), then written as the
/// local export writes them (the listing export's CSV, or a JSON array of the service's
/// objects).
///
/// [`MAX_FIND_LIMIT`]: partner_index::MAX_FIND_LIMIT
async fn team_export(
    app: &Console,
    joined: &Joined,
    form: SupportExportForm,
) -> Result<FileJobResult> {
    let state = app.state();
    let filter = filter_of(&form.filter)?;
    let Some(path) = export_file(app, form.format).await else {
        return Ok(FileJobResult::closed());
    };
    let job = Job::start(app, &form.job_id);
    let mut rows: Vec<serde_json::Value> = Vec::new();
    loop {
        if job.cancelled() {
            return Ok(FileJobResult {
                path: None,
                count: 0,
                skipped: 0,
                cancelled: true,
            });
        }
        let page = team_find(
            state,
            joined,
            &filter,
            partner_index::MAX_FIND_LIMIT,
            rows.len() as u64,
        )
        .await?;
        let read = page.items.len() as u64;
        rows.extend(
            page.items
                .into_iter()
                .map(|item| serde_json::Value::Object(item.into_parts().0)),
        );
        let total = (!page.total_capped).then_some(page.total);
        job.progress(rows.len() as u64, total);
        if read < partner_index::MAX_FIND_LIMIT {
            break;
        }
    }
    let format = index_format(form.format);
    written(path, move |out| {
        partner_index::write_export(&rows, format, out)
            .map_err(|e| AppError::io("write the export", &e))?;
        Ok(rows.len() as u64)
    })
    .await
}

fn index_format(format: crate::bridge::ExportFormat) -> partner_index::Export {
    match format {
        crate::bridge::ExportFormat::Csv => partner_index::Export::Csv,
        crate::bridge::ExportFormat::Json => partner_index::Export::Json,
    }
}

/// The file an export of transactions goes to, as the user chooses it; `None` when the dialog
/// was closed.
async fn export_file(
    app: &Console,
    format: crate::bridge::ExportFormat,
) -> Option<std::path::PathBuf> {
    let choice = FileChoice::table_export(
        "Export transactions".into(),
        "transactions",
        format,
        app.state().exports_dir(),
    );
    file_dialog::save(app, choice).await
}

/// Writes an export to `path` on the blocking pool (whole or not at all:
/// `captures::write_replacing`); `write` says how many transactions it wrote.
async fn written(
    path: std::path::PathBuf,
    write: impl FnOnce(&mut dyn std::io::Write) -> Result<u64> + Send + 'static,
) -> Result<FileJobResult> {
    let target = path.clone();
    let count = tokio::task::spawn_blocking(move || {
        crate::services::captures::write_replacing(&target, |out| Ok((true, write(out)?)))
    })
    .await
    .map_err(|e| internal(&e))??;
    Ok(FileJobResult {
        path: Some(path.display().to_string()),
        count,
        skipped: 0,
        cancelled: false,
    })
}

/// Deletes the active connection's local copy and its key.
pub async fn forget(state: &AppState) -> Result<SupportIndexView> {
    if let Some(joined) = workspace::joined(state) {
        return Err(AppError::new(
            ErrorKind::InvalidInput,
            format!(
                "The support desk answers from the team workspace {}: its index is the team's, kept by its servers.",
                joined.describe()
            ),
            "To forget this machine's own copy, leave the workspace in Connections first.",
        ));
    }
    let (connection, _) = active(state)?;
    let id = index_id(&connection)?;
    let open = locked(&state.support_index).take();
    drop(open);
    let data_dir = state.data_dir.clone();
    let secrets = state.secrets.clone();
    blocking(move || partner_index::forget(&data_dir, &id, secrets.as_ref())).await?;
    view(state).await
}

/// Keeps the active connection's index fresh from the listener: each valid notification about
/// a transaction of the active connection's service refreshes that transaction (and its events)
/// at once, when there is an index. Stops with `stop`.
pub fn follow_captures(app: Console, listener: &Listener, stop: CancellationToken) {
    let mut feed = listener.subscribe();
    app.clone().spawn(async move {
        loop {
            let event = tokio::select! {
                event = feed.recv() => event,
                () = stop.cancelled() => return,
            };
            let capture = match event {
                Ok(LiveEvent::Captured(capture)) => capture,
                Ok(_) => continue,
                Err(tokio::sync::broadcast::error::RecvError::Lagged(_)) => continue,
                Err(tokio::sync::broadcast::error::RecvError::Closed) => return,
            };
            if capture.verdict != Verdict::Valid {
                continue;
            }
            let Some(reference) = capture.fields.resource_ref.clone() else {
                continue;
            };
            let state = app.state();
            let Ok((connection, client)) = active(state) else {
                continue;
            };
            let transaction_id = match partner_api::resource_at(&connection.base_url, &reference) {
                Ok(ResourceAddress::Transaction { transaction_id })
                | Ok(ResourceAddress::Event { transaction_id, .. }) => transaction_id,
                Err(_) => continue,
            };
            let Ok(Some(index)) = open(state, &connection, false).await else {
                continue;
            };
            if let Err(error) = partner_index::refresh_one(&client, &index, &transaction_id).await {
                tracing::warn!(%error, "refreshing a notified transaction in the local index failed");
            }
        }
    });
}

#[cfg(test)]
mod tests {
    use super::*;
    use partner_local::settings::Environment;

    fn connection() -> ConnectionView {
        ConnectionView {
            id: "c1".into(),
            label: "A sandbox".into(),
            base_url: "http://127.0.0.1:9/".into(),
            client_id: "client-1".into(),
            environment: Environment::Sandbox,
            labelled: Environment::Sandbox,
            service_environment: None,
            embedded: false,
            network: Default::default(),
            read_only: false,
        }
    }

    #[tokio::test]
    async fn an_index_forgotten_or_made_again_under_the_running_app_is_not_read_from_the_deleted_file(
    ) {
        let dir = tempfile::tempdir().expect("dir");
        let state = crate::state::test_state(dir.path().to_path_buf());
        let view = connection();
        let id = index_id(&view).expect("id");
        let first = open(&state, &view, true)
            .await
            .expect("open")
            .expect("made");
        let first_path = first.path().to_path_buf();
        assert!(
            open(&state, &view, false).await.expect("open").is_some(),
            "kept open while its file is there"
        );
        drop(first);

        // `partner transactions forget` while the app runs: no index any more.
        partner_index::forget(&state.data_dir, &id, state.secrets.as_ref()).expect("forget");
        assert!(open(&state, &view, false).await.expect("open").is_none());
        assert!(
            locked(&state.support_index).is_none(),
            "the stale handle is dropped"
        );

        // Open again; then, while the app holds it, forgotten and made again by the CLI (a new
        // file at the same path): the new file is the one read.
        let held = open(&state, &view, true)
            .await
            .expect("open")
            .expect("made");
        let held_file = FileIdentity::of(held.path()).expect("a file");
        partner_index::forget(&state.data_dir, &id, state.secrets.as_ref()).expect("forget");
        drop(Index::open(&state.data_dir, &id, state.secrets.as_ref()).expect("remake"));
        let again = open(&state, &view, false)
            .await
            .expect("open")
            .expect("the new file");
        assert_eq!(again.path(), first_path.as_path());
        let open_file = locked(&state.support_index)
            .as_ref()
            .map(|open| open.file)
            .expect("open");
        assert_eq!(Some(open_file), FileIdentity::of(&first_path));
        assert_ne!(open_file, held_file, "not the deleted file still held");
        drop(held);
    }
}
