//! The Tauri updater, wired to `partner_local::updates`' rules: when to check (at start unless
//! the setting or `PARTNER_NO_UPDATE_CHECK` says no, and when asked), where (the release page's
//! manifest, `PARTNER_UPDATE_URL`), and what the window is told. The plugin fetches the
//! manifest, downloads the package for this installation (`linux-x86_64-deb`, …), verifies its
//! minisign signature against the configuration's public key (bound to the announced version),
//! and installs it (a `.deb` through `pkexec dpkg -i`, else `sudo`); then the app restarts,
//! which the offer said before the user agreed.
//!
//! The window follows [`UpdateView`]: `update_state` reads it, every change is sent as the
//! `update` event.

use partner_local::updates::{
    self, Installer, UpdateFailure, UpdateOffer, UpdatePhase, UpdateView,
};
use std::sync::Mutex;
use tauri::{AppHandle, Emitter, Manager, Runtime};
use tauri_plugin_updater::{Update, UpdaterExt};

/// How long after the start the check runs: after the first screen, not in its way.
const START_DELAY: std::time::Duration = std::time::Duration::from_secs(3);

/// The updater plugin, with the public key the test hooks may replace.
pub fn plugin<R: Runtime>() -> tauri::plugin::TauriPlugin<R, tauri_plugin_updater::Config> {
    let mut builder = tauri_plugin_updater::Builder::new();
    if let Some(key) = crate::test_hooks::update_pubkey() {
        builder = builder.pubkey(key);
    }
    builder.build()
}

/// The app's update state and the update found, if any (Tauri state).
pub struct Updates {
    view: Mutex<UpdateView>,
    found: Mutex<Option<Update>>,
}

/// How this copy was installed, as the bundler marked its binary.
pub fn installer() -> Option<Installer> {
    use tauri::utils::config::BundleType;
    match tauri::utils::platform::bundle_type()? {
        BundleType::Deb => Some(Installer::Deb),
        BundleType::Rpm => Some(Installer::Rpm),
        BundleType::AppImage => Some(Installer::AppImage),
        BundleType::Msi => Some(Installer::Msi),
        BundleType::Nsis => Some(Installer::Nsis),
        BundleType::App | BundleType::Dmg => Some(Installer::App),
    }
}

impl std::fmt::Debug for Updates {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("Updates")
            .field("view", &self.view())
            .finish_non_exhaustive()
    }
}

fn lock<T>(mutex: &Mutex<T>) -> std::sync::MutexGuard<'_, T> {
    mutex
        .lock()
        .unwrap_or_else(|poisoned| poisoned.into_inner())
}

fn rfc3339(at: time::OffsetDateTime) -> Option<String> {
    at.format(&time::format_description::well_known::Rfc3339)
        .ok()
}

fn now() -> String {
    rfc3339(time::OffsetDateTime::now_utc()).unwrap_or_default()
}

impl Updates {
    pub fn new(current: String, settings: updates::UpdateSettings) -> Self {
        let view = UpdateView::new(current, settings, installer(), &updates::process_env);
        Self {
            view: Mutex::new(view),
            found: Mutex::new(None),
        }
    }

    pub fn view(&self) -> UpdateView {
        lock(&self.view).clone()
    }

    fn change(&self, app: &AppHandle, change: impl FnOnce(&mut UpdateView)) -> UpdateView {
        let view = {
            let mut view = lock(&self.view);
            change(&mut view);
            view.clone()
        };
        let event = partner_console_core::AppEvent::Update(view.clone());
        let _ = app.emit(event.name(), &event);
        view
    }

    /// The setting changed: what is said about checks follows it.
    pub fn set_settings(&self, app: &AppHandle, settings: updates::UpdateSettings) -> UpdateView {
        self.change(app, |view| {
            view.settings = settings;
            view.off = updates::start_check(&settings, installer(), &updates::process_env).err();
            view.off_note = view.off.map(|o| o.explained().to_string());
        })
    }
}

/// The check at start, when the rules allow it; with the test hooks' consent the update found
/// is installed at once.
pub fn check_at_start(app: &AppHandle) {
    let updates = app.state::<Updates>();
    let settings = updates.view().settings;
    if let Err(off) = updates::start_check(&settings, installer(), &updates::process_env) {
        tracing::info!(?off, "updates: no check at start");
        return;
    }
    let app = app.clone();
    tauri::async_runtime::spawn(async move {
        tokio::time::sleep(START_DELAY).await;
        let view = check(&app).await;
        if view.phase == UpdatePhase::Available && crate::test_hooks::accept_updates() {
            tracing::info!("updates: the test hook accepts the update");
            let _ = install(&app).await;
        }
    });
}

/// Asks the manifest once; the view says what was found.
pub async fn check(app: &AppHandle) -> UpdateView {
    let updates = app.state::<Updates>();
    if let Err(off) = updates::asked_check(&updates::process_env) {
        return updates.change(app, |view| view.off = Some(off));
    }
    if matches!(
        updates.view().phase,
        UpdatePhase::Checking | UpdatePhase::Installing
    ) {
        return updates.view();
    }
    updates.change(app, |view| {
        view.phase = UpdatePhase::Checking;
        view.problem = None;
    });
    let current = updates.view().current;
    let found = find(app).await;
    let view = updates.change(app, |view| {
        view.checked_at = Some(now());
        match &found {
            Ok(Some(update)) => {
                view.phase = UpdatePhase::Available;
                view.offer = Some(offer(update));
            }
            Ok(None) => {
                view.phase = UpdatePhase::UpToDate;
                view.offer = None;
            }
            Err(failure) => {
                view.phase = UpdatePhase::Failed;
                view.offer = None;
                view.problem = Some(failure.problem(None, &current));
            }
        }
    });
    match found {
        Ok(Some(update)) => {
            tracing::info!(version = %update.version, current = %current, "updates: a newer version is available");
            *lock(&updates.found) = Some(update);
        }
        Ok(None) => tracing::info!(current = %current, "updates: up to date"),
        Err(failure) => {
            let problem = failure.problem(None, &current);
            tracing::warn!(
                "updates: the check failed: {} {}",
                problem.message,
                problem.hint
            );
        }
    }
    view
}

async fn find(app: &AppHandle) -> Result<Option<Update>, UpdateFailure> {
    let url = updates::manifest_url(&updates::process_env).map_err(UpdateFailure::BadManifest)?;
    let updater = app
        .updater_builder()
        .endpoints(vec![url])
        .and_then(|builder| builder.timeout(updates::CHECK_TIMEOUT).build())
        .map_err(|e| failure(&e, None))?;
    updater.check().await.map_err(|e| failure(&e, None))
}

fn offer(update: &Update) -> UpdateOffer {
    UpdateOffer::new(
        update.version.clone(),
        update.current_version.clone(),
        update.body.clone(),
        update.date.and_then(rfc3339),
        installer(),
    )
}

/// Downloads, verifies and installs the update found, then restarts the app (the user agreed
/// to that in the offer). A failure leaves the installed version as it was and says why.
pub async fn install(app: &AppHandle) -> UpdateView {
    let updates = app.state::<Updates>();
    let Some(update) = lock(&updates.found).clone() else {
        return updates.view();
    };
    if updates.view().phase == UpdatePhase::Installing {
        return updates.view();
    }
    let current = update.current_version.clone();
    let version = update.version.clone();
    let installer = installer();
    updates.change(app, |view| {
        view.phase = UpdatePhase::Installing;
        view.problem = None;
        view.downloaded = Some(0);
        view.total = None;
    });
    tracing::info!(%version, url = %update.download_url, "updates: downloading");
    let progress_app = app.clone();
    let mut downloaded = 0u64;
    let mut told = 0u64;
    let bytes = update
        .download(
            move |chunk, total| {
                downloaded += chunk as u64;
                // A few changes a second at most: one per 2% (or per MiB when the size is unknown).
                let step = total.map(|t| (t / 50).max(1)).unwrap_or(1 << 20);
                if downloaded - told >= step || Some(downloaded) == total {
                    told = downloaded;
                    let updates = progress_app.state::<Updates>();
                    updates.change(&progress_app, |view| {
                        view.downloaded = Some(downloaded);
                        view.total = total;
                    });
                }
            },
            || {},
        )
        .await;
    // `download` verified the signature; the package manager runs off the async runtime (it
    // may wait for a password).
    let installed = match bytes {
        Ok(bytes) => tauri::async_runtime::spawn_blocking(move || update.install(bytes))
            .await
            .unwrap_or_else(|e| {
                Err(tauri_plugin_updater::Error::Io(std::io::Error::other(
                    e.to_string(),
                )))
            }),
        Err(error) => Err(error),
    };
    if let Err(error) = installed {
        let failure = failure(&error, installer);
        let problem = failure.problem(Some(&version), &current);
        tracing::warn!(
            %version,
            refused_as_not_genuine = failure.is_refused_as_not_genuine(),
            "updates: {} {} ({error})",
            problem.message,
            problem.hint
        );
        return updates.change(app, |view| {
            view.phase = UpdatePhase::Failed;
            view.problem = Some(problem);
            view.downloaded = None;
            view.total = None;
        });
    }
    tracing::info!(%version, "updates: installed; restarting");
    // The next process must not hand itself over to this one, which is about to end.
    if let Ok(data_dir) = partner_local::paths::data_dir() {
        partner_console_core::services::instance::release(&data_dir);
    }
    app.request_restart();
    updates.view()
}

/// What the updater reported, sorted into the rules' failures.
fn failure(error: &tauri_plugin_updater::Error, installer: Option<Installer>) -> UpdateFailure {
    use tauri_plugin_updater::Error as E;
    match error {
        E::Minisign(minisign_verify::Error::UnexpectedKeyId) => UpdateFailure::SignedByAnotherKey,
        E::Minisign(minisign_verify::Error::InvalidSignature) => UpdateFailure::BytesDoNotMatch,
        E::Minisign(_) | E::Base64(_) | E::SignatureUtf8(_) | E::MissingSignedVersion => {
            UpdateFailure::UnreadableSignature
        }
        E::SignedVersionMismatch { signed, announced } => UpdateFailure::SignedForAnotherVersion {
            signed: signed.clone(),
            announced: announced.clone(),
        },
        E::TargetsNotFound(targets) => UpdateFailure::NoPackageForThis(targets.clone()),
        E::TargetNotFound(target) => UpdateFailure::NoPackageForThis(vec![target.clone()]),
        E::InvalidUpdaterFormat | E::BinaryNotFoundInArchive => UpdateFailure::NotAPackage,
        E::PackageInstallFailed | E::DebInstallFailed | E::AuthenticationFailed => {
            UpdateFailure::InstallRefused { installer }
        }
        // No pkexec, no sudo: nothing could ask for the password.
        E::Io(io)
            if io.kind() == std::io::ErrorKind::NotFound
                && matches!(installer, Some(Installer::Deb | Installer::Rpm)) =>
        {
            UpdateFailure::InstallRefused { installer }
        }
        E::Reqwest(e) => UpdateFailure::Unreachable(describe(e)),
        E::Network(why) => UpdateFailure::Unreachable(why.clone()),
        E::ReleaseNotFound => {
            UpdateFailure::BadManifest("the update server did not answer with a manifest".into())
        }
        E::Serialization(e) => UpdateFailure::BadManifest(e.to_string()),
        E::Semver(e) => UpdateFailure::BadManifest(e.to_string()),
        E::InsecureTransportProtocol => UpdateFailure::BadManifest(
            "the manifest's address must be https in a release build".into(),
        ),
        other => UpdateFailure::Other(other.to_string()),
    }
}

fn describe(error: &dyn std::error::Error) -> String {
    let mut text = error.to_string();
    let mut source = error.source();
    while let Some(cause) = source {
        text = format!("{text}: {cause}");
        source = cause.source();
    }
    text
}

#[cfg(test)]
mod tests {
    use super::*;
    use tauri_plugin_updater::Error as E;

    #[test]
    fn the_updaters_errors_are_sorted_into_the_rules_failures() {
        let deb = Some(Installer::Deb);
        assert_eq!(
            failure(&E::Minisign(minisign_verify::Error::UnexpectedKeyId), deb),
            UpdateFailure::SignedByAnotherKey
        );
        assert_eq!(
            failure(&E::Minisign(minisign_verify::Error::InvalidSignature), deb),
            UpdateFailure::BytesDoNotMatch
        );
        assert_eq!(
            failure(&E::Minisign(minisign_verify::Error::InvalidEncoding), deb),
            UpdateFailure::UnreadableSignature
        );
        assert_eq!(
            failure(
                &E::SignedVersionMismatch {
                    signed: "0.1.0".into(),
                    announced: "0.2.0".into()
                },
                deb
            ),
            UpdateFailure::SignedForAnotherVersion {
                signed: "0.1.0".into(),
                announced: "0.2.0".into()
            }
        );
        // No administrator's password (pkexec and sudo refused, or neither there).
        for refused in [
            E::PackageInstallFailed,
            E::AuthenticationFailed,
            E::Io(std::io::Error::from(std::io::ErrorKind::NotFound)),
        ] {
            assert_eq!(
                failure(&refused, deb),
                UpdateFailure::InstallRefused { installer: deb }
            );
        }
        assert_eq!(
            failure(&E::TargetsNotFound(vec!["linux-x86_64-deb".into()]), deb),
            UpdateFailure::NoPackageForThis(vec!["linux-x86_64-deb".into()])
        );
        assert_eq!(
            failure(&E::InvalidUpdaterFormat, deb),
            UpdateFailure::NotAPackage
        );
        assert!(matches!(
            failure(&E::ReleaseNotFound, None),
            UpdateFailure::BadManifest(_)
        ));
        assert!(matches!(
            failure(&E::Network("refused".into()), None),
            UpdateFailure::Unreachable(_)
        ));
    }
}
