//! `partner listen export`: the captures of a store (all, or those of `--verdict`) written out
//! as JSON Lines (lossless, what `import` reads) or HAR 1.2, to a file or stdout. Reads the
//! store only, so it works beside a running listener. With `--redact` it writes an evidence
//! bundle instead (`evidence.rs`, which takes the same options). With a team workspace in
//! effect (`PARTNER_WORKSPACE`, or `partner workspace login`), its captures are exported,
//! read page by page, in the same formats.

use crate::commands::store_args::{store_path, FilterArgs};
use crate::commands::workspace::Workspace;
use crate::error::{CliError, Result};
use clap::Args as ClapArgs;
use partner_listener::export::{export, ExportFormat, ExportWriter};
use partner_listener::{Capture, CaptureFilter};
use std::io::Write;
use std::path::PathBuf;

#[derive(Debug, ClapArgs)]
pub struct ExportArgs {
    /// The capture store to read (works beside a running listener; after a crash it first writes
    /// in what the listener acknowledged). Default: the
    /// console's data folder.
    #[arg(long, value_name = "FILE")]
    pub db: Option<PathBuf>,
    /// jsonl (lossless, importable) or har (HAR 1.2).
    #[arg(long, default_value = "jsonl")]
    pub format: String,
    /// Write here instead of stdout.
    #[arg(long, value_name = "FILE")]
    pub out: Option<PathBuf>,
    /// Only captures with this verdict (repeatable), e.g. valid, invalid-signature.
    #[arg(long, conflicts_with = "redact")]
    pub verdict: Vec<String>,
    /// Write a redacted evidence bundle for a support ticket instead: NAME.har (HAR 1.2) and
    /// NAME.md (verdicts, the signature debugger's diagnosis, attempts and timing, the
    /// forward's answer) for --out NAME. Authorization and cookie headers are masked, and no
    /// signing key, client secret or token is in it. Select with --id or --notification.
    #[arg(long)]
    pub redact: bool,
    /// With --redact: this capture (repeatable).
    #[arg(long = "id", value_name = "CAPTURE_ID", requires = "redact")]
    pub ids: Vec<i64>,
    /// With --redact: every attempt of the notification with this eventId.
    #[arg(
        long,
        value_name = "EVENT_ID",
        requires = "redact",
        conflicts_with = "ids"
    )]
    pub notification: Option<String>,
    /// With --notification: only that subscription's (when the eventId arrived for several).
    #[arg(long, value_name = "SUBSCRIPTION_ID", requires = "notification")]
    pub subscription: Option<String>,
    /// With --notification: only that resource type's (a URN).
    #[arg(long, value_name = "URN", requires = "notification")]
    pub resource_type: Option<String>,
    /// With --redact: mask this body field, as a JSON pointer (/borrower/ssn) or a dotted path
    /// (borrower.ssn) (repeatable).
    #[arg(long = "mask-field", value_name = "PATH", requires = "redact")]
    pub mask_fields: Vec<String>,
    /// With --redact: a subscription's signing key as SUBSCRIPTION_ID=KEY, for the signature
    /// debugger's diagnosis (repeatable). The key itself never goes into the bundle.
    #[arg(long = "key", value_name = "SUBSCRIPTION_ID=KEY", requires = "redact")]
    pub keys: Vec<crate::commands::store_args::KeyArg>,
    /// With --redact: also the signing keys (and the client secret of PARTNER_CLIENT_ID) the
    /// Partner Console client keeps in the keychain.
    #[arg(long, requires = "redact")]
    pub keychain: bool,
    /// With --redact: the sandbox the notifications came from (its base URL); its delivery
    /// record of each eventId goes into the summary. The admin token, if the sandbox has one,
    /// comes from PARTNER_SANDBOX_ADMIN_TOKEN.
    #[arg(long, value_name = "URL", requires = "redact")]
    pub deliveries_from: Option<String>,
}

pub async fn run(args: ExportArgs) -> Result<()> {
    let format = ExportFormat::parse(&args.format)?;
    let filter = FilterArgs::verdicts(&args.verdict).filter()?;
    if let Some(workspace) = Workspace::from_env()? {
        return export_workspace(&workspace, &args, filter, format).await;
    }
    let store = crate::commands::store_args::open_reader(store_path(args.db)?)?;
    let written = match &args.out {
        Some(path) => {
            let file = std::fs::File::create(path).map_err(CliError::Output)?;
            let mut out = std::io::BufWriter::new(file);
            let written = export(&store, &filter, format, &mut out)?;
            out.flush().map_err(CliError::Output)?;
            written
        }
        None => {
            let mut out = std::io::BufWriter::new(std::io::stdout().lock());
            let written = export(&store, &filter, format, &mut out)?;
            out.flush().map_err(CliError::Output)?;
            written
        }
    };
    eprintln!("partner: exported {written} captures");
    Ok(())
}

/// The export of a team workspace's captures (`PARTNER_WORKSPACE`, or the saved login): read
/// oldest first, a page at a time by the last id read, and written as the local export writes
/// its own.
async fn export_workspace(
    workspace: &Workspace,
    args: &ExportArgs,
    filter: CaptureFilter,
    format: ExportFormat,
) -> Result<()> {
    let mut sink: Box<dyn Write> = match &args.out {
        Some(path) => Box::new(std::io::BufWriter::new(
            std::fs::File::create(path).map_err(CliError::Output)?,
        )),
        None => Box::new(std::io::BufWriter::new(std::io::stdout().lock())),
    };
    let mut writer = ExportWriter::start(format, &mut *sink)?;
    let mut after = 0;
    loop {
        let page: Vec<Capture> = workspace.captures_walk(&filter, after, 500).await?;
        let Some(last) = page.last() else { break };
        after = last.id;
        for capture in &page {
            writer.write(capture)?;
        }
    }
    let written = writer.finish()?;
    eprintln!(
        "partner: exported {written} captures from the workspace {}",
        workspace.describe()
    );
    Ok(())
}
