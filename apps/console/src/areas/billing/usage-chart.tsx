import { useEffect, useRef } from 'react';
// Only the pieces a stacked bar chart needs, so the rest of Chart.js is shaken out of this area's chunk.
import { BarController, BarElement, CategoryScale, Chart, Legend, LinearScale, Tooltip } from 'chart.js';
import type { DailySeries } from './usage-views';

Chart.register(BarController, BarElement, CategoryScale, LinearScale, Legend, Tooltip);

/** Okabe–Ito: told apart by people with the common colour-vision deficiencies; the last one is "others". */
const COLOURS = ['#0072B2', '#E69F00', '#009E73', '#CC79A7', '#56B4E9', '#D55E00', '#F0E442', '#999999'];

/**
 * Bars (a month's days, or months) stacked by series. The canvas is an image with a name; its numbers are in the table the screen
 * shows beside it. Chart.js sizes the canvas through the CSSOM (element.style), which a strict
 * Content-Security-Policy allows: no style attribute or element is written into the page.
 */
export function UsageChart({
  label,
  labels,
  titles = labels,
  axis,
  series,
  unit,
}: {
  label: string;
  /** Under each bar: the day of the month, the month. */
  labels: string[];
  /** Over each bar's tooltip: the whole day or month. */
  titles?: string[];
  /** What the bars are along: "Day of the month (UTC)". */
  axis: string;
  series: DailySeries[];
  unit: string;
}) {
  const canvas = useRef<HTMLCanvasElement>(null);
  useEffect(() => {
    if (!canvas.current) return;
    const reduceMotion = window.matchMedia('(prefers-reduced-motion: reduce)').matches;
    const chart = new Chart(canvas.current, {
      type: 'bar',
      data: {
        labels,
        datasets: series.map((s, i) => ({
          label: s.name,
          data: s.values,
          backgroundColor: COLOURS[i % COLOURS.length],
          borderWidth: 0,
        })),
      },
      options: {
        responsive: true,
        // The .chart box sets the height; the width follows the page (390 px phones too).
        maintainAspectRatio: false,
        animation: reduceMotion ? false : { duration: 250 },
        interaction: { mode: 'index', intersect: false },
        scales: {
          x: { stacked: true, title: { display: true, text: axis } },
          y: { stacked: true, beginAtZero: true, title: { display: true, text: unit } },
        },
        plugins: {
          legend: { position: 'bottom' },
          tooltip: { callbacks: { title: (items) => titles[items[0]?.dataIndex ?? 0] } },
        },
      },
    });
    return () => chart.destroy();
  }, [labels, titles, axis, series, unit]);
  return (
    <div className="chart">
      <canvas ref={canvas} role="img" aria-label={label}>
        {label}: the table beside the chart has the same numbers.
      </canvas>
    </div>
  );
}
