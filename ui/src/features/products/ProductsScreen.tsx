import { useState } from "react";
import { api, type Product } from "../../platform";
import { Listing, type ListingColumn } from "../listing/Listing";
import { PRODUCTS_DEFAULT_SORT } from "../../startup";
import { tableTime } from "../../lib/format";
import { navigate } from "../../lib/router";
import { CreateProduct } from "./CreateProduct";

export const PRODUCT_COLUMNS: ListingColumn<Product>[] = [
  { id: "listingName", header: "Listing name", sortKey: "listingName", cell: (p) => p.listingName, width: 190 },
  { id: "name", header: "Name", sortKey: "name", cell: (p) => p.name, width: 130 },
  { id: "status", header: "Status", sortKey: "status", cell: (p) => (p.status ? <span className={`pill ${p.status}`}>{p.status}</span> : null), width: 96 },
  { id: "requestTypes", header: "Request types", cell: (p) => p.requestTypes.join(", "), width: 116 },
  { id: "webhooks", header: "Hooks", cell: (p) => p.webhooks.length, width: 56 },
  { id: "created", header: "Created", sortKey: "created", cell: (p) => tableTime(p.created), width: 128 },
  { id: "updated", header: "Updated", sortKey: "updated", cell: (p) => tableTime(p.updated), width: 128 },
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
        defaultSort={PRODUCTS_DEFAULT_SORT}
        toolbar={
          <button type="button" className="primary" onClick={() => setCreating(true)}>
            New product
          </button>
        }
      />
    </>
  );
}
