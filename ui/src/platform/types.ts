// The types that cross the bridge, generated from the Rust types into ../bindings by
// `cargo test -p partner-console-core bindings` (which fails when they drift). Re-exported here so
// screens import them from the platform module alone: all of them at once (`../bindings/index.ts`,
// generated too), and below them the few the UI names otherwise (a received view, a name that
// would be taken twice). A name declared here wins over the generated one of the same name.
export type * from "../bindings";
import type { Received } from "../bindings/Received";
import type { ProductView } from "../bindings/ProductView";
import type { TransactionView } from "../bindings/TransactionView";
import type { EventView } from "../bindings/EventView";
export type { Received, ProductView, TransactionView, EventView };
import type { SubscriptionView } from "../bindings/SubscriptionView";
export type { SubscriptionView };
/** A subscription the service named (`subscriptionId`): the only kind that can be edited, checked or rotated. */
export type Subscription = SubscriptionView & { subscriptionId: string };
/** A product as the service sent it: the typed view (only `id` and `webhooks` are sure) and its document. */
export type Product = Received<ProductView>;
export type { Report as ReceiverReport } from "../bindings/Report";
export type { RuleResult as ReceiverRule } from "../bindings/RuleResult";
export type { Exchange as ReceiverExchange } from "../bindings/Exchange";
export type { Outcome as RuleOutcome } from "../bindings/Outcome";
/** A transaction as the service sent it: the typed view (only `id` is sure) and its document. */
export type Transaction = Received<TransactionView>;
/** A transaction event as the service sent it. */
export type TransactionEvent = Received<EventView>;
/** A transaction as the support desk's local copy keeps it. */
export type { Transaction as StoredTransaction } from "../bindings/Transaction";
