import type { OperatorView } from "../../server/index";

type Series = OperatorView["hourly"];
type Bar = Series["bars"][number];

// About the width the page shows it at, so that its 11px text stays about 11px.
const WIDTH = 1200;
const HEIGHT = 200;
const LEFT = 8;
const RIGHT = 24;
const TOP = 22;
const BOTTOM = 24;

/**
 * Settled revenue per period as plain SVG, drawn on the server: one bar per period (its exact figure in its
 * tooltip), the highest period's figure at the top, labels under the periods `label` names. No script.
 */
export function RevenueChart(props: {
  id: string;
  title: string;
  series: Series;
  /** The label under a period's bar, if it has one. */
  label: (period: string, index: number, count: number) => string | undefined;
}) {
  const { bars } = props.series;
  const highest = bars.reduce<Bar | undefined>(
    (top, bar) => (top === undefined || bar.revenueAtomic > top.revenueAtomic ? bar : top),
    undefined,
  );
  const max = highest && highest.revenueAtomic > 0n ? highest.revenueAtomic : 1n;
  const plotWidth = WIDTH - LEFT - RIGHT;
  const plotHeight = HEIGHT - TOP - BOTTOM;
  const slot = plotWidth / Math.max(1, bars.length);
  const withRevenue = bars.filter((bar) => bar.revenueAtomic > 0n).length;
  const labels = bars.map((bar, index) => props.label(bar.period, index, bars.length));
  return (
    <figure className="chart" aria-labelledby={`${props.id}-caption`}>
      <svg
        viewBox={`0 0 ${WIDTH} ${HEIGHT}`}
        role="img"
        aria-label={`${props.title}: ${withRevenue} of ${bars.length} periods with settled revenue; highest ${highest?.revenueUsd ?? "0"} USD`}
        data-chart={props.id}
      >
        <text x={LEFT} y={14} className="chart-scale">
          {highest && highest.revenueAtomic > 0n
            ? `highest: ${highest.revenueUsd} USD (${highest.period})`
            : "nothing settled in these periods"}
        </text>
        <line x1={LEFT} x2={WIDTH - RIGHT} y1={TOP} y2={TOP} className="chart-grid" />
        <line x1={LEFT} x2={WIDTH - RIGHT} y1={TOP + plotHeight / 2} y2={TOP + plotHeight / 2} className="chart-grid" />
        {bars.map((bar, index) => {
          const height =
            bar.revenueAtomic === 0n ? 0 : Math.max(2, (Number(bar.revenueAtomic) / Number(max)) * plotHeight);
          const x = LEFT + index * slot + slot * 0.15;
          return (
            <g key={bar.period}>
              {bar.calls > 0 && bar.revenueAtomic === 0n ? (
                <rect x={x} y={TOP + plotHeight - 2} width={slot * 0.7} height={2} className="chart-calls" />
              ) : null}
              <rect
                x={x}
                y={TOP + plotHeight - height}
                width={slot * 0.7}
                height={height}
                className="chart-bar"
                data-period={bar.period}
                data-atomic={bar.revenueAtomic.toString()}
              >
                <title>{`${bar.period}: ${bar.revenueUsd} USD settled, ${bar.calls} calls`}</title>
              </rect>
              {labels[index] === undefined ? null : (
                <text x={LEFT + index * slot + slot / 2} y={HEIGHT - 6} className="chart-label" textAnchor="middle">
                  {labels[index]}
                </text>
              )}
            </g>
          );
        })}
        <line x1={LEFT} x2={WIDTH - RIGHT} y1={TOP + plotHeight} y2={TOP + plotHeight} className="chart-axis" />
      </svg>
      <figcaption id={`${props.id}-caption`}>
        {props.title} (UTC): {props.series.calls} calls, {props.series.revenueUsd} USD settled.
      </figcaption>
    </figure>
  );
}
