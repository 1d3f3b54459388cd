//! The partner API's wire contract, shared by the sandbox, the client, the listener and the app.
//!
//! Every rule of the service specification lives here exactly once: the resource shapes, the
//! `start`/`limit`/`sort` rules of the list endpoints, the token lifetimes, the signing-key
//! complexity rule and the notification signature. The crate does no I/O, so the server that
//! enforces a rule and the client that checks it before sending can never disagree.

pub mod constraints;
pub mod delivery;
pub mod delivery_record;
pub mod error;
pub mod firing;
pub mod integer;
pub mod list;
pub mod notification;
pub mod openapi;
pub mod product;
pub mod read;
pub mod received;
pub mod secret;
pub mod secret_forms;
pub mod signature;
pub mod signing_key;
pub mod token;
pub mod transaction;

pub use delivery::{DeliverySettings, SignedNotification};
pub use delivery_record::{DeliveryAttempt, DeliveryRecord, DeliveryState};
pub use error::{ApiError, ErrorCode};
pub use firing::{fired_by, Fired};
pub use list::{ListRuleError, PageParams, ServiceSorts, SortKey, SortSpec, SortValue, Sortable};
pub use notification::{
    resource_at, EventType, Notification, NotificationMeta, NotificationMetaText, NotificationText,
    ResourceAddress, ResourceRefMismatch, ResourceType,
};
pub use product::{
    CredentialDefinition, NewProduct, NewWebhookSubscription, Product, ProductPatch, ProductTags,
    SubscriptionChange, WebhookSubscription, WebhookSubscriptionInput,
};
pub use received::{Departure, NotificationFields};
pub use secret::Secret;
pub use secret_forms::SecretForms;
pub use signing_key::{SigningKeyProblem, SigningKeyProblems};
pub use token::{GrantType, Introspection, TokenForm, TokenLifetime, TokenRequest, TokenResponse};
pub use transaction::{
    event_types, EntityRef, EventDetails, NewEvent, NewTransaction, Party, PointOfContact,
    ProductRef, ResourceFile, ResponseError, ResponseStatus, Transaction, TransactionEvent,
    TransactionRequest, TransactionResponse, TransactionStatus, TransactionUpdate,
};

/// Path prefix of the product and transaction endpoints (the spec's `v2`).
pub const PARTNER_PREFIX: &str = "/partner/v2";
/// Path prefix of the token endpoints (the spec's `v1`).
pub const OAUTH_PREFIX: &str = "/oauth2/v1";
