//! The sandbox's data: products, transactions and their events, held in memory.
//!
//! Every rule of a write lives here, free of HTTP, so the routes, the demo seeding and the
//! tests go through exactly the same code. A write that changes a transaction returns a
//! [`Change`] naming the events it created; the caller turns that into notifications, so the
//! table of "which change fires what" has one home (the crate's `//!` and `notify`).
//!
//! Transactions sit in one vector in creation order; each partner has the indexes of its own
//! and a version number that every change to one of its transactions bumps. The list
//! endpoint keeps sorted index vectors keyed by (partner, sort) and stamped with that version,
//! so a sort is computed once per data change, not once per request (see `SortCache`).

use crate::extract::{decode, printable};
use crate::tokens::Caller;
use chrono::{DateTime, Utc};
use partner_api::product::{self, READ_ONLY_ON_CREATE, READ_ONLY_ON_PATCH};
use partner_api::transaction::event_types;
use partner_api::{
    signing_key, ApiError, EntityRef, ErrorCode, EventDetails, EventType, NewEvent, NewProduct,
    NewTransaction, Party, PointOfContact, Product, ProductRef, ResourceType, Secret, SortSpec,
    Transaction, TransactionEvent, TransactionRequest, TransactionResponse, TransactionStatus,
    TransactionUpdate, WebhookSubscription, WebhookSubscriptionInput,
};
use rand::rngs::StdRng;
use rand::{RngCore, SeedableRng};
use serde_json::{json, Map, Value};
use std::collections::{HashMap, HashSet};
use std::sync::Arc;

/// The lender the sandbox plays.
pub const LENDER_CLIENT_ID: &str = "sandbox-lender";
pub const LENDER_USER: &str = "lender.officer";
/// Who custom events sent through the sandbox's lender side come from.
pub const LENDER_NAME: &str = "Sandbox Lender";
pub use partner_api::product::MAX_WEBHOOKS;
use partner_api::product::{CREDENTIAL_ID_MAX, INTEGRATION_TYPE_MAX};
use partner_api::transaction::{
    EVENT_COMMENTS_MAX, EVENT_TEXT_MAX, EVENT_TYPE_MAX, RESPONSE_TEXT_MAX, SYSTEM_EVENT_TYPE_PREFIX,
};

type ApiResult<T> = Result<T, ApiError>;

/// The fields of a product a merge patch may change (`NewProduct`'s, but `name`).
const EDITABLE_FIELDS: &[&str] = &[
    "listingName",
    "requestTypes",
    "interfaceUrl",
    "adminInterfaceUrl",
    "integrationType",
    "credentials",
    "tags",
    "extensionLimit",
    "webhooks",
];

#[derive(Debug, Clone)]
pub struct ProductRecord {
    pub product: Product,
    signing_keys: HashMap<String, Secret>,
}

impl ProductRecord {
    /// A product read back from a data file, with the signing key of each subscription.
    pub fn restored(product: Product, signing_keys: HashMap<String, Secret>) -> Self {
        Self {
            product,
            signing_keys,
        }
    }

    /// Subscription id → signing key (for the data file).
    pub fn signing_keys(&self) -> impl Iterator<Item = (&String, &Secret)> {
        self.signing_keys.iter()
    }

    /// Each subscription with its signing key, for the notifier.
    pub fn subscriptions(&self) -> impl Iterator<Item = (&WebhookSubscription, &Secret)> {
        self.product.webhooks.iter().filter_map(|s| {
            self.signing_keys
                .get(&s.subscription_id)
                .map(|key| (s, key))
        })
    }
}

#[derive(Debug, Clone)]
pub struct TransactionRecord {
    pub transaction: Transaction,
    /// `transaction` as JSON, written at every change: a list page is 50 of these joined,
    /// with no serialising on the read path.
    pub json: Box<[u8]>,
    pub events: Vec<TransactionEvent>,
}

fn to_json(transaction: &Transaction) -> ApiResult<Box<[u8]>> {
    serde_json::to_vec(transaction)
        .map(Vec::into_boxed_slice)
        .map_err(|_| ApiError::new(ErrorCode::Internal, "the transaction could not be stored"))
}

/// What a write to a transaction fired: the events it created, and whether (and with which
/// event) the transaction itself counts as created or updated.
#[derive(Debug, Clone)]
pub struct Change {
    pub transaction_id: String,
    pub product_id: String,
    /// `created`/`updated` of the transaction resource, with the event that stands for it.
    pub transaction_notice: Option<(EventType, String)>,
    /// Every new event, each one a `created` of the event resource.
    pub new_events: Vec<TransactionEvent>,
}

impl Change {
    /// The change that created `new_events` on a transaction; whether it counts as the
    /// transaction's `created` or `updated` is `partner_api::firing`'s rule.
    fn new(transaction_id: String, product_id: String, new_events: Vec<TransactionEvent>) -> Self {
        let transaction_notice = new_events.iter().find_map(|event| {
            partner_api::firing::transaction_notice(&event.event_type)
                .map(|notice| (notice, event.id.clone()))
        });
        Self {
            transaction_id,
            product_id,
            transaction_notice,
            new_events,
        }
    }
}

/// A partner's transactions in creation order, and the version of that listing.
#[derive(Debug, Clone, Default)]
pub struct PartnerListing {
    pub order: Vec<u32>,
    pub version: u64,
}

#[derive(Debug)]
pub struct Store {
    products: HashMap<String, ProductRecord>,
    partner_products: HashMap<String, Vec<String>>,
    transactions: Vec<TransactionRecord>,
    transaction_index: HashMap<String, u32>,
    partner_transactions: HashMap<String, PartnerListing>,
    ids: StdRng,
}

impl Default for Store {
    fn default() -> Self {
        Self::new()
    }
}

fn object_or_empty(value: Option<Value>, field: &str) -> ApiResult<Value> {
    match value {
        None => Ok(json!({})),
        Some(Value::Object(map)) => Ok(Value::Object(map)),
        Some(_) => Err(ApiError::invalid(format!("{field} must be a JSON object"))),
    }
}

fn check_len(field: &str, value: &str, max: usize, required: bool) -> ApiResult<()> {
    if required && value.trim().is_empty() {
        return Err(ApiError::invalid(format!("{field} is required")));
    }
    let length = value.chars().count();
    if length > max {
        return Err(ApiError::invalid(format!(
            "{field} may have at most {max} characters, got {length}"
        )));
    }
    Ok(())
}

/// An `http(s)://` address by the grammar the document states (`WEB_URL_PATTERN`).
fn check_web_url(field: &str, raw: &str) -> ApiResult<()> {
    product::check_web_address(raw, &["http", "https"]).map_err(|problem| {
        ApiError::invalid(format!(
            "{field} must be an http:// or https:// URL ({problem})"
        ))
    })
}

/// The rules of a product's own fields, on create and after a merge patch.
fn check_product_fields(p: &NewProduct) -> ApiResult<()> {
    product::check_name(&p.name).map_err(ApiError::invalid)?;
    product::check_listing_name(&p.listing_name).map_err(ApiError::invalid)?;
    product::check_request_types(&p.request_types).map_err(ApiError::invalid)?;
    if let Some(url) = &p.interface_url {
        check_web_url("interfaceUrl", url)?;
    }
    if let Some(url) = &p.admin_interface_url {
        check_web_url("adminInterfaceUrl", url)?;
    }
    if let Some(kind) = &p.integration_type {
        check_len("integrationType", kind, INTEGRATION_TYPE_MAX, true)?;
    }
    if p.extension_limit.is_some_and(|n| n < 0) {
        return Err(ApiError::invalid("extensionLimit may not be negative"));
    }
    let mut credential_ids = HashSet::new();
    for (i, credential) in p.credentials.iter().enumerate() {
        check_len(
            &format!("credentials[{i}].id"),
            &credential.id,
            CREDENTIAL_ID_MAX,
            true,
        )?;
        if !credential_ids.insert(credential.id.as_str()) {
            return Err(ApiError::invalid(format!(
                "credentials[{i}].id `{}` is used twice",
                printable(&credential.id)
            )));
        }
    }
    if p.webhooks.len() > MAX_WEBHOOKS {
        return Err(ApiError::invalid(format!(
            "a product may have at most {MAX_WEBHOOKS} webhook subscriptions"
        )));
    }
    Ok(())
}

/// Read-only fields present in a body, in the order of `read_only`.
fn read_only_present(body: &Map<String, Value>, read_only: &[&str]) -> Vec<String> {
    read_only
        .iter()
        .filter(|f| body.contains_key(**f))
        .map(|f| f.to_string())
        .collect()
}

impl Store {
    pub fn new() -> Self {
        Self {
            products: HashMap::new(),
            partner_products: HashMap::new(),
            transactions: Vec::new(),
            transaction_index: HashMap::new(),
            partner_transactions: HashMap::new(),
            ids: StdRng::from_os_rng(),
        }
    }

    /// A store holding what a data file held: products in creation order, transactions in
    /// creation order, each with its events. Rebuilds the indexes a store keeps; an error names
    /// a transaction whose product is missing or an id given twice.
    pub fn restore(
        products: Vec<ProductRecord>,
        transactions: Vec<TransactionRecord>,
    ) -> Result<Self, String> {
        let mut store = Self::new();
        for record in products {
            let id = record.product.id.clone();
            let partner_id = record.product.partner_id.clone();
            if store.products.insert(id.clone(), record).is_some() {
                return Err(format!("product `{id}` is there twice"));
            }
            store
                .partner_products
                .entry(partner_id)
                .or_default()
                .push(id);
        }
        for record in transactions {
            let transaction = &record.transaction;
            let product = store.products.get(&transaction.product.id).ok_or_else(|| {
                format!(
                    "transaction `{}` is on product `{}`, which is not there",
                    transaction.id, transaction.product.id
                )
            })?;
            if product.product.partner_id != transaction.product.partner_id {
                return Err(format!(
                    "transaction `{}` names another partner than its product's",
                    transaction.id
                ));
            }
            let index = u32::try_from(store.transactions.len())
                .map_err(|_| "too many transactions".to_string())?;
            if store
                .transaction_index
                .insert(transaction.id.clone(), index)
                .is_some()
            {
                return Err(format!("transaction `{}` is there twice", transaction.id));
            }
            let listing = store
                .partner_transactions
                .entry(transaction.product.partner_id.clone())
                .or_default();
            listing.order.push(index);
            listing.version = 1;
            store.transactions.push(record);
        }
        Ok(store)
    }

    /// Every product, each partner's in creation order.
    pub fn product_records(&self) -> impl Iterator<Item = &ProductRecord> {
        self.partner_products
            .values()
            .flatten()
            .filter_map(|id| self.products.get(id))
    }

    /// A transaction's position (its index, in creation order) and record.
    pub fn position_of(&self, id: &str) -> Option<(u32, &TransactionRecord)> {
        let index = *self.transaction_index.get(id)?;
        Some((index, self.transactions.get(index as usize)?))
    }

    /// Ids from a fixed seed from now on (demo data is the same on every run).
    pub fn seed_ids(&mut self, seed: u64) {
        self.ids = StdRng::seed_from_u64(seed);
    }

    /// Ids from the OS's randomness again.
    pub fn random_ids(&mut self) {
        self.ids = StdRng::from_os_rng();
    }

    fn new_id(&mut self) -> String {
        let mut bytes = [0u8; 16];
        self.ids.fill_bytes(&mut bytes);
        uuid::Builder::from_random_bytes(bytes)
            .into_uuid()
            .to_string()
    }

    // ---- products -------------------------------------------------------------------

    /// A partner's products in creation order.
    pub fn products_of(&self, partner_id: &str) -> Vec<&Product> {
        self.partner_products
            .get(partner_id)
            .map(|ids| {
                ids.iter()
                    .filter_map(|id| self.products.get(id).map(|r| &r.product))
                    .collect()
            })
            .unwrap_or_default()
    }

    /// A product of this partner; another partner's product is "not found" too.
    pub fn own_product(&self, partner_id: &str, id: &str) -> ApiResult<&ProductRecord> {
        self.products
            .get(id)
            .filter(|r| r.product.partner_id == partner_id)
            .ok_or_else(|| ApiError::new(ErrorCode::NotFound, "product not found"))
    }

    pub fn product(&self, id: &str) -> Option<&ProductRecord> {
        self.products.get(id)
    }

    pub fn create_product(
        &mut self,
        caller: &Caller,
        body: Value,
        now: DateTime<Utc>,
        allow_http: bool,
    ) -> ApiResult<Product> {
        let Value::Object(map) = &body else {
            return Err(ApiError::invalid("a product must be a JSON object"));
        };
        let read_only = read_only_present(map, READ_ONLY_ON_CREATE);
        if !read_only.is_empty() {
            return Err(ApiError::invalid("the body sets read-only fields")
                .with_details(format!("the server sets: {}", read_only.join(", "))));
        }
        if let Some(Value::Array(hooks)) = map.get("webhooks") {
            if hooks
                .iter()
                .any(|h| h.get("subscriptionId").is_some_and(|v| !v.is_null()))
            {
                return Err(ApiError::invalid(
                    "webhooks[].subscriptionId is set by the server on create",
                ));
            }
        }
        let new: NewProduct = decode(body).map_err(|e| e.0)?;
        check_product_fields(&new)?;
        if self
            .products_of(&caller.partner_id)
            .iter()
            .any(|p| p.name == new.name)
        {
            return Err(ApiError::new(
                ErrorCode::Conflict,
                format!("a product named `{}` already exists", printable(&new.name)),
            ));
        }
        let (webhooks, signing_keys) =
            self.resolve_webhooks(new.webhooks.clone(), None, allow_http)?;
        let id = self.new_id();
        let product = Product {
            id: id.clone(),
            partner_id: caller.partner_id.clone(),
            name: new.name,
            listing_name: new.listing_name,
            request_types: new.request_types,
            environment: "sandbox".into(),
            status: "development".into(),
            interface_url: new.interface_url,
            admin_interface_url: new.admin_interface_url,
            integration_type: new.integration_type.unwrap_or_else(|| "ASYNC".into()),
            credentials: new.credentials,
            tags: new.tags,
            extension_limit: new.extension_limit.unwrap_or(0),
            webhooks,
            created: now,
            created_by: caller.client_id.clone(),
            updated: now,
            updated_by: caller.client_id.clone(),
        };
        self.products.insert(
            id.clone(),
            ProductRecord {
                product: product.clone(),
                signing_keys,
            },
        );
        self.partner_products
            .entry(caller.partner_id.clone())
            .or_default()
            .push(id);
        Ok(product)
    }

    /// RFC 7396 merge patch of a product, with the field notes' subscription rules: an entry
    /// with a `subscriptionId` updates that subscription (an omitted `signingkey` keeps the
    /// key), one without creates a subscription, and one left out is deleted.
    pub fn patch_product(
        &mut self,
        caller: &Caller,
        id: &str,
        patch: Value,
        now: DateTime<Utc>,
        allow_http: bool,
    ) -> ApiResult<Product> {
        let record = self.own_product(&caller.partner_id, id)?.clone();
        let Value::Object(mut patch_map) = patch else {
            return Err(ApiError::invalid("a merge patch must be a JSON object"));
        };
        let current = serde_json::to_value(&record.product)
            .map_err(|_| ApiError::new(ErrorCode::Internal, "could not read the product"))?;
        let mut changed_read_only = Vec::new();
        for field in read_only_present(&patch_map, READ_ONLY_ON_PATCH) {
            if current.get(&field) != patch_map.get(&field) {
                changed_read_only.push(field.clone());
            }
            patch_map.remove(&field);
        }
        if !changed_read_only.is_empty() {
            return Err(ApiError::invalid("the patch changes read-only fields")
                .with_details(format!("read-only: {}", changed_read_only.join(", "))));
        }
        // A name the product does not have is a mistake even as `null` (which merging would
        // pass over in silence).
        if let Some(unknown) = patch_map
            .keys()
            .find(|k| !EDITABLE_FIELDS.contains(&k.as_str()))
        {
            return Err(ApiError::invalid(format!(
                "the patch names an unknown field `{}`",
                printable(unknown)
            ))
            .with_details(format!(
                "fields a patch may change: {}",
                EDITABLE_FIELDS.join(", ")
            )));
        }
        // The editable view of the product, the patch merged into it, then the same checks as
        // a create.
        let keep: Vec<WebhookSubscriptionInput> = record
            .product
            .webhooks
            .iter()
            .map(WebhookSubscriptionInput::keep)
            .collect();
        let editable = NewProduct {
            name: record.product.name.clone(),
            listing_name: record.product.listing_name.clone(),
            request_types: record.product.request_types.clone(),
            interface_url: record.product.interface_url.clone(),
            admin_interface_url: record.product.admin_interface_url.clone(),
            integration_type: Some(record.product.integration_type.clone()),
            credentials: record.product.credentials.clone(),
            tags: record.product.tags.clone(),
            extension_limit: Some(record.product.extension_limit),
            webhooks: keep,
        };
        let mut document = serde_json::to_value(&editable)
            .map_err(|_| ApiError::new(ErrorCode::Internal, "could not read the product"))?;
        json_patch::merge(&mut document, &Value::Object(patch_map));
        let edited: NewProduct = decode(document).map_err(|e| e.0)?;
        check_product_fields(&edited)?;
        let (webhooks, signing_keys) =
            self.resolve_webhooks(edited.webhooks, Some(&record), allow_http)?;
        let product = Product {
            listing_name: edited.listing_name,
            request_types: edited.request_types,
            interface_url: edited.interface_url,
            admin_interface_url: edited.admin_interface_url,
            integration_type: edited.integration_type.unwrap_or_else(|| "ASYNC".into()),
            credentials: edited.credentials,
            tags: edited.tags,
            extension_limit: edited.extension_limit.unwrap_or(0),
            webhooks,
            updated: now,
            updated_by: caller.client_id.clone(),
            ..record.product
        };
        self.products.insert(
            product.id.clone(),
            ProductRecord {
                product: product.clone(),
                signing_keys,
            },
        );
        Ok(product)
    }

    fn resolve_webhooks(
        &mut self,
        inputs: Vec<WebhookSubscriptionInput>,
        existing: Option<&ProductRecord>,
        allow_http: bool,
    ) -> ApiResult<(Vec<WebhookSubscription>, HashMap<String, Secret>)> {
        let mut subscriptions = Vec::with_capacity(inputs.len());
        let mut keys = HashMap::new();
        for (i, input) in inputs.into_iter().enumerate() {
            let at = |field: &str, message: String| {
                ApiError::invalid(format!("webhooks[{i}].{field}: {message}"))
            };
            let (subscription_id, base, base_key) = match &input.subscription_id {
                Some(sub_id) => {
                    let found = existing.and_then(|r| {
                        r.product
                            .webhooks
                            .iter()
                            .find(|s| &s.subscription_id == sub_id)
                            .map(|s| (s.clone(), r.signing_keys.get(sub_id).cloned()))
                    });
                    let Some((base, key)) = found else {
                        return Err(at(
                            "subscriptionId",
                            format!("this product has no subscription `{}`", printable(sub_id)),
                        ));
                    };
                    if keys.contains_key(sub_id) {
                        return Err(at(
                            "subscriptionId",
                            format!("subscription `{}` is listed twice", printable(sub_id)),
                        ));
                    }
                    (sub_id.clone(), Some(base), key)
                }
                None => (self.new_id(), None, None),
            };
            let required = |field: &str| at(field, "is required for a new subscription".into());
            let url = match (input.url, &base) {
                (Some(url), _) => url,
                (None, Some(base)) => base.url.clone(),
                (None, None) => return Err(required("url")),
            };
            let events = match (input.events, &base) {
                (Some(events), _) => events,
                (None, Some(base)) => base.events.clone(),
                (None, None) => return Err(required("events")),
            };
            let resource: ResourceType = match (input.resource, &base) {
                (Some(resource), _) => resource,
                (None, Some(base)) => base.resource,
                (None, None) => return Err(required("resource")),
            };
            let key = match (input.signing_key, base_key) {
                (Some(key), _) => key,
                (None, Some(key)) => key,
                (None, None) => return Err(required("signingkey")),
            };
            product::check_callback_url(&url, allow_http).map_err(|m| at("url", m))?;
            if events.is_empty() {
                return Err(at(
                    "events",
                    "needs at least one of created, updated".into(),
                ));
            }
            let distinct: HashSet<_> = events.iter().collect();
            if distinct.len() != events.len() {
                return Err(at("events", "names an event type twice".into()));
            }
            signing_key::check(key.expose())
                .map_err(|problems| at("signingkey", problems.to_string()))?;
            keys.insert(subscription_id.clone(), key);
            subscriptions.push(WebhookSubscription {
                subscription_id,
                url,
                events,
                resource,
            });
        }
        Ok((subscriptions, keys))
    }

    // ---- transactions ---------------------------------------------------------------

    pub fn transactions(&self) -> &[TransactionRecord] {
        &self.transactions
    }

    pub fn listing(&self, partner_id: &str) -> Option<&PartnerListing> {
        self.partner_transactions.get(partner_id)
    }

    fn index_of(&self, id: &str) -> ApiResult<usize> {
        self.transaction_index
            .get(id)
            .map(|&i| i as usize)
            .ok_or_else(|| ApiError::new(ErrorCode::NotFound, "transaction not found"))
    }

    /// A transaction of this partner's products; another partner's is "not found" too.
    pub fn own_transaction(&self, partner_id: &str, id: &str) -> ApiResult<&TransactionRecord> {
        let record = &self.transactions[self.index_of(id)?];
        if record.transaction.product.partner_id != partner_id {
            return Err(ApiError::new(ErrorCode::NotFound, "transaction not found"));
        }
        Ok(record)
    }

    fn bump(&mut self, partner_id: &str) {
        if let Some(listing) = self.partner_transactions.get_mut(partner_id) {
            listing.version += 1;
        }
    }

    fn system_event(
        &mut self,
        event_type: &str,
        text: &str,
        transaction: &Transaction,
        status: &str,
        now: DateTime<Utc>,
    ) -> TransactionEvent {
        TransactionEvent {
            id: self.new_id(),
            event_type: event_type.into(),
            text: text.into(),
            from: event_types::SYSTEM.into(),
            sent: now,
            comments: None,
            details: Some(EventDetails {
                status: Some(status.into()),
                request_type: Some(transaction.request.request_type.clone()),
                transaction_id: transaction.id.clone(),
            }),
        }
    }

    /// The lender starts a transaction on a product: `request:created`.
    pub fn create_transaction(
        &mut self,
        new: NewTransaction,
        now: DateTime<Utc>,
    ) -> ApiResult<(Transaction, Change)> {
        let product = self
            .products
            .get(&new.product_id)
            .map(|r| r.product.clone())
            .ok_or_else(|| ApiError::new(ErrorCode::NotFound, "product not found"))?;
        if !product.request_types.contains(&new.request_type) {
            return Err(ApiError::invalid(format!(
                "requestType `{}` is not one of the product's request types ({})",
                printable(&new.request_type),
                product.request_types.join(", ")
            )));
        }
        let loan = object_or_empty(new.loan, "loan")?;
        let options = object_or_empty(new.options, "options")?;
        let id = self.new_id();
        let entity_id = self.new_id();
        let transaction = Transaction {
            id: id.clone(),
            status: TransactionStatus::Created,
            client_id: LENDER_CLIENT_ID.into(),
            environment: "sandbox".into(),
            created: now,
            created_by: LENDER_USER.into(),
            updated: now,
            updated_by: LENDER_USER.into(),
            product: ProductRef {
                id: product.id.clone(),
                partner_id: product.partner_id.clone(),
                name: product.name.clone(),
            },
            entity_ref: EntityRef {
                entity_id: format!("urn:svc:loan:{entity_id}"),
                entity_type: "urn:svc:loan".into(),
            },
            request: TransactionRequest {
                request_type: new.request_type,
                options,
                loan,
                resources: Vec::new(),
                requesting_party: Some(lender_party()),
            },
            response: None,
        };
        let event = self.system_event(
            event_types::REQUEST_CREATED,
            "Transaction request created",
            &transaction,
            TransactionStatus::Created.as_str(),
            now,
        );
        let index = u32::try_from(self.transactions.len()).map_err(|_| {
            ApiError::new(
                ErrorCode::Conflict,
                "the sandbox holds too many transactions",
            )
        })?;
        let change = Change::new(id.clone(), product.id.clone(), vec![event.clone()]);
        let json = to_json(&transaction)?;
        self.transactions.push(TransactionRecord {
            transaction: transaction.clone(),
            json,
            events: vec![event],
        });
        self.transaction_index.insert(id, index);
        let listing = self
            .partner_transactions
            .entry(product.partner_id.clone())
            .or_default();
        listing.order.push(index);
        listing.version += 1;
        Ok((transaction, change))
    }

    /// The lender updates a transaction's request: `request:updated`.
    pub fn update_transaction(
        &mut self,
        id: &str,
        update: TransactionUpdate,
        now: DateTime<Utc>,
    ) -> ApiResult<(Transaction, Change)> {
        let index = self.index_of(id)?;
        if self.transactions[index].transaction.is_locked() {
            return Err(locked());
        }
        if update.loan.is_none() && update.options.is_none() {
            return Err(ApiError::invalid("the update needs loan, options or both"));
        }
        let loan = update
            .loan
            .map(|v| object_or_empty(Some(v), "loan"))
            .transpose()?;
        let options = update
            .options
            .map(|v| object_or_empty(Some(v), "options"))
            .transpose()?;
        let mut transaction = self.transactions[index].transaction.clone();
        if let Some(loan) = loan {
            transaction.request.loan = loan;
        }
        if let Some(options) = options {
            transaction.request.options = options;
        }
        transaction.updated = now;
        transaction.updated_by = LENDER_USER.into();
        let event = self.system_event(
            event_types::REQUEST_UPDATED,
            "Transaction request updated",
            &transaction,
            transaction.status.as_str(),
            now,
        );
        self.commit(index, transaction, vec![event])
    }

    /// The partner answers: `response:updated`, then `response:processed` (the sandbox
    /// processes a response as soon as it has accepted it).
    pub fn respond(
        &mut self,
        caller: &Caller,
        id: &str,
        response: TransactionResponse,
        now: DateTime<Utc>,
    ) -> ApiResult<(Transaction, Change)> {
        self.own_transaction(&caller.partner_id, id)?;
        let index = self.index_of(id)?;
        if self.transactions[index].transaction.is_locked() {
            return Err(locked());
        }
        if let Some(text) = &response.partner_status {
            check_len("partnerStatus", text, RESPONSE_TEXT_MAX, false)?;
        }
        if let Some(text) = &response.reference_number {
            check_len("referenceNumber", text, RESPONSE_TEXT_MAX, false)?;
        }
        if response.loan.as_ref().is_some_and(|l| !l.is_object()) {
            return Err(ApiError::invalid("loan must be a JSON object"));
        }
        let mut transaction = self.transactions[index].transaction.clone();
        let merged = match transaction.response.take() {
            None => response,
            Some(old) => TransactionResponse {
                status: response.status,
                partner_status: response.partner_status.or(old.partner_status),
                reference_number: response.reference_number.or(old.reference_number),
                responding_party: response.responding_party.or(old.responding_party),
                loan: response.loan.or(old.loan),
                resources: response.resources.or(old.resources),
                errors: response.errors.or(old.errors),
            },
        };
        let status = merged.status;
        transaction.status = status.transaction_status();
        transaction.response = Some(merged);
        transaction.updated = now;
        transaction.updated_by = caller.client_id.clone();
        let updated = self.system_event(
            event_types::RESPONSE_UPDATED,
            "Transaction response updated",
            &transaction,
            status.as_str(),
            now,
        );
        let processed = self.system_event(
            event_types::RESPONSE_PROCESSED,
            "Transaction response processed",
            &transaction,
            status.as_str(),
            now,
        );
        self.commit(index, transaction, vec![updated, processed])
    }

    fn commit(
        &mut self,
        index: usize,
        transaction: Transaction,
        events: Vec<TransactionEvent>,
    ) -> ApiResult<(Transaction, Change)> {
        let json = to_json(&transaction)?;
        let change = Change::new(
            transaction.id.clone(),
            transaction.product.id.clone(),
            events.clone(),
        );
        let partner_id = transaction.product.partner_id.clone();
        let record = &mut self.transactions[index];
        record.transaction = transaction.clone();
        record.json = json;
        record.events.extend(events);
        self.bump(&partner_id);
        Ok((transaction, change))
    }

    /// A custom event from the lender: only the event's `created` fires.
    pub fn add_event(
        &mut self,
        id: &str,
        new: NewEvent,
        now: DateTime<Utc>,
    ) -> ApiResult<(TransactionEvent, Change)> {
        let index = self.index_of(id)?;
        check_len("type", &new.event_type, EVENT_TYPE_MAX, true)?;
        if !new.event_type.starts_with("urn:")
            || new.event_type.len() <= 4
            || new
                .event_type
                .chars()
                .any(|c| c.is_whitespace() || c.is_control())
        {
            return Err(ApiError::invalid(
                "type must be a URN such as `urn:acme:note` (no spaces)",
            ));
        }
        if new.event_type.starts_with(SYSTEM_EVENT_TYPE_PREFIX) {
            return Err(ApiError::invalid(
                "type may not use the system's own `urn:svc:partner:transaction` names",
            ));
        }
        check_len("text", &new.text, EVENT_TEXT_MAX, true)?;
        if let Some(comments) = &new.comments {
            check_len("comments", comments, EVENT_COMMENTS_MAX, false)?;
        }
        let event_id = self.new_id();
        let transaction = &self.transactions[index].transaction;
        let product_id = transaction.product.id.clone();
        let event = TransactionEvent {
            id: event_id,
            event_type: new.event_type,
            text: new.text,
            from: LENDER_NAME.into(),
            sent: now,
            comments: new.comments,
            details: Some(EventDetails {
                status: Some(transaction.status.as_str().into()),
                request_type: Some(transaction.request.request_type.clone()),
                transaction_id: transaction.id.clone(),
            }),
        };
        self.transactions[index].events.push(event.clone());
        let change = Change::new(id.to_string(), product_id, vec![event.clone()]);
        Ok((event, change))
    }

    /// Sorts a partner's transactions; ties keep creation order. Each transaction's sort
    /// values are taken once, then compared (a stable sort of positions).
    pub fn sorted_order(&self, listing: &PartnerListing, sort: &SortSpec) -> Vec<u32> {
        let items = &self.transactions;
        let values: Vec<_> = listing
            .order
            .iter()
            .map(|&i| sort.values_of(&items[i as usize].transaction))
            .collect();
        let mut positions: Vec<usize> = (0..values.len()).collect();
        positions.sort_by(|&a, &b| sort.compare_values(&values[a], &values[b]));
        positions.into_iter().map(|p| listing.order[p]).collect()
    }
}

fn locked() -> ApiError {
    ApiError::new(
        ErrorCode::Conflict,
        "the transaction is completed: its request and response are locked",
    )
}

fn lender_party() -> Party {
    Party {
        name: "Sandbox Lending Co.".into(),
        address: "100 Main Street".into(),
        city: "Springfield".into(),
        state: "IL".into(),
        postal_code: "62701".into(),
        point_of_contact: Some(PointOfContact {
            name: "Loan Officer".into(),
            role: "Loan Officer".into(),
            email: "officer@lender.invalid".into(),
            phone: "555-0100".into(),
        }),
    }
}

/// Sorted index vectors per (partner, sort), each valid for one version of the partner's
/// listing.
///
/// A read computes a missing order once (a stable sort of the partner's indexes); a write
/// that changes one transaction then moves just that index inside every cached order of its
/// partner (`apply_change`: one removal and one binary-search insertion each), so a stream of
/// lender writes does not make the next list call sort 100,000 items again. Ties keep creation
/// order, which is index order, so "stable sort" and "sort by (keys, index)" are the same
/// order and binary search can find an item's place. Bounded: a partner keeps at most
/// `PER_PARTNER` sorts; past that its entries are dropped and recomputed when asked for.
#[derive(Debug, Default)]
pub struct SortCache {
    /// partner id → sort spec as text → the cached order.
    entries: HashMap<String, HashMap<String, CachedOrder>>,
}

#[derive(Debug)]
struct CachedOrder {
    version: u64,
    sort: SortSpec,
    order: Arc<Vec<u32>>,
}

impl SortCache {
    const PER_PARTNER: usize = 64;

    pub fn get(&self, partner_id: &str, sort: &str, version: u64) -> Option<Arc<Vec<u32>>> {
        self.entries
            .get(partner_id)?
            .get(sort)
            .filter(|cached| cached.version == version)
            .map(|cached| cached.order.clone())
    }

    pub fn put(&mut self, partner_id: &str, sort: &SortSpec, version: u64, order: Arc<Vec<u32>>) {
        let sorts = self.entries.entry(partner_id.to_string()).or_default();
        if sorts.len() >= Self::PER_PARTNER {
            sorts.clear();
        }
        sorts.retain(|_, cached| cached.version == version);
        sorts.insert(
            sort.to_string(),
            CachedOrder {
                version,
                sort: sort.clone(),
                order,
            },
        );
    }

    /// Brings the partner's cached orders up to date after one transaction changed (or was
    /// added): orders of the version just before the change are patched in place, older
    /// ones are dropped.
    pub fn apply_change(&mut self, store: &Store, change: &Change) {
        let Some(index) = store.transaction_index.get(&change.transaction_id).copied() else {
            return;
        };
        let record = &store.transactions[index as usize];
        let partner_id = &record.transaction.product.partner_id;
        let Some(listing) = store.partner_transactions.get(partner_id) else {
            return;
        };
        let Some(sorts) = self.entries.get_mut(partner_id) else {
            return;
        };
        let version = listing.version;
        sorts.retain(|_, cached| cached.version + 1 == version || cached.version == version);
        for cached in sorts.values_mut() {
            if cached.version == version {
                continue;
            }
            let order = Arc::make_mut(&mut cached.order);
            if let Some(at) = order.iter().position(|&i| i == index) {
                order.remove(at);
            }
            let items = &store.transactions;
            let place = order.partition_point(|&other| {
                cached
                    .sort
                    .compare(&items[other as usize].transaction, &record.transaction)
                    .then(other.cmp(&index))
                    .is_lt()
            });
            order.insert(place, index);
            cached.version = version;
        }
    }
}
