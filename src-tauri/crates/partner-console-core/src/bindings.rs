//! Writes the TypeScript declarations of every type that crosses the bridge into
//! `ui/src/bindings/`, and checks that the committed files match the Rust.
//!
//! The check is a test (`cargo test -p partner-console-core bindings`): it generates into a scratch
//! folder and compares file by file, so a Rust change that forgets to regenerate fails CI.
//! `PARTNER_WRITE_BINDINGS=1` makes the same test rewrite the committed files instead.
//!
//! Beside the types it writes `Commands.ts`, from the one list of the commands
//! ([`crate::for_each_command!`]): the map `name → [arguments, result]` the UI's `call` is typed
//! over, so a wrong command name or argument is a `tsc` error, and `INVALIDATES`, the query keys
//! each command makes stale once it succeeded (the UI's platform layer reads them again); and
//! `Events.ts`, from the one list of the events ([`crate::for_each_event!`]): the map `name →
//! payload` and the names the UI listens by.

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
    Progress::export_all_to(dir)?;
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
    SupportSyncForm::export_all_to(dir)?;
    SupportSyncResult::export_all_to(dir)?;
    SupportPage::export_all_to(dir)?;
    SupportCounts::export_all_to(dir)?;
    SupportExportForm::export_all_to(dir)?;
    GoToTarget::export_all_to(dir)?;
    std::fs::write(dir.join("Commands.ts"), commands_ts())?;
    std::fs::write(dir.join("Events.ts"), events_ts())?;
    Ok(())
}

/// How one command of the list is seen from TypeScript.
struct CommandTs {
    name: &'static str,
    doc: Vec<&'static str>,
    /// Each argument's name as the window sends it (camelCase) and its TypeScript type.
    args: Vec<(String, String)>,
    result: String,
    /// Each key's parts, as TypeScript expressions over `args`.
    invalidates: Vec<Vec<String>>,
}

/// The imports a TypeScript type name needs: the type itself and its generic arguments, each
/// by its file in `ui/src/bindings/`.
fn imports_of<T: TS + 'static + ?Sized>(imports: &mut std::collections::BTreeMap<String, String>) {
    struct Visit<'a>(&'a mut std::collections::BTreeMap<String, String>);
    impl ts_rs::TypeVisitor for Visit<'_> {
        fn visit<T: TS + 'static + ?Sized>(&mut self) {
            if let Some(dep) = ts_rs::Dependency::from_ty::<T>() {
                let file = dep.output_path.with_extension("");
                self.0
                    .insert(dep.ts_name, format!("./{}", file.to_string_lossy()));
            }
            T::visit_generics(self);
        }
    }
    ts_rs::TypeVisitor::visit::<T>(&mut Visit(imports));
}

/// A type's name in TypeScript, as the bridge carries it: the bridge's integers are JSON
/// numbers, which ts-rs names `bigint` when they are 64-bit.
fn ts_name<T: TS + 'static + ?Sized>() -> String {
    T::name().replace("bigint", "number")
}

/// `snake_case` → `camelCase`, as Tauri names a command's arguments on the window's side.
fn camel(name: &str) -> String {
    let mut out = String::new();
    let mut upper = false;
    for ch in name.chars() {
        if ch == '_' {
            upper = true;
        } else if upper {
            out.extend(ch.to_uppercase());
            upper = false;
        } else {
            out.push(ch);
        }
    }
    out
}

/// One part of an invalidated key: a string as it is, an argument's path (`form.product_id`)
/// as the window's (`args.form.productId`).
fn key_part(part: &str) -> String {
    if part.starts_with('"') {
        part.to_owned()
    } else {
        let path: Vec<String> = part
            .split('.')
            .map(|segment| camel(segment.trim()))
            .collect();
        format!("args.{}", path.join("."))
    }
}

/// Gathers the list into [`CommandTs`] and the imports its types need.
macro_rules! ts_commands {
    ($(
        $(#[doc = $doc:literal])*
        $name:ident ( $($arg:ident : $ty:ty),* ) -> $ret:ty,
        invalidates [ $( [ $($key:expr),+ ] ),* ],
        $kind:ident |$c:ident| $body:expr;
    )*) => {{
        use crate::commands::prelude::*;
        let mut imports = std::collections::BTreeMap::new();
        let mut commands = Vec::new();
        $(
            $( imports_of::<$ty>(&mut imports); )*
            imports_of::<$ret>(&mut imports);
            commands.push(CommandTs {
                name: stringify!($name),
                doc: vec![$($doc),*],
                args: vec![$((camel(stringify!($arg)), ts_name::<$ty>())),*],
                result: ts_name::<$ret>(),
                invalidates: vec![$(vec![$(key_part(stringify!($key))),+]),*],
            });
        )*
        (imports, commands)
    }};
}

/// `ui/src/bindings/Commands.ts`.
pub fn commands_ts() -> String {
    let (imports, commands) = crate::for_each_command!(ts_commands);
    let mut out = String::from(
        "// This file was generated from `partner_console_core::for_each_command!` by the bindings test. Do not edit this file manually.\n",
    );
    for (name, file) in &imports {
        out.push_str(&format!("import type {{ {name} }} from \"{file}\";\n"));
    }
    out.push_str(
        "\n/** Every command the shell serves: its name → [its arguments as the window sends them, its result]. */\nexport type Commands = {\n",
    );
    for command in &commands {
        let doc: Vec<&str> = command.doc.iter().map(|line| line.trim()).collect();
        out.push_str(&format!(
            "  /** {} */\n",
            doc.join(" ").replace("*/", "* /")
        ));
        let args = if command.args.is_empty() {
            "Record<string, never>".to_owned()
        } else {
            let fields: Vec<String> = command
                .args
                .iter()
                .map(|(name, ty)| format!("{name}: {ty}"))
                .collect();
            format!("{{ {} }}", fields.join(", "))
        };
        out.push_str(&format!(
            "  {}: [{args}, {}];\n",
            command.name, command.result
        ));
    }
    out.push_str("};\n\n/** The query keys (each a prefix) a command makes stale once it succeeded. */\nexport const INVALIDATES: { readonly [K in keyof Commands]?: (args: Commands[K][0]) => ReadonlyArray<ReadonlyArray<string | number>> } = {\n");
    for command in commands.iter().filter(|c| !c.invalidates.is_empty()) {
        let keys: Vec<String> = command
            .invalidates
            .iter()
            .map(|key| format!("[{}]", key.join(", ")))
            .collect();
        let param = if keys.iter().any(|k| k.contains("args.")) {
            "(args)"
        } else {
            "()"
        };
        out.push_str(&format!(
            "  {}: {param} => [{}],\n",
            command.name,
            keys.join(", ")
        ));
    }
    out.push_str("};\n");
    out
}

/// `ui/src/bindings/` of this checkout.
pub fn committed_dir() -> PathBuf {
    Path::new(env!("CARGO_MANIFEST_DIR")).join("../../../ui/src/bindings")
}

/// Gathers the event list: (its doc, its variant, its name, its payload's TypeScript type),
/// and the imports the payloads need.
macro_rules! ts_events {
    ($( $(#[doc = $doc:literal])* $variant:ident($name:literal) => $payload:ty; )*) => {{
        use crate::commands::prelude::*;
        let mut imports = std::collections::BTreeMap::new();
        let mut events: Vec<(Vec<&'static str>, &'static str, &'static str, String)> = Vec::new();
        $(
            imports_of::<$payload>(&mut imports);
            events.push((vec![$($doc),*], stringify!($variant), $name, ts_name::<$payload>()));
        )*
        (imports, events)
    }};
}

/// `ui/src/bindings/Events.ts`.
pub fn events_ts() -> String {
    let (imports, events) = crate::for_each_event!(ts_events);
    let mut out = String::from(
        "// This file was generated from `partner_console_core::for_each_event!` by the bindings test. Do not edit this file manually.\n",
    );
    for (name, file) in &imports {
        out.push_str(&format!("import type {{ {name} }} from \"{file}\";\n"));
    }
    out.push_str(
        "\n/** Every event the window hears: its name → its payload. */\nexport type Events = {\n",
    );
    for (doc, _, name, payload) in &events {
        let doc: Vec<&str> = doc.iter().map(|line| line.trim()).collect();
        out.push_str(&format!(
            "  /** {} */\n",
            doc.join(" ").replace("*/", "* /")
        ));
        out.push_str(&format!("  \"{name}\": {payload};\n"));
    }
    out.push_str("};\n\n/** The events' names, by the camelCase of their Rust variant. */\nexport const EVENT_NAMES = {\n");
    for (_, variant, name, _) in &events {
        let mut key = variant.to_string();
        key[..1].make_ascii_lowercase();
        out.push_str(&format!("  {key}: \"{name}\",\n"));
    }
    out.push_str("} as const;\n");
    out
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
