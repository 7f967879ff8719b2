/** A horizontal bar of used (and reserved) out of a total, with the numbers beside it. */
export function UsageBar(props: { label: string; total: number; used: number; reserved?: number; unit: string }) {
  const { total, used, reserved = 0 } = props;
  const share = (value: number) => `${total > 0 ? Math.min(100, (value / total) * 100) : 0}%`;
  const remaining = Math.max(0, total - used - reserved);
  const format = (value: number) => value.toLocaleString("en-US");
  return (
    <div>
      <div
        className="bar"
        role="img"
        aria-label={`${props.label}: ${format(used)} used${reserved ? `, ${format(reserved)} reserved` : ""}, ${format(remaining)} remaining of ${format(total)} ${props.unit}`}
      >
        <span className="used" style={{ width: share(used) }} />
        {reserved > 0 && <span className="reserved" style={{ width: share(reserved) }} />}
      </div>
      <div className="legend">
        <span>
          <i style={{ background: "var(--used)" }} />
          used <strong data-testid={`${props.label}-used`}>{format(used)}</strong>
        </span>
        {props.reserved !== undefined && (
          <span>
            <i style={{ background: "var(--reserved)" }} />
            reserved <strong data-testid={`${props.label}-reserved`}>{format(reserved)}</strong>
          </span>
        )}
        <span>
          <i style={{ background: "#e9ecf1" }} />
          remaining <strong data-testid={`${props.label}-remaining`}>{format(remaining)}</strong>
        </span>
        <span>
          of <strong data-testid={`${props.label}-total`}>{format(total)}</strong> {props.unit}
        </span>
      </div>
    </div>
  );
}
