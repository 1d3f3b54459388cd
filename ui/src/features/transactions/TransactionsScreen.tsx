import { api, type Transaction } from "../../platform";
import { Listing, type ListingColumn } from "../listing/Listing";
import { tableTime } from "../../lib/format";
import { Id } from "../../components/Id";
import { navigate } from "../../lib/router";

export const TRANSACTION_COLUMNS: ListingColumn<Transaction>[] = [
  { id: "id", header: "Id", sortKey: "id", cell: (t) => <Id value={t.id} compact className="mono" />, width: 112 },
  { id: "status", header: "Status", sortKey: "status", cell: (t) => (t.status ? <span className={`pill ${t.status}`}>{t.status}</span> : null), width: 100 },
  { id: "requestType", header: "Request type", sortKey: "requestType", cell: (t) => t.request?.type ?? "—", width: 112 },
  { id: "product", header: "Product", cell: (t) => t.product?.name ?? "—", width: 120 },
  { id: "loan", header: "Loan", cell: (t) => <Id value={t.entityRef?.entityId} compact className="mono" />, width: 110 },
  { id: "response", header: "Response", cell: (t) => t.response?.status ?? "—", width: 96 },
  { id: "created", header: "Created", sortKey: "created", cell: (t) => tableTime(t.created), width: 128 },
  { id: "updated", header: "Updated", sortKey: "updated", cell: (t) => tableTime(t.updated), width: 128 },
];

export function TransactionsScreen() {
  return (
    <Listing<Transaction>
      kind="transactions"
      title="Transactions"
      columns={TRANSACTION_COLUMNS}
      fetchPage={api.listTransactions}
      rowId={(t) => t.id}
      onOpen={(t) => navigate("transactions", t.id)}
      defaultSort="-created"
    />
  );
}
