import { useState } from "react";
import { copyText } from "../platform";
import { flatten } from "../lib/format";
import { FieldValue } from "./Secret";

/** Every field as rows, and the raw JSON, of one record. */
export function RecordView({ value, title }: { value: unknown; title: string }) {
  const [tab, setTab] = useState<"fields" | "json">("fields");
  const json = JSON.stringify(value, null, 2);
  return (
    <section className="record-view" aria-label={title}>
      <div className="tabs" role="tablist">
        <button type="button" role="tab" aria-selected={tab === "fields"} onClick={() => setTab("fields")}>
          Fields
        </button>
        <button type="button" role="tab" aria-selected={tab === "json"} onClick={() => setTab("json")}>
          Raw JSON
        </button>
        <button type="button" className="link" onClick={() => void copyText(json)}>
          Copy JSON
        </button>
      </div>
      {tab === "fields" ? (
        <table className="fields">
          <tbody>
            {flatten(value).map(([k, v]) => (
              <tr key={k}>
                <th scope="row">{k}</th>
                <td><FieldValue name={k.split(/[.[]/).at(-1) ?? k} value={v} /></td>
              </tr>
            ))}
          </tbody>
        </table>
      ) : (
        <pre className="json">{json}</pre>
      )}
    </section>
  );
}
