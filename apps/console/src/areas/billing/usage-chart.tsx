import { useEffect, useRef } from 'react';
// Only the pieces a stacked bar chart needs, so the rest of Chart.js is shaken out of this area's chunk.
import { BarController, BarElement, CategoryScale, Chart, Legend, LinearScale, Tooltip } from 'chart.js';
import type { DailySeries } from './usage-views';

Chart.register(BarController, BarElement, CategoryScale, LinearScale, Legend, Tooltip);

/** Okabe–Ito: told apart by people with the common colour-vision deficiencies; the last one is "others". */
const COLOURS = ['#0072B2', '#E69F00', '#009E73', '#CC79A7', '#56B4E9', '#D55E00', '#F0E442', '#999999'];

/**
 * Daily bars stacked by series. The canvas is an image with a name; its numbers are in the table the screen
 * shows beside it. Chart.js sizes the canvas through the CSSOM (element.style), which a strict
 * Content-Security-Policy allows: no style attribute or element is written into the page.
 */
export function UsageChart({ label, days, series, unit }: { label: string; days: string[]; series: DailySeries[]; unit: string }) {
  const canvas = useRef<HTMLCanvasElement>(null);
  useEffect(() => {
    if (!canvas.current) return;
    const reduceMotion = window.matchMedia('(prefers-reduced-motion: reduce)').matches;
    const chart = new Chart(canvas.current, {
      type: 'bar',
      data: {
        labels: days.map((day) => String(Number(day.slice(8)))),
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
          x: { stacked: true, title: { display: true, text: 'Day of the month (UTC)' } },
          y: { stacked: true, beginAtZero: true, title: { display: true, text: unit } },
        },
        plugins: {
          legend: { position: 'bottom' },
          tooltip: { callbacks: { title: (items) => days[items[0]?.dataIndex ?? 0] } },
        },
      },
    });
    return () => chart.destroy();
  }, [days, series, unit]);
  return (
    <div className="chart">
      <canvas ref={canvas} role="img" aria-label={label}>
        {label}: the table beside the chart has the same numbers.
      </canvas>
    </div>
  );
}
