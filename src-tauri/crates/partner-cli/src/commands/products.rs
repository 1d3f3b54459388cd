//! `partner products list|get|create|subscribe|rotate-key` and
//! `partner products subscriptions list|update|delete`.
//!
//! Signing keys of new subscriptions and rotated keys are generated (or read from standard
//! input with `--key-stdin`) and go to the OS keychain, where the listener finds them; they are
//! never printed. `subscriptions update` keeps the key; `subscriptions delete` removes it from
//! the keychain once the service has deleted the subscription.
//!
//! Names on the command line: events are `partner-api`'s own (`EventType::parse`); resources
//! take the short names of [`RESOURCE_NAMES`] (or the full URN), in one table for every flag.
//!
//! With a team workspace (`partner workspace login`, or `PARTNER_WORKSPACE`), `list`, `get`,
//! `subscribe`, `rotate-key` and `subscriptions list|update|delete` act through it
//! ([`through_workspace`]): its servers call the service with the team's connection, generate the
//! key and keep it sealed (moved with a changed subscription, forgotten with a deleted one); the
//! key is never printed and never in this machine's keychain, and a role's refusal exits 1
//! naming the role. `create` stays this machine's.

use super::connect::{secret_from_stdin, ConnectionArgs};
use super::listing::{run_list, ListArgs};
use super::render::{events_cell, print_one, ListWriter, OutputFormat, Row};
use crate::error::Result;
use clap::{Args as ClapArgs, Subcommand};
use partner_api::read::{self, SubscriptionView};
use partner_api::{signing_key, EventType, NewProduct, ResourceType, WebhookSubscriptionInput};
use partner_client::{
    KeyringStore, NewSubscription, SecretStore, SubscriptionChange, SubscriptionRef,
};
use serde::Serialize;
use std::sync::Arc;

#[derive(Debug, ClapArgs)]
pub struct Args {
    #[command(flatten)]
    pub connection: ConnectionArgs,
    #[command(subcommand)]
    pub command: ProductsCommand,
}

#[derive(Debug, Subcommand)]
pub enum ProductsCommand {
    /// List products (the sandbox sorts by listingName, name, status, created, updated; another
    /// service by the keys it takes, which --sort sends as given).
    List(ListArgs),
    /// Show one product.
    Get {
        id: String,
        #[arg(long, value_enum, default_value_t = OutputFormat::Table)]
        output: OutputFormat,
    },
    /// Create a product; each --webhook gets a generated signing key kept in the keychain.
    Create {
        #[arg(long)]
        name: String,
        #[arg(long)]
        listing_name: String,
        #[arg(long = "request-type", default_value = "NEW_REQUEST")]
        request_types: Vec<String>,
        /// A subscription as RESOURCE=URL, RESOURCE being `transaction` or `event`
        /// (events created and updated). Repeatable.
        #[arg(long = "webhook", value_name = "RESOURCE=URL", value_parser = parse_webhook)]
        webhooks: Vec<(ResourceType, String)>,
        #[arg(long, value_enum, default_value_t = OutputFormat::Table)]
        output: OutputFormat,
    },
    /// Add a subscription to a product; its signing key (generated unless --key-stdin) goes to
    /// the keychain first, where `partner listen --keychain` finds it.
    Subscribe {
        /// The product's id.
        product: String,
        /// Where notifications go and about what: RESOURCE=URL, RESOURCE being `transaction`
        /// or `event`.
        #[arg(long = "webhook", value_name = "RESOURCE=URL", value_parser = parse_webhook)]
        webhook: (ResourceType, String),
        /// An event to be notified of: `created` or `updated` (repeatable; default both).
        #[arg(long = "event", value_name = "EVENT", value_parser = parse_event)]
        events: Vec<EventType>,
        /// Read the signing key from standard input instead of generating one.
        #[arg(long)]
        key_stdin: bool,
        #[arg(long, value_enum, default_value_t = OutputFormat::Table)]
        output: OutputFormat,
    },
    /// Replace a subscription's signing key (generated unless --key-stdin); the old key stays
    /// in the keychain as the previous one.
    RotateKey {
        product: String,
        /// The subscription's id, or RESOURCE=URL for a service that shows no subscription ids.
        subscription: String,
        /// Read the new key from standard input instead of generating one.
        #[arg(long)]
        key_stdin: bool,
        #[arg(long, value_enum, default_value_t = OutputFormat::Table)]
        output: OutputFormat,
    },
    /// List, change or delete a product's subscriptions.
    Subscriptions {
        #[command(subcommand)]
        command: SubscriptionsCommand,
    },
}

#[derive(Debug, Subcommand)]
pub enum SubscriptionsCommand {
    /// List a product's subscriptions (id, url, resource, events).
    List {
        product: String,
        #[arg(long, value_enum, default_value_t = OutputFormat::Table)]
        output: OutputFormat,
    },
    /// Change a subscription's URL, events or resource; its signing key stays as it is.
    Update {
        product: String,
        /// The subscription's id, or RESOURCE=URL for a service that shows no subscription ids
        /// (a new URL or resource then moves its signing key in the keychain with it).
        subscription: String,
        /// The new callback URL.
        #[arg(long)]
        url: Option<String>,
        /// The events to be notified of: `created` or `updated` (repeatable; replaces the list).
        #[arg(long = "event", value_name = "EVENT", value_parser = parse_event)]
        events: Vec<EventType>,
        /// The new resource: `transaction` or `event`.
        #[arg(long, value_name = "RESOURCE", value_parser = parse_resource)]
        resource: Option<ResourceType>,
        #[arg(long, value_enum, default_value_t = OutputFormat::Table)]
        output: OutputFormat,
    },
    /// Delete a subscription; its signing keys are then removed from the keychain.
    Delete {
        product: String,
        /// The subscription's id, or RESOURCE=URL for a service that shows no subscription ids.
        subscription: String,
        #[arg(long, value_enum, default_value_t = OutputFormat::Table)]
        output: OutputFormat,
    },
}

/// The command line's short names of the resources, for every flag that takes one.
pub const RESOURCE_NAMES: [(&str, ResourceType); 2] = [
    ("transaction", ResourceType::Transaction),
    ("event", ResourceType::TransactionEvent),
];

/// A resource by its short name or its URN.
fn parse_resource(raw: &str) -> std::result::Result<ResourceType, String> {
    let raw = raw.trim();
    RESOURCE_NAMES
        .iter()
        .find(|(name, _)| *name == raw)
        .map(|(_, resource)| *resource)
        .or_else(|| ResourceType::parse(raw))
        .ok_or_else(|| {
            let names: Vec<&str> = RESOURCE_NAMES.iter().map(|(name, _)| *name).collect();
            format!("unknown resource `{raw}`; use {}", names.join(" or "))
        })
}

fn parse_webhook(raw: &str) -> std::result::Result<(ResourceType, String), String> {
    let (resource, url) = raw
        .split_once('=')
        .ok_or("expected RESOURCE=URL, e.g. transaction=https://example.test/hook")?;
    Ok((parse_resource(resource)?, url.trim().to_string()))
}

fn parse_event(raw: &str) -> std::result::Result<EventType, String> {
    EventType::parse(raw.trim()).ok_or_else(|| {
        let names: Vec<&str> = EventType::ALL.iter().map(|e| e.as_str()).collect();
        format!("unknown event `{}`; use {}", raw.trim(), names.join(" or "))
    })
}

/// What `subscribe` added (the key itself stays in the keychain and is never printed).
#[derive(Debug, Serialize)]
#[serde(rename_all = "camelCase")]
pub struct AddedSubscription {
    pub product: String,
    pub subscription_id: String,
    pub url: String,
    pub resource: ResourceType,
    pub events: Vec<EventType>,
    pub generated: bool,
}

// Its table row is here, beside it: `render` knows the API's types, and a command's own
// output types stay in the command (render needing this module back made a circle).
impl Row for AddedSubscription {
    const HEADERS: &'static [&'static str] = &[
        "product",
        "subscription",
        "url",
        "resource",
        "events",
        "generated",
    ];
    fn cells(&self) -> Vec<String> {
        vec![
            self.product.clone(),
            self.subscription_id.clone(),
            self.url.clone(),
            self.resource.to_string(),
            events_cell(&self.events),
            self.generated.to_string(),
        ]
    }
}

/// What `subscriptions delete` did.
#[derive(Debug, Serialize)]
#[serde(rename_all = "camelCase")]
pub struct DeletedSubscription {
    pub product: String,
    pub subscription_id: String,
    /// The product's subscriptions left.
    pub remaining: usize,
    /// Its signing keys are out of the keychain (a failure to remove them is an error instead).
    pub keys_removed: bool,
}

impl Row for DeletedSubscription {
    const HEADERS: &'static [&'static str] =
        &["product", "deletedSubscription", "remaining", "keysRemoved"];
    fn cells(&self) -> Vec<String> {
        vec![
            self.product.clone(),
            self.subscription_id.clone(),
            self.remaining.to_string(),
            self.keys_removed.to_string(),
        ]
    }
}

/// Fails early when the keychain cannot keep a key, before the service is changed.
fn keychain_ready(store: &KeyringStore) -> Result<()> {
    super::keychain::ready(store, "signing keys")
}

pub async fn run(args: Args) -> Result<()> {
    if matches!(
        args.command,
        ProductsCommand::List(_)
            | ProductsCommand::Get { .. }
            | ProductsCommand::Subscribe { .. }
            | ProductsCommand::RotateKey { .. }
            | ProductsCommand::Subscriptions { .. }
    ) {
        if let Some(workspace) = super::workspace::Workspace::from_env()? {
            return through_workspace(&workspace, args.command).await;
        }
    }
    let client = args.connection.client()?;
    match args.command {
        ProductsCommand::List(list) => run_list::<read::ProductView>(&client, &list).await,
        ProductsCommand::Get { id, output } => print_one(output, &client.get_product(&id).await?),
        ProductsCommand::Create {
            name,
            listing_name,
            request_types,
            webhooks,
            output,
        } => {
            let store = KeyringStore::default();
            if !webhooks.is_empty() {
                keychain_ready(&store)?;
            }
            let product = NewProduct {
                name,
                listing_name,
                request_types,
                webhooks: webhooks
                    .into_iter()
                    .map(|(resource, url)| WebhookSubscriptionInput {
                        subscription_id: None,
                        url: Some(url),
                        events: Some(EventType::ALL.to_vec()),
                        resource: Some(resource),
                        signing_key: Some(signing_key::generate()),
                    })
                    .collect(),
                ..NewProduct::default()
            };
            let created = client.create_product_storing_keys(&store, &product).await?;
            print_one(output, &created)
        }
        ProductsCommand::Subscribe {
            product,
            webhook: (resource, url),
            events,
            key_stdin,
            output,
        } => {
            let keychain = KeyringStore::default();
            keychain_ready(&keychain)?;
            let store: Arc<dyn SecretStore> = Arc::new(keychain);
            let key = if key_stdin {
                Some(secret_from_stdin("signing key")?)
            } else {
                None
            };
            let events = if events.is_empty() {
                EventType::ALL.to_vec()
            } else {
                events
            };
            let subscription = NewSubscription {
                url,
                events,
                resource,
            };
            let subscribed = client
                .add_subscription(&store, &product, &subscription, key)
                .await?;
            print_one(
                output,
                &AddedSubscription {
                    product: subscribed.product.id.clone(),
                    subscription_id: subscribed.subscription_id.clone(),
                    url: subscription.url,
                    resource: subscription.resource,
                    events: subscription.events,
                    generated: subscribed.generated,
                },
            )
        }
        ProductsCommand::RotateKey {
            product,
            subscription,
            key_stdin,
            output,
        } => {
            let store = KeyringStore::default();
            keychain_ready(&store)?;
            let key = if key_stdin {
                Some(secret_from_stdin("signing key")?)
            } else {
                None
            };
            let rotation = client
                .rotate_signing_key(&store, &product, SubscriptionRef::parse(&subscription), key)
                .await?;
            print_one(output, &rotation)
        }
        ProductsCommand::Subscriptions { command } => run_subscriptions(&client, command).await,
    }
}

/// What `rotate-key` did through a workspace (the key stays on its servers).
#[derive(Debug, Serialize, serde::Deserialize)]
#[serde(rename_all = "camelCase")]
pub struct WorkspaceRotation {
    pub product: String,
    /// The id, or `url (resource)` where the service shows none.
    pub subscription: String,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub subscription_id: Option<String>,
}

impl Row for WorkspaceRotation {
    const HEADERS: &'static [&'static str] = &["product", "subscription", "generated"];
    fn cells(&self) -> Vec<String> {
        vec![
            self.product.clone(),
            self.subscription.clone(),
            "true".to_string(),
        ]
    }
}

/// A page of products as the workspace answers it.
#[derive(Debug, serde::Deserialize)]
struct ProductPage {
    items: Vec<partner_api::read::Document<read::ProductView>>,
    total: u64,
    start: u64,
}

/// What the workspace answers to a subscribe.
#[derive(Debug, serde::Deserialize)]
#[serde(rename_all = "camelCase")]
struct WorkspaceSubscribed {
    product: String,
    subscription: String,
}

/// `list`, `subscribe` and `rotate-key` through the team workspace (see the module's notes).
async fn through_workspace(
    workspace: &super::workspace::Workspace,
    command: ProductsCommand,
) -> Result<()> {
    let key_stdin_refused = || {
        crate::error::CliError::Usage(
            "with a team workspace its servers generate the signing key and keep it; \
             --key-stdin is for this machine's keychain (unset the workspace to use it)"
                .into(),
        )
    };
    match command {
        ProductsCommand::List(list) => {
            let mut writer =
                ListWriter::<partner_api::read::Document<read::ProductView>>::new(list.output)?;
            let limit = list.limit.unwrap_or(if list.all { 50 } else { 25 });
            let mut start = list.start;
            loop {
                let page: ProductPage = workspace
                    .get(
                        "/api/v1/products",
                        &[
                            ("start", start.to_string()),
                            ("limit", limit.to_string()),
                            ("sort", list.sort.clone()),
                        ],
                    )
                    .await?;
                for item in &page.items {
                    writer.item(item)?;
                }
                let next = page.start + page.items.len() as u64;
                if !list.all || page.items.is_empty() || next >= page.total {
                    let count = writer.finish()?;
                    if list.all {
                        eprintln!("{count} items");
                    } else if page.items.is_empty() {
                        eprintln!("no items at {} of {}", page.start, page.total);
                    } else {
                        eprintln!("items {}-{} of {}", page.start, next - 1, page.total);
                    }
                    return Ok(());
                }
                start = next;
            }
        }
        ProductsCommand::Subscribe {
            product,
            webhook: (resource, url),
            events,
            key_stdin,
            output,
        } => {
            if key_stdin {
                return Err(key_stdin_refused());
            }
            let events = if events.is_empty() {
                EventType::ALL.to_vec()
            } else {
                events
            };
            let subscribed: WorkspaceSubscribed = workspace
                .post(
                    &format!("/api/v1/products/{}/subscriptions", path_segment(&product)),
                    &serde_json::json!({"url": url, "resource": resource, "events": events}),
                )
                .await?;
            print_one(
                output,
                &AddedSubscription {
                    product: subscribed.product,
                    subscription_id: subscribed.subscription,
                    url,
                    resource,
                    events,
                    generated: true,
                },
            )
        }
        ProductsCommand::RotateKey {
            product,
            subscription,
            key_stdin,
            output,
        } => {
            if key_stdin {
                return Err(key_stdin_refused());
            }
            let rotated: WorkspaceRotation = workspace
                .post(
                    &format!(
                        "/api/v1/products/{}/subscriptions/rotate",
                        path_segment(&product)
                    ),
                    &serde_json::json!({"subscription": subscription}),
                )
                .await?;
            print_one(output, &rotated)
        }
        ProductsCommand::Get { id, output } => {
            let product: partner_api::read::Document<read::ProductView> = workspace
                .get(&format!("/api/v1/products/{}", path_segment(&id)), NO_QUERY)
                .await?;
            print_one(output, &product)
        }
        ProductsCommand::Subscriptions { command } => {
            subscriptions_through_workspace(workspace, command).await
        }
        // Not sent here: creating a product is this machine's connection's (`run`).
        ProductsCommand::Create { .. } => Err(crate::error::CliError::Usage(
            "partner products create acts on this machine's connection, not a workspace".into(),
        )),
    }
}

/// `subscriptions list|update|delete` through the team workspace: the keys the servers keep
/// follow the subscription (kept when it changes, forgotten when it is deleted).
async fn subscriptions_through_workspace(
    workspace: &super::workspace::Workspace,
    command: SubscriptionsCommand,
) -> Result<()> {
    match command {
        SubscriptionsCommand::List { product, output } => {
            let product: partner_api::read::Document<read::ProductView> = workspace
                .get(
                    &format!("/api/v1/products/{}", path_segment(&product)),
                    NO_QUERY,
                )
                .await?;
            let mut writer = ListWriter::<SubscriptionView>::new(output)?;
            for subscription in &product.webhooks {
                writer.item(subscription)?;
            }
            writer.finish().map(|_| ())
        }
        SubscriptionsCommand::Update {
            product,
            subscription,
            url,
            events,
            resource,
            output,
        } => {
            let updated: SubscriptionView = workspace
                .post(
                    &format!(
                        "/api/v1/products/{}/subscriptions/update",
                        path_segment(&product)
                    ),
                    &serde_json::json!({
                        "subscription": subscription,
                        "url": url,
                        "events": (!events.is_empty()).then_some(events),
                        "resource": resource,
                    }),
                )
                .await?;
            print_one(output, &updated)
        }
        SubscriptionsCommand::Delete {
            product,
            subscription,
            output,
        } => {
            let patched: partner_api::read::Document<read::ProductView> = workspace
                .post(
                    &format!(
                        "/api/v1/products/{}/subscriptions/delete",
                        path_segment(&product)
                    ),
                    &serde_json::json!({"subscription": subscription}),
                )
                .await?;
            print_one(
                output,
                &DeletedSubscription {
                    product: patched.id.clone(),
                    subscription_id: subscription,
                    remaining: patched.webhooks.len(),
                    keys_removed: true,
                },
            )
        }
    }
}

/// A call without a query string.
const NO_QUERY: &[(&str, &str)] = &[];

/// A product id as one path segment (percent-encoded).
fn path_segment(id: &str) -> String {
    id.trim()
        .bytes()
        .map(|b| {
            if b.is_ascii_alphanumeric() || b"-._~".contains(&b) {
                char::from(b).to_string()
            } else {
                format!("%{b:02X}")
            }
        })
        .collect()
}

async fn run_subscriptions(
    client: &partner_client::PartnerClient,
    command: SubscriptionsCommand,
) -> Result<()> {
    match command {
        SubscriptionsCommand::List { product, output } => {
            let product = client.get_product(&product).await?;
            let mut writer = ListWriter::<SubscriptionView>::new(output)?;
            for subscription in &product.webhooks {
                writer.item(subscription)?;
            }
            writer.finish().map(|_| ())
        }
        SubscriptionsCommand::Update {
            product,
            subscription,
            url,
            events,
            resource,
            output,
        } => {
            let change = SubscriptionChange {
                url,
                events: (!events.is_empty()).then_some(events),
                resource,
            };
            let subscription = SubscriptionRef::parse(&subscription);
            let updated = if matches!(subscription, SubscriptionRef::Element { .. })
                && (change.url.is_some() || change.resource.is_some())
            {
                let keychain = KeyringStore::default();
                keychain_ready(&keychain)?;
                let store: Arc<dyn SecretStore> = Arc::new(keychain);
                client
                    .update_subscription_keeping_key(&store, &product, subscription, &change)
                    .await?
            } else {
                client
                    .update_subscription(&product, subscription, &change)
                    .await?
            };
            print_one(output, &updated)
        }
        SubscriptionsCommand::Delete {
            product,
            subscription,
            output,
        } => {
            let keychain = KeyringStore::default();
            keychain_ready(&keychain)?;
            let store: Arc<dyn SecretStore> = Arc::new(keychain);
            let patched = client
                .delete_subscription(&store, &product, SubscriptionRef::parse(&subscription))
                .await?;
            print_one(
                output,
                &DeletedSubscription {
                    product: patched.id.clone(),
                    subscription_id: subscription,
                    remaining: patched.webhooks.len(),
                    keys_removed: true,
                },
            )
        }
    }
}
