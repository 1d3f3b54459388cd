//! What the `partner listen` subcommands that read a capture store share: which store
//! (`--db`, else the console's data folder) and which of its captures (the inspector's filters
//! as options), and how it is opened (to read, or as its writer). Its own module so the `listen`
//! subcommands use it without needing each other.

use crate::error::{CliError, Result};
use clap::Args as ClapArgs;
use partner_listener::{CaptureFilter, Retention, Store, StoreOptions, Verdict};
use std::path::PathBuf;

/// Which captures a subcommand covers; no option: every capture.
#[derive(Debug, Clone, Default, ClapArgs)]
pub struct FilterArgs {
    /// Only captures with this verdict (repeatable), e.g. valid, invalid-signature.
    #[arg(long)]
    pub verdict: Vec<String>,
    /// Only notifications of this event type (e.g. created).
    #[arg(long, value_name = "TYPE")]
    pub event_type: Option<String>,
    /// Only notifications of this resource type (a URN).
    #[arg(long, value_name = "URN")]
    pub resource_type: Option<String>,
    /// Only captures for this subscription id.
    #[arg(long, value_name = "SUBSCRIPTION_ID")]
    pub subscription: Option<String>,
    /// Received at or after this time (RFC 3339, e.g. 2024-05-01T10:00:00Z).
    #[arg(long, value_name = "TIME")]
    pub since: Option<String>,
    /// Received before this time (RFC 3339).
    #[arg(long, value_name = "TIME")]
    pub until: Option<String>,
    /// Words that must all be in the body or a header value (the last also as a prefix; a
    /// "quoted phrase" as written), or a substring of an id (eventId, resourceId, instanceId,
    /// subscription id, resourceRef; 3 characters or more), or a capture's id. Case-insensitive.
    #[arg(long, value_name = "TEXT")]
    pub search: Option<String>,
}

impl FilterArgs {
    /// Only `--verdict` values (the subcommands that have no other filter option).
    pub(crate) fn verdicts(verdicts: &[String]) -> Self {
        Self {
            verdict: verdicts.to_vec(),
            ..Self::default()
        }
    }

    /// The store's filter for these options; a bad verdict or time is refused with words.
    pub(crate) fn filter(&self) -> Result<CaptureFilter> {
        let verdicts = self
            .verdict
            .iter()
            .map(|v| {
                Verdict::parse(v).ok_or_else(|| {
                    invalid(format!(
                        "unknown verdict {v:?}: use one of {}",
                        Verdict::ALL.map(Verdict::as_str).join(", ")
                    ))
                })
            })
            .collect::<Result<Vec<_>>>()?;
        let time = |option: &str, value: &Option<String>| {
            value
                .as_deref()
                .map(|text| {
                    chrono::DateTime::parse_from_rfc3339(text)
                        .map(|t| t.with_timezone(&chrono::Utc))
                        .map_err(|e| {
                            invalid(format!(
                                "--{option} {text:?} is not an RFC 3339 time (e.g. \
                                 2024-05-01T10:00:00Z): {e}"
                            ))
                        })
                })
                .transpose()
        };
        Ok(CaptureFilter {
            verdicts,
            event_type: self.event_type.clone(),
            resource_type: self.resource_type.clone(),
            subscription_id: self.subscription.clone(),
            since: time("since", &self.since)?,
            until: time("until", &self.until)?,
            text: self.search.clone().filter(|t| !t.trim().is_empty()),
            ..CaptureFilter::default()
        })
    }

    /// What the filter selects, in words, for `clear`'s answer.
    pub(crate) fn describe(&self) -> String {
        let mut parts = Vec::new();
        if !self.verdict.is_empty() {
            parts.push(format!("with verdict {}", self.verdict.join(" or ")));
        }
        for (name, value) in [
            ("event type", &self.event_type),
            ("resource type", &self.resource_type),
            ("subscription", &self.subscription),
            ("received since", &self.since),
            ("received before", &self.until),
            ("matching", &self.search),
        ] {
            if let Some(value) = value {
                parts.push(format!("{name} {value:?}"));
            }
        }
        if parts.is_empty() {
            "captures".into()
        } else {
            format!("captures {}", parts.join(", "))
        }
    }
}

/// The capture store the desktop app uses too: `partner_local::paths::capture_store()`
/// (`$PARTNER_DATA_DIR`, else `$XDG_DATA_HOME/partner-console`, else under `~/.local/share`).
pub(crate) fn default_db() -> Result<PathBuf> {
    let path = partner_local::paths::capture_store()
        .map_err(|e| invalid(format!("{e} (or give --db)")))?;
    if let Some(folder) = path.parent() {
        partner_local::paths::create_private_dir(folder).map_err(|e| invalid(e.to_string()))?;
    }
    Ok(path)
}

pub(crate) fn invalid(message: impl Into<String>) -> CliError {
    CliError::Listener(partner_listener::Error::InvalidInput(message.into()))
}

/// `--db`, else the default store.
pub(crate) fn store_path(db: Option<PathBuf>) -> Result<PathBuf> {
    match db {
        Some(db) => Ok(db),
        None => default_db(),
    }
}

/// The data key the capture store at `db` is encrypted with at rest
/// (`partner_local::data_key::resolve`, for the store's folder: the app's data folder for the
/// default store, so the app and the CLI find the same key). The OS's secret store is probed
/// only when no variable, and no key file in that folder, gives the key.
pub(crate) fn store_key(db: &std::path::Path) -> Result<partner_local::data_key::ResolvedKey> {
    use partner_local::data_key::{self, KeySources};
    let folder = match db.parent() {
        Some(folder) if !folder.as_os_str().is_empty() => folder,
        _ => std::path::Path::new("."),
    };
    let sources = KeySources::from_process();
    let keyring = partner_client::KeyringStore::new(partner_client::KEYCHAIN_SERVICE);
    let secrets: Option<&dyn partner_client::SecretStore> =
        if data_key::needs_secret_store(&sources, folder)
            && partner_client::probe_secret_store(&keyring).is_ok()
        {
            Some(&keyring)
        } else {
            None
        };
    // An encrypted store whose key no variable or file gives has it in the secret store: with
    // none here (a session without D-Bus, say), a new key file would not open it and would
    // stand in the secret store's place for the app too.
    if secrets.is_none()
        && data_key::needs_secret_store(&sources, folder)
        && partner_listener::encrypted_at_rest(db)
    {
        return Err(invalid(format!(
            "the capture store {} is encrypted, and no key file or variable here gives its key \
             (the desktop keeps it in the OS's secret store, which this session cannot reach): \
             run where it can, or give the key with PARTNER_DATA_KEY_FILE or PARTNER_DATA_KEY",
            db.display()
        )));
    }
    data_key::resolve_once(&sources, folder, secrets)
        .map_err(|e| invalid(format!("the capture store's data key: {e}")))
}

/// The capture store's [`store_key`], as the store takes it; a key made now is said on stderr.
pub(crate) fn store_key_said(db: &std::path::Path) -> Result<partner_listener::StoreKey> {
    let resolved = store_key(db)?;
    if resolved.new {
        eprintln!(
            "partner: made {} for the capture store's data at rest",
            resolved.describe()
        );
    }
    Ok(resolved.store_key())
}

/// Opens the capture store at `db` to read, with its data key ([`store_key`]); no key is looked
/// for (or made) when there is no store.
pub(crate) fn open_reader(db: PathBuf) -> Result<partner_listener::StoreReader> {
    if !db.exists() {
        return Err(partner_listener::Error::NoStore(db).into());
    }
    let key = store_key_said(&db)?;
    Ok(partner_listener::StoreReader::open_keyed(&db, Some(key))?)
}

/// A `--key SUBSCRIPTION_ID=KEY` as given. Kept as text until [`KeyArg::read`]: clap quotes a
/// value its own parser refuses, and a mistyped key must not be echoed; and printed by `Debug`
/// with the key masked, since the argument structs that hold it derive `Debug`.
#[derive(Clone)]
pub struct KeyArg(String);

impl std::str::FromStr for KeyArg {
    type Err = std::convert::Infallible;
    fn from_str(text: &str) -> std::result::Result<Self, Self::Err> {
        Ok(Self(text.to_owned()))
    }
}

impl std::fmt::Debug for KeyArg {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        match self.0.split_once('=') {
            Some((subscription, _)) => write!(f, "KeyArg({subscription:?}=[redacted])"),
            None => f.write_str("KeyArg([redacted])"),
        }
    }
}

impl KeyArg {
    /// The subscription and its key (`partner_listener::keys::MemoryKeys::parse_assignment`:
    /// its error never quotes the key).
    pub fn read(&self) -> Result<(String, partner_api::Secret)> {
        Ok(partner_listener::keys::MemoryKeys::parse_assignment(
            &self.0,
        )?)
    }
}

/// Each subscription's current signing key for sending notifications again: `--key SUB=KEY`
/// assignments first, then (for the subscriptions of `wanted` they leave out, when
/// `keychain`) the keychain entries the app and `partner products` keep. A keychain that
/// cannot be read is a warning ending in `without_keychain`, not an error: the given keys
/// still serve.
pub fn signing_keys<'a>(
    given: &[KeyArg],
    wanted: impl IntoIterator<Item = &'a str>,
    keychain: bool,
    without_keychain: &str,
) -> Result<partner_listener::keys::MemoryKeys> {
    use partner_listener::keys::{KeySource, MemoryKeys};
    let keys = MemoryKeys::new();
    for assignment in given {
        let (subscription, key) = assignment.read()?;
        keys.insert(subscription, key);
    }
    let wanted: std::collections::BTreeSet<&str> = wanted
        .into_iter()
        .filter(|id| keys.keys(id).is_none())
        .collect();
    if !keychain || wanted.is_empty() {
        return Ok(keys);
    }
    let store: std::sync::Arc<dyn partner_client::SecretStore> = std::sync::Arc::new(
        partner_client::KeyringStore::new(partner_client::KEYCHAIN_SERVICE),
    );
    let found =
        partner_local::KeychainKeys::new(store, partner_listener::keys::DEFAULT_PREVIOUS_KEY_GRACE);
    if let Err(error) = found.load(wanted.iter().copied()) {
        eprintln!("partner: warning: the keychain could not be read ({error}); {without_keychain}");
    }
    for id in wanted {
        if let Some(pair) = found.keys(id) {
            keys.insert(id, pair.current);
        }
    }
    Ok(keys)
}

/// The store as its writer (its lock taken under `holder`'s name, so a second writer is refused
/// naming it), keyed with the console's data key.
pub(crate) fn open_writer(db: &std::path::Path, holder: &'static str) -> Result<Store> {
    let key = store_key_said(db)?;
    Ok(Store::open_with(
        db,
        StoreOptions {
            retention: Retention::default(),
            holder,
            key: Some(key),
            ..StoreOptions::default()
        },
    )?)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_key_argument_prints_its_subscription_and_never_its_key() {
        let given: KeyArg = "sub-1=whsec-s3cr3t=x".parse().expect("any text");
        let shown = format!("{given:?}");
        assert_eq!(shown, r#"KeyArg("sub-1"=[redacted])"#);
        let no_subscription: KeyArg = "whsec-s3cr3t".parse().expect("any text");
        assert_eq!(format!("{no_subscription:?}"), "KeyArg([redacted])");
        let (subscription, key) = given.read().expect("read");
        assert_eq!(
            (subscription.as_str(), key.expose()),
            ("sub-1", "whsec-s3cr3t=x")
        );
        let refused = no_subscription.read().expect_err("no subscription");
        assert!(!refused.to_string().contains("s3cr3t"), "{refused}");
    }
}
