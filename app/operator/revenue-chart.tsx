import type { OperatorView } from "../../server/index";

type Series = OperatorView["hourly"];
type Bar = Series["bars"][number];

const WIDTH = 720;
const HEIGHT = 180;
const LEFT = 8;
const RIGHT = 8;
const TOP = 22;
const BOTTOM = 24;

/**
 * Settled revenue per period as plain SVG, drawn on the server: one bar per period (its exact figure in its
 * tooltip), the highest period's figure at the top, a label every `labelEvery` periods. No script.
 */
export function RevenueChart(props: {
  id: string;
  title: string;
  series: Series;
  labelEvery: number;
  label: (period: string) => string;
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
            ? `highest: ${highest.revenueUsd} USD (${props.label(highest.period)})`
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
              {index % props.labelEvery === 0 ? (
                <text x={LEFT + index * slot} y={HEIGHT - 6} className="chart-label">
                  {props.label(bar.period)}
                </text>
              ) : null}
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
