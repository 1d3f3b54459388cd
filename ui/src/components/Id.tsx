/**
 * An id as the screens show it. In stage mode always its first 8 characters and an ellipsis;
 * otherwise whole, or (`compact`, for table cells) as `shortId` has it. The full value is in
 * the title either way, and copy buttons copy the value they were given, never this text.
 */
import { shortId } from "../lib/format";
import { stageId } from "../lib/presentation";
import { useStageMode } from "../lib/useDisplay";

export function Id({ value, compact = false, className }: { value: string | null | undefined; compact?: boolean; className?: string }) {
  const stage = useStageMode();
  if (!value) return <span className={className}>—</span>;
  const shown = stage ? stageId(value) : compact ? shortId(value) : value;
  return (
    <span className={className ? `id ${className}` : "id"} title={value} data-id={value}>
      {shown}
    </span>
  );
}
