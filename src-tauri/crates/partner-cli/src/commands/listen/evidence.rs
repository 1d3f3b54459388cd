//! `partner listen export --redact`: a redacted evidence bundle for a support ticket
//! (`partner_listener::evidence`): NAME.har and NAME.md for the captures selected by `--id` or
//! `--notification`, headers and `--mask-field` body fields masked, and every secret it can
//! know of (the keys given, the keychain's, the client secret and admin token of the
//! environment) searched for and masked. Keys serve the signature debugger's diagnosis only.
//!
//! With a team workspace, the server builds the bundle of its captures (`POST
//! /api/v1/evidence`): the keys and the service's secret it diagnoses with and masks are its own
//! and never reach this machine, so `--key`, `--keychain` and `--deliveries-from` do not apply
//! there and are refused rather than silently ignored.

use super::export::ExportArgs;
use super::keys::ListenKeys;
use crate::commands::store_args::store_path;
use crate::error::{CliError, Result};
use partner_api::Secret;
use partner_listener::evidence::{self, EvidenceOptions, FieldPath, Selection};
use partner_listener::keys::{KeySource, MemoryKeys};
use partner_local::KeychainKeys;
use std::collections::BTreeSet;
use std::sync::Arc;

/// Where the two files go (`--out NAME`), required.
fn out_of(args: &ExportArgs) -> Result<std::path::PathBuf> {
    args.out.clone().ok_or_else(|| {
        CliError::Usage(
            "--redact writes two files: give --out NAME (it writes NAME.har and NAME.md)".into(),
        )
    })
}

/// `export --redact` on a team workspace: the bundle built and redacted by the server.
pub async fn run_on_workspace(
    workspace: &crate::commands::workspace::Workspace,
    args: ExportArgs,
) -> Result<()> {
    let out = out_of(&args)?;
    let local_only = [
        (!args.keys.is_empty(), "--key"),
        (args.keychain, "--keychain"),
        (args.deliveries_from.is_some(), "--deliveries-from"),
    ];
    if let Some((_, flag)) = local_only.iter().find(|(given, _)| *given) {
        return Err(CliError::Usage(format!(
            "{flag} does not apply to a team workspace's evidence: its server diagnoses with the              signing keys it holds and masks every secret it knows (unset PARTNER_WORKSPACE, or              `partner workspace logout`, to bundle this machine's captures)"
        )));
    }
    selection_of(&args)?;
    let bundle = workspace
        .evidence(&partner_workspace::EvidenceRequest {
            ids: args.ids.clone(),
            event_id: args.notification.clone(),
            subscription_id: args.subscription.clone(),
            resource_type: args.resource_type.clone(),
            mask_fields: args.mask_fields.clone(),
        })
        .await?;
    let written = evidence::Bundle {
        har: bundle.har,
        summary: bundle.summary,
        report: bundle.report,
    };
    let (har_path, summary_path) = written.write(&out)?;
    said(bundle.captures, &har_path, &summary_path, &written.report);
    Ok(())
}

fn said(
    captures: usize,
    har_path: &std::path::Path,
    summary_path: &std::path::Path,
    report: &partner_listener::evidence::RedactionReport,
) {
    eprintln!(
        "partner: wrote the evidence of {captures} captures to {} and {} ({} headers, {} body fields and {} secrets masked)",
        har_path.display(),
        summary_path.display(),
        report.headers_masked,
        report.fields_masked,
        report.secrets_masked
    );
}

/// The captures `--id` or `--notification` choose.
fn selection_of(args: &ExportArgs) -> Result<Selection> {
    match (&args.notification, args.ids.is_empty()) {
        (Some(event_id), _) => Ok(Selection::Notification {
            event_id: event_id.clone(),
            subscription_id: args.subscription.clone(),
            resource_type: args.resource_type.clone(),
        }),
        (None, false) => Ok(Selection::Ids(args.ids.clone())),
        (None, true) => Err(CliError::Usage(
            "--redact needs a selection: --id CAPTURE_ID (repeatable) or --notification \
             EVENT_ID"
                .into(),
        )),
    }
}

/// `export --redact`: the evidence bundle (`partner_listener::evidence`).
pub async fn run(args: ExportArgs) -> Result<()> {
    let out = out_of(&args)?;
    let selection = selection_of(&args)?;
    let mask_body_fields = args
        .mask_fields
        .iter()
        .map(|path| FieldPath::parse(path))
        .collect::<partner_listener::Result<Vec<_>>>()?;
    let store = crate::commands::store_args::open_reader(store_path(args.db.clone())?)?;
    let evidence = evidence::select(&store, &selection)?;

    let given = MemoryKeys::new();
    for assignment in &args.keys {
        let (subscription, key) = assignment.read()?;
        given.insert(subscription, key);
    }
    let mut other_secrets = secrets_from_env();
    let keychain = if args.keychain {
        let store: Arc<dyn partner_client::SecretStore> = Arc::new(
            partner_client::KeyringStore::new(partner_client::KEYCHAIN_SERVICE),
        );
        let keys = KeychainKeys::new(
            store.clone(),
            partner_listener::keys::DEFAULT_PREVIOUS_KEY_GRACE,
        );
        let subscriptions: BTreeSet<&str> = evidence
            .captures
            .iter()
            .filter_map(|c| c.subscription_id.as_deref())
            .collect();
        if let Err(error) = keys.load(subscriptions) {
            eprintln!("partner: warning: the keychain could not be read ({error}); no diagnosis for its keys");
        }
        other_secrets.extend(client_secret_from_keychain(store.as_ref()));
        Some(keys)
    } else {
        None
    };
    let has_keys = !args.keys.is_empty() || keychain.is_some();
    let keys = ListenKeys { given, keychain };

    let deliveries = match &args.deliveries_from {
        Some(url) => {
            let control = crate::commands::trigger::sandbox_control(url)?;
            let event_ids: BTreeSet<&str> = evidence
                .captures
                .iter()
                .filter_map(|c| c.fields.event_id.as_deref())
                .collect();
            let mut records = Vec::new();
            for event_id in event_ids {
                records.extend(control.deliveries(Some(event_id)).await?);
            }
            Some(records)
        }
        None => None,
    };

    let mut options = EvidenceOptions::new(chrono::Utc::now());
    options.mask_body_fields = mask_body_fields;
    options.deliveries = deliveries;
    options.keys = has_keys.then_some(&keys as &dyn KeySource);
    options.other_secrets = other_secrets;
    let bundle = evidence::build(&evidence, &options)?;
    let (har_path, summary_path) = bundle.write(&out)?;
    said(
        evidence.captures.len(),
        &har_path,
        &summary_path,
        &bundle.report,
    );
    Ok(())
}

/// Secrets the environment holds for other commands: searched for and masked in evidence.
fn secrets_from_env() -> Vec<Secret> {
    [
        crate::commands::connect::SECRET_ENV,
        crate::commands::trigger::ADMIN_TOKEN_ENV,
    ]
    .into_iter()
    .filter_map(|name| std::env::var(name).ok())
    .filter(|value| !value.is_empty())
    .map(Secret::new)
    .collect()
}

/// The keychain's client secret of `PARTNER_CLIENT_ID` at `PARTNER_BASE_URL` (or the default
/// service), when both are known and it is there.
fn client_secret_from_keychain(store: &dyn partner_client::SecretStore) -> Option<Secret> {
    let client_id = std::env::var("PARTNER_CLIENT_ID").ok()?;
    let base_url = std::env::var("PARTNER_BASE_URL")
        .unwrap_or_else(|_| partner_client::DEFAULT_BASE_URL.to_string());
    let base_url = partner_client::parse_base_url(&base_url).ok()?;
    partner_client::client_secret(store, &base_url, &client_id)
        .ok()
        .flatten()
}
