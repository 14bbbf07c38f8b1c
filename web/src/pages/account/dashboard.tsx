import { lazy, Suspense, useMemo } from 'react';
import { useI18n } from '../../i18n/index.tsx';
import { panel } from '../../panel.ts';
import { Link } from '../../router.tsx';
import { Card, Loading, Status, Table, daysAgo, useLoad } from '../../ui.tsx';

// Chart.js is loaded with the dashboard only, not with the rest of the panel.
const VolumeChart = lazy(() => import('../../chart.tsx').then((m) => ({ default: m.VolumeChart })));

export function DashboardPage() {
  const { t, number, date } = useI18n();
  const { data, error, loading } = useLoad(() => panel.dashboard());
  const days = useMemo(() => Array.from({ length: 14 }, (_, i) => daysAgo(13 - i)), []);
  return (
    <>
      <h1>{t('dashboard.title')}</h1>
      <Loading loading={loading && !data} error={error} />
      {data ? (
        <>
          <div className="tiles">
            <div className="tile">
              <span>{t('dashboard.balance')}</span>
              <strong data-testid="balance">{number(data.balance, 2)}</strong>
            </div>
            <div className="tile">
              <span>{t('dashboard.today')}</span>
              <strong>{number(sum(data.today))}</strong>
              <Counts counts={data.today} />
            </div>
            <div className="tile">
              <span>{t('dashboard.week')}</span>
              <strong>{number(sum(data.week))}</strong>
              <Counts counts={data.week} />
            </div>
          </div>
          <Card title={t('dashboard.perDay')}>
            <Suspense fallback={<div className="chart" />}>
              <VolumeChart days={days} rows={data.perDay} label={t('dashboard.perDay')} />
            </Suspense>
          </Card>
          <Card title={t('dashboard.replies')} actions={<Link to="reports?tab=received">{t('dashboard.allReplies')}</Link>}>
            <Table head={[t('reports.from'), t('reports.text'), t('reports.receivedAt')]} empty={data.replies.length === 0}>
              {data.replies.map((r) => (
                <tr key={r.id}>
                  <td>{r.from}</td>
                  <td className="wrap">{r.text}</td>
                  <td>{date(r.receivedAt)}</td>
                </tr>
              ))}
            </Table>
          </Card>
        </>
      ) : null}
    </>
  );
}

function sum(counts: Record<string, number>): number {
  return Object.values(counts).reduce((a, b) => a + b, 0);
}

function Counts({ counts }: { counts: Record<string, number> }) {
  const entries = Object.entries(counts).filter(([, n]) => n > 0);
  if (entries.length === 0) return null;
  return (
    <ul className="counts">
      {entries.map(([status, n]) => (
        <li key={status}>
          <Status status={status} /> {n}
        </li>
      ))}
    </ul>
  );
}
