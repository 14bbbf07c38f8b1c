import { BarController, BarElement, CategoryScale, Chart, Legend, LinearScale, Tooltip } from 'chart.js';
import { useEffect, useRef } from 'react';

Chart.register(BarController, BarElement, CategoryScale, LinearScale, Legend, Tooltip);

/** Colours of the message statuses (docs/statuses.md), the same in the badges (styles.css). */
export const STATUS_COLOURS: Record<string, string> = {
  DELIVERED: '#2e9d5b',
  SENT: '#3b82c4',
  SENDING: '#7aa6d6',
  QUEUED: '#9aa5b1',
  SCHEDULED: '#b59ad6',
  UNDELIVERED: '#e0883a',
  EXPIRED: '#c9a227',
  FAILED: '#d64545',
  CANCELLED: '#6b7280',
  BLOCKED: '#374151',
};

/** Messages per day, stacked by status. */
export function VolumeChart({ days, rows, label }: { days: string[]; rows: { day: string; status: string; count: number }[]; label: string }) {
  const canvas = useRef<HTMLCanvasElement>(null);
  useEffect(() => {
    if (!canvas.current) return;
    const statuses = [...new Set(rows.map((r) => r.status))];
    const chart = new Chart(canvas.current, {
      type: 'bar',
      data: {
        labels: days.map((d) => d.slice(5)),
        datasets: statuses.map((status) => ({
          label: status,
          backgroundColor: STATUS_COLOURS[status] ?? '#888',
          data: days.map((d) => rows.find((r) => r.day === d && r.status === status)?.count ?? 0),
        })),
      },
      options: {
        responsive: true,
        maintainAspectRatio: false,
        animation: false,
        scales: { x: { stacked: true }, y: { stacked: true, beginAtZero: true, ticks: { precision: 0 } } },
        plugins: { legend: { position: 'bottom', labels: { boxWidth: 12 } } },
      },
    });
    return () => chart.destroy();
  }, [days, rows]);
  return (
    <div className="chart">
      <canvas ref={canvas} role="img" aria-label={label} />
    </div>
  );
}
