/**
 * Proof that the command map generated from the core's declarations (`../bindings/Commands.ts`)
 * types every call: each line under `@ts-expect-error` must fail to compile, so `tsc --noEmit`
 * (which checks this file with the rest of `src/`) fails the day a wrong name or argument would
 * pass. Never run: a function nothing calls.
 */
import { call, type CommandResult, type Product, type Received, type Transaction, type TransactionView } from "./index";

export function wrongCallsDoNotCompile(): void {
  // @ts-expect-error: no command has this name.
  void call("get_prodcut", { id: "p" });
  // @ts-expect-error: the argument is missing.
  void call("get_product");
  // @ts-expect-error: the argument has the wrong type.
  void call("get_product", { id: 7 });
  // @ts-expect-error: the argument has the wrong name (the window sends camelCase).
  void call("delete_subscription", { product_id: "p", subscriptionId: "s" });
  // @ts-expect-error: the command takes no argument.
  void call("app_status", { id: "x" });
  // Right: these compile.
  void call("get_product", { id: "p" });
  void call("app_status");
  const product: CommandResult<"get_product"> = {} as Product;
  void product;
}

/** True when A and B are the same type. */
type Same<A, B> = [A] extends [B] ? ([B] extends [A] ? true : false) : false;
// The platform's own names win over the generated ones re-exported wholesale: `Transaction` is the
// received view, not the support copy's strict record (`StoredTransaction`).
export const transactionIsTheReceivedView: Same<Transaction, Received<TransactionView>> = true;
