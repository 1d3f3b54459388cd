import { useMutation } from "@tanstack/react-query";
import { useState } from "react";
import { api } from "../../platform";
import { ErrorPanel } from "../../components/ErrorPanel";
import { navigate } from "../../lib/router";

/** Create a product configuration; the server checks name, listing name and request types. */
export function CreateProduct({ onClose }: { onClose: () => void }) {
  const [name, setName] = useState("");
  const [listingName, setListingName] = useState("");
  const [interfaceUrl, setInterfaceUrl] = useState("");
  const create = useMutation({
    mutationFn: () =>
      api.createProduct({
        name: name.trim(),
        listingName: listingName.trim(),
        requestTypes: ["NEW_REQUEST"],
        interfaceUrl: interfaceUrl.trim() || null,
      }),
    onSuccess: (product) => {
      onClose();
      navigate("products", product.id);
    },
  });
  return (
    <form
      className="card form-card"
      aria-label="New product"
      onSubmit={(e) => {
        e.preventDefault();
        create.mutate();
      }}
    >
      <h2>New product configuration</h2>
      <div className="form-row">
        <label>Name (unique, ≤ 64)<input value={name} onChange={(e) => setName(e.target.value)} required maxLength={64} autoFocus /></label>
        <label>Listing name<input value={listingName} onChange={(e) => setListingName(e.target.value)} required maxLength={256} /></label>
        <label>Interface URL (optional)<input value={interfaceUrl} onChange={(e) => setInterfaceUrl(e.target.value)} placeholder="https://…" /></label>
        <span className="muted small">Request types: NEW_REQUEST</span>
      </div>
      {create.isError && <ErrorPanel error={create.error} compact />}
      <div className="actions">
        <button type="submit" className="primary" disabled={create.isPending}>Create</button>
        <button type="button" onClick={onClose}>Cancel</button>
      </div>
    </form>
  );
}
