//! `partner products list|get|create|subscribe|rotate-key`.
//!
//! Signing keys of new subscriptions and rotated keys are generated (or read from standard
//! input with `--key-stdin`) and go to the OS keychain, where the listener finds them; they are
//! never printed.

use super::connect::{secret_from_stdin, ConnectionArgs};
use super::listing::{run_list, ListArgs};
use super::render::{print_one, OutputFormat};
use crate::error::{CliError, Result};
use clap::{Args as ClapArgs, Subcommand};
use partner_api::{
    signing_key, EventType, NewProduct, Product, ResourceType, WebhookSubscriptionInput,
};
use partner_client::{KeyringStore, NewSubscription, SecretSlot, SecretStore};
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
    /// List products (sortable by listingName, name, status, created, updated).
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
        subscription: String,
        /// Read the new key from standard input instead of generating one.
        #[arg(long)]
        key_stdin: bool,
        #[arg(long, value_enum, default_value_t = OutputFormat::Table)]
        output: OutputFormat,
    },
}

fn parse_webhook(raw: &str) -> std::result::Result<(ResourceType, String), String> {
    let (resource, url) = raw
        .split_once('=')
        .ok_or("expected RESOURCE=URL, e.g. transaction=https://example.test/hook")?;
    let resource = match resource.trim() {
        "transaction" => ResourceType::Transaction,
        "event" => ResourceType::TransactionEvent,
        other => {
            return Err(format!(
                "unknown resource `{other}`; use transaction or event"
            ))
        }
    };
    Ok((resource, url.trim().to_string()))
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

/// Fails early when the keychain cannot hold a key, before the service is changed.
fn keychain_ready(store: &KeyringStore) -> Result<()> {
    store
        .get(&SecretSlot::SigningKey {
            subscription_id: "partner-cli-probe".into(),
        })
        .map(|_| ())
        .map_err(|e| {
            CliError::Usage(format!(
                "signing keys go to the keychain, which is not available: {e}"
            ))
        })
}

pub async fn run(args: Args) -> Result<()> {
    let client = args.connection.client()?;
    match args.command {
        ProductsCommand::List(list) => run_list::<Product>(&client, &list).await,
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
                .rotate_signing_key(&store, &product, &subscription, key)
                .await?;
            print_one(output, &rotation)
        }
    }
}
