/** Small formatting helpers shared by the screens. */
export function formatTime(iso: string | null | undefined): string {
  if (!iso) return "—";
  const date = new Date(iso);
  if (Number.isNaN(date.getTime())) return iso;
  return date.toISOString().replace("T", " ").replace(/\.\d+Z$/, "Z");
}

export function shortTime(iso: string | null | undefined): string {
  if (!iso) return "—";
  const date = new Date(iso);
  if (Number.isNaN(date.getTime())) return iso;
  return date.toISOString().slice(11, 23);
}

/** `mm:ss` or `h:mm:ss` of a number of seconds; negatives show as expired. */
export function countdown(seconds: number): string {
  if (seconds <= 0) return "expired";
  const s = Math.floor(seconds % 60);
  const m = Math.floor((seconds / 60) % 60);
  const h = Math.floor(seconds / 3600);
  const pad = (n: number) => String(n).padStart(2, "0");
  return h > 0 ? `${h}:${pad(m)}:${pad(s)}` : `${pad(m)}:${pad(s)}`;
}

export function shortId(id: string | null | undefined): string {
  if (!id) return "—";
  return id.length > 13 ? `${id.slice(0, 8)}…${id.slice(-4)}` : id;
}

/** Flattens an object into `path → value` rows for the detail panels. */
export function flatten(value: unknown, prefix = ""): Array<[string, string]> {
  if (value === null || value === undefined) return [[prefix || "(value)", "—"]];
  if (Array.isArray(value)) {
    if (value.length === 0) return [[prefix, "[]"]];
    if (value.every((v) => typeof v !== "object" || v === null)) {
      return [[prefix, value.map(String).join(", ")]];
    }
    return value.flatMap((v, i) => flatten(v, `${prefix}[${i}]`));
  }
  if (typeof value === "object") {
    const entries = Object.entries(value as Record<string, unknown>);
    if (entries.length === 0) return [[prefix, "{}"]];
    return entries.flatMap(([k, v]) => flatten(v, prefix ? `${prefix}.${k}` : k));
  }
  return [[prefix, String(value)]];
}

/** `2026-01-02 03:04` for dense table cells (the detail panel shows the full instant). */
export function tableTime(iso: string | null | undefined): string {
  return formatTime(iso).slice(0, 16);
}

/** A `datetime-local` value (read in the machine's zone) as an RFC 3339 instant; blank or bad is none. */
export function instantOf(local: string): string | null {
  if (local.trim() === "") return null;
  const time = new Date(local);
  return Number.isNaN(time.getTime()) ? null : time.toISOString();
}
