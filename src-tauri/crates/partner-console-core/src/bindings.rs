//! Writes the TypeScript declarations of every type that crosses the bridge into
//! `ui/src/bindings/`, and checks that the committed files match the Rust.
//!
//! The check is a test (`cargo test -p partner-console-core bindings`): it generates into a scratch
//! folder and compares file by file, so a Rust change that forgets to regenerate fails CI.
//! `PARTNER_WRITE_BINDINGS=1` makes the same test rewrite the committed files instead.

use crate::bridge::*;
use crate::error::{AppError, ErrorKind};
use std::path::{Path, PathBuf};
use ts_rs::TS;

/// Exports every bridge type (and the `partner-api` types they contain) into `dir`.
pub fn export_all(dir: &Path) -> Result<(), ts_rs::ExportError> {
    AppError::export_all_to(dir)?;
    ErrorKind::export_all_to(dir)?;
    AppStatus::export_all_to(dir)?;
    NewConnection::export_all_to(dir)?;
    ConnectionCheckView::export_all_to(dir)?;
    CheckStepEvent::export_all_to(dir)?;
    NetworkForm::export_all_to(dir)?;
    NetworkChange::export_all_to(dir)?;
    NetworkView::export_all_to(dir)?;
    CallSummary::export_all_to(dir)?;
    CallBatch::export_all_to(dir)?;
    CallList::export_all_to(dir)?;
    TokenView::export_all_to(dir)?;
    partner_api::Introspection::export_all_to(dir)?;
    PageQuery::export_all_to(dir)?;
    PageView::<Received<partner_api::read::Product>>::export_all_to(dir)?;
    PageView::<Received<partner_api::read::Transaction>>::export_all_to(dir)?;
    Received::<partner_api::read::TransactionEvent>::export_all_to(dir)?;
    partner_api::read::Product::export_all_to(dir)?;
    partner_api::read::Transaction::export_all_to(dir)?;
    partner_api::read::TransactionEvent::export_all_to(dir)?;
    partner_api::Transaction::export_all_to(dir)?;
    partner_api::ResponseStatus::export_all_to(dir)?;
    SortKeys::export_all_to(dir)?;
    ListingKind::export_all_to(dir)?;
    SearchRequest::export_all_to(dir)?;
    SearchProgress::export_all_to(dir)?;
    SearchResult::export_all_to(dir)?;
    ExportFormat::export_all_to(dir)?;
    ExportRequest::export_all_to(dir)?;
    FileJobResult::export_all_to(dir)?;
    AuditLogView::export_all_to(dir)?;
    FaultForm::export_all_to(dir)?;
    FaultView::export_all_to(dir)?;
    JobProgress::export_all_to(dir)?;
    CaptureExportForm::export_all_to(dir)?;
    InspectorQuery::export_all_to(dir)?;
    InspectorPage::export_all_to(dir)?;
    InspectorFacets::export_all_to(dir)?;
    ForwardRuleView::export_all_to(dir)?;
    OpenResource::export_all_to(dir)?;
    OutboundView::export_all_to(dir)?;
    NewProductForm::export_all_to(dir)?;
    NewSubscriptionForm::export_all_to(dir)?;
    RotateKeyForm::export_all_to(dir)?;
    ShownOnceKey::export_all_to(dir)?;
    SubscriptionKeys::export_all_to(dir)?;
    ElementKeys::export_all_to(dir)?;
    RespondForm::export_all_to(dir)?;
    TestMode::export_all_to(dir)?;
    ListenerView::export_all_to(dir)?;
    TunnelCheck::export_all_to(dir)?;
    TunnelFailureKind::export_all_to(dir)?;
    Verdict::export_all_to(dir)?;
    CaptureSummary::export_all_to(dir)?;
    CaptureBatch::export_all_to(dir)?;
    CaptureDetail::export_all_to(dir)?;
    Comparison::export_all_to(dir)?;
    SignatureReport::export_all_to(dir)?;
    SignatureCheck::export_all_to(dir)?;
    ReplayForm::export_all_to(dir)?;
    KeychainView::export_all_to(dir)?;
    ListenerBrief::export_all_to(dir)?;
    TunnelStatus::export_all_to(dir)?;
    ListenerAddressForm::export_all_to(dir)?;
    RetentionForm::export_all_to(dir)?;
    ClearCapturesForm::export_all_to(dir)?;
    ReceiverCheckForm::export_all_to(dir)?;
    ListenerSubscription::export_all_to(dir)?;
    MissedForm::export_all_to(dir)?;
    RecoverForm::export_all_to(dir)?;
    SendAgainForm::export_all_to(dir)?;
    SendReport::export_all_to(dir)?;
    TransactionNotifications::export_all_to(dir)?;
    PictureOf::export_all_to(dir)?;
    PictureFormat::export_all_to(dir)?;
    NotificationPicture::export_all_to(dir)?;
    partner_local::DesktopNotices::export_all_to(dir)?;
    partner_local::updates::UpdateView::export_all_to(dir)?;
    partner_local::recover::RecoveryReport::export_all_to(dir)?;
    EvidenceForm::export_all_to(dir)?;
    DeliveryView::export_all_to(dir)?;
    EvidenceResult::export_all_to(dir)?;
    MissedProgressView::export_all_to(dir)?;
    partner_local::missed::MissedReport::export_all_to(dir)?;
    partner_conformance::Report::export_all_to(dir)?;
    ClearResult::export_all_to(dir)?;
    TunnelSaved::export_all_to(dir)?;
    RepointOffer::export_all_to(dir)?;
    RepointedSubscription::export_all_to(dir)?;
    RepointResult::export_all_to(dir)?;
    SubscriptionChangeForm::export_all_to(dir)?;
    ReplayResult::export_all_to(dir)?;
    DemoOutcome::export_all_to(dir)?;
    ScenarioList::export_all_to(dir)?;
    ScenarioStartForm::export_all_to(dir)?;
    ScenarioPlayView::export_all_to(dir)?;
    SupportQuery::export_all_to(dir)?;
    SupportIndexView::export_all_to(dir)?;
    SupportSyncProgress::export_all_to(dir)?;
    SupportSyncForm::export_all_to(dir)?;
    SupportSyncResult::export_all_to(dir)?;
    SupportPage::export_all_to(dir)?;
    SupportCounts::export_all_to(dir)?;
    SupportExportForm::export_all_to(dir)?;
    GoToTarget::export_all_to(dir)?;
    Ok(())
}

/// `ui/src/bindings/` of this checkout.
pub fn committed_dir() -> PathBuf {
    Path::new(env!("CARGO_MANIFEST_DIR")).join("../../../ui/src/bindings")
}

#[cfg(test)]
mod tests {
    use super::*;
    use std::collections::BTreeMap;

    fn read_dir(dir: &Path) -> BTreeMap<String, String> {
        let mut files = BTreeMap::new();
        for entry in std::fs::read_dir(dir).unwrap() {
            let entry = entry.unwrap();
            let name = entry.file_name().to_string_lossy().into_owned();
            if name.ends_with(".ts") {
                files.insert(name, std::fs::read_to_string(entry.path()).unwrap());
            }
        }
        files
    }

    #[test]
    fn bindings_match_the_rust_types() {
        if std::env::var_os("PARTNER_WRITE_BINDINGS").is_some() {
            let dir = committed_dir();
            if dir.exists() {
                std::fs::remove_dir_all(&dir).unwrap();
            }
            std::fs::create_dir_all(&dir).unwrap();
            export_all(&dir).unwrap();
            return;
        }
        let scratch = std::env::temp_dir().join(format!("partner-bindings-{}", std::process::id()));
        let _ = std::fs::remove_dir_all(&scratch);
        std::fs::create_dir_all(&scratch).unwrap();
        export_all(&scratch).unwrap();
        let fresh = read_dir(&scratch);
        let committed = read_dir(&committed_dir());
        let _ = std::fs::remove_dir_all(&scratch);
        assert!(
            fresh.len() > 30,
            "expected the bridge types, got {}",
            fresh.len()
        );
        for (name, text) in &fresh {
            assert_eq!(
                committed.get(name),
                Some(text),
                "ui/src/bindings/{name} is out of date: run `PARTNER_WRITE_BINDINGS=1 cargo test -p partner-console-core bindings`"
            );
        }
        for name in committed.keys() {
            assert!(
                fresh.contains_key(name),
                "ui/src/bindings/{name} no longer comes from any Rust type: delete it"
            );
        }
    }
}
