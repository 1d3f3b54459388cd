/**
 * A column of a server-paged listing: what `Listing` draws and sorts by, and what `SearchBar`
 * shows its hits with. Its own file so the two can share it without importing each other
 * (SearchBar is part of Listing, so Listing imports it).
 */
import type { ReactNode } from "react";

export interface ListingColumn<T> {
  id: string;
  header: string;
  /** The `sort` key of this column, if the API could sort by it. */
  sortKey?: string;
  cell: (row: T) => ReactNode;
  width?: number;
}
