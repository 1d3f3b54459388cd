import { useState } from "react";
import { api, type Product } from "../../platform";
import { Listing, type ListingColumn } from "../listing/Listing";
import { formatTime } from "../../lib/format";
import { navigate } from "../../lib/router";
import { CreateProduct } from "./CreateProduct";

export const PRODUCT_COLUMNS: ListingColumn<Product>[] = [
  { id: "listingName", header: "Listing name", sortKey: "listingName", cell: (p) => p.listingName, width: 200 },
  { id: "name", header: "Name", sortKey: "name", cell: (p) => p.name, width: 170 },
  { id: "status", header: "Status", sortKey: "status", cell: (p) => <span className={`pill ${p.status}`}>{p.status}</span>, width: 100 },
  { id: "environment", header: "Env", cell: (p) => p.environment, width: 80 },
  { id: "requestTypes", header: "Request types", cell: (p) => p.requestTypes.join(", "), width: 120 },
  { id: "webhooks", header: "Hooks", cell: (p) => p.webhooks.length, width: 60 },
  { id: "created", header: "Created", sortKey: "created", cell: (p) => formatTime(p.created), width: 170 },
  { id: "updated", header: "Updated", sortKey: "updated", cell: (p) => formatTime(p.updated), width: 170 },
];

export function ProductsScreen() {
  const [creating, setCreating] = useState(false);
  return (
    <>
      {creating && <CreateProduct onClose={() => setCreating(false)} />}
      <Listing<Product>
        kind="products"
        title="Products"
        columns={PRODUCT_COLUMNS}
        fetchPage={api.listProducts}
        rowId={(p) => p.id}
        onOpen={(p) => navigate("products", p.id)}
        defaultSort="listingName"
        toolbar={
          <button type="button" className="primary" onClick={() => setCreating(true)}>
            New product
          </button>
        }
      />
    </>
  );
}
