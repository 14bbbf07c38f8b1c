import { type ReactNode, useState } from 'react';
import { api, ok } from '../../api.ts';
import { useI18n } from '../../i18n/index.tsx';
import { exportUrl } from '../../panel.ts';
import { Alert, Card, Field, Loading, Pager, Status, Table, daysAgo, submit, useAction, useLoad } from '../../ui.tsx';

const STATUSES = ['SCHEDULED', 'QUEUED', 'SENDING', 'SENT', 'DELIVERED', 'UNDELIVERED', 'FAILED', 'EXPIRED', 'CANCELLED', 'BLOCKED'];
const LIMIT = 50;
type Tab = 'sent' | 'received' | 'requests';

export function ReportsPage() {
  const { t } = useI18n();
  const query = new URLSearchParams(window.location.search);
  const [tab, setTab] = useState<Tab>((query.get('tab') as Tab) || 'sent');
  return (
    <>
      <h1>{t('reports.title')}</h1>
      <div className="tabs" role="tablist">
        {(['sent', 'received', 'requests'] as const).map((k) => (
          <button key={k} type="button" role="tab" aria-selected={tab === k} className={tab === k ? 'active' : ''} onClick={() => setTab(k)}>
            {t(`reports.tab.${k}`)}
          </button>
        ))}
      </div>
      {tab === 'sent' ? <SentReport initialRequestId={query.get('requestId') ?? ''} /> : tab === 'received' ? <ReceivedReport /> : <RequestsReport />}
    </>
  );
}

function SentReport({ initialRequestId }: { initialRequestId: string }) {
  const { t, date } = useI18n();
  const blank = { startDate: daysAgo(6), endDate: '', receiver: '', content: '', custom: '', tag: '', requestId: initialRequestId, statuses: '' };
  const [form, setForm] = useState(blank);
  const [filters, setFilters] = useState(blank);
  const [skip, setSkip] = useState(0);
  const { data, error, loading, reload } = useLoad(async () => {
    const query = Object.fromEntries(Object.entries(filters).filter(([, v]) => v !== ''));
    return ok(api.GET('/reports/messages/sent', { params: { query: { ...query, skip, limit: LIMIT } } }));
  }, [filters, skip]);
  const set = (k: keyof typeof blank) => (e: { target: { value: string } }) => setForm({ ...form, [k]: e.target.value });
  return (
    <>
      <Card>
        <Filters>
          <form
            className="filters"
            onSubmit={submit(() => {
              setSkip(0);
              setFilters(form);
            })}
          >
            <Field label={t('reports.startDate')}>
              <input type="date" value={form.startDate} onChange={set('startDate')} />
            </Field>
            <Field label={t('reports.endDate')}>
              <input type="date" value={form.endDate} onChange={set('endDate')} />
            </Field>
            <Field label={t('reports.receiver')}>
              <input name="receiver" value={form.receiver} onChange={set('receiver')} />
            </Field>
            <Field label={t('reports.content')}>
              <input value={form.content} onChange={set('content')} />
            </Field>
            <Field label={t('reports.tag')}>
              <input value={form.tag} onChange={set('tag')} />
            </Field>
            <Field label={t('reports.custom')}>
              <input value={form.custom} onChange={set('custom')} />
            </Field>
            <Field label={t('reports.requestId')}>
              <input value={form.requestId} onChange={set('requestId')} />
            </Field>
            <Field label={t('reports.status')}>
              <select value={form.statuses} onChange={set('statuses')}>
                <option value="">{t('reports.anyStatus')}</option>
                {STATUSES.map((s) => (
                  <option key={s}>{s}</option>
                ))}
              </select>
            </Field>
            <div className="filter-actions">
              <button type="submit" className="primary">
                {t('reports.search')}
              </button>
              <button type="button" onClick={() => void reload()}>
                {t('common.refresh')}
              </button>
              <a className="button" href={exportUrl('sent', filters)} download>
                {t('reports.exportCsv')}
              </a>
            </div>
          </form>
        </Filters>
      </Card>
      <Loading loading={loading && !data} error={error} />
      {data ? (
        <Card>
          <Table
            head={[t('reports.receiver'), t('reports.status'), t('reports.content'), t('reports.createdAt'), t('reports.route'), t('reports.requestId')]}
            empty={(data.object ?? []).length === 0}
          >
            {(data.object ?? []).map((m) => (
              <tr key={m.id}>
                <td>{m.receiver}</td>
                <td title={m.statusDetails ?? ''}>
                  <Status status={m.status} />
                </td>
                <td className="wrap">{m.content}</td>
                <td>{date(m.createdAt)}</td>
                <td>{m.route}</td>
                <td>
                  <code className="small">{m.requestId}</code>
                </td>
              </tr>
            ))}
          </Table>
          <Pager skip={skip} limit={LIMIT} total={data.totalRecords} onChange={setSkip} />
        </Card>
      ) : null}
    </>
  );
}

function ReceivedReport() {
  const { t, date } = useI18n();
  const blank = { startDate: daysAgo(6), endDate: '', sender: '', content: '' };
  const [form, setForm] = useState(blank);
  const [filters, setFilters] = useState(blank);
  const [skip, setSkip] = useState(0);
  const { data, error, loading, reload } = useLoad(async () => {
    const query = Object.fromEntries(Object.entries(filters).filter(([, v]) => v !== ''));
    return ok(api.GET('/reports/messages/received', { params: { query: { ...query, skip, limit: LIMIT } } }));
  }, [filters, skip]);
  const set = (k: keyof typeof blank) => (e: { target: { value: string } }) => setForm({ ...form, [k]: e.target.value });
  return (
    <>
      <Card>
        <Filters>
          <form
            className="filters"
            onSubmit={submit(() => {
              setSkip(0);
              setFilters(form);
            })}
          >
            <Field label={t('reports.startDate')}>
              <input type="date" value={form.startDate} onChange={set('startDate')} />
            </Field>
            <Field label={t('reports.endDate')}>
              <input type="date" value={form.endDate} onChange={set('endDate')} />
            </Field>
            <Field label={t('reports.from')}>
              <input value={form.sender} onChange={set('sender')} />
            </Field>
            <Field label={t('reports.content')}>
              <input value={form.content} onChange={set('content')} />
            </Field>
            <div className="filter-actions">
              <button type="submit" className="primary">
                {t('reports.search')}
              </button>
              <button type="button" onClick={() => void reload()}>
                {t('common.refresh')}
              </button>
              <a className="button" href={exportUrl('received', filters)} download>
                {t('reports.exportCsv')}
              </a>
            </div>
          </form>
        </Filters>
      </Card>
      <Loading loading={loading && !data} error={error} />
      {data ? (
        <Card>
          <Table head={[t('reports.from'), t('reports.text'), t('reports.receivedAt')]} empty={(data.object ?? []).length === 0}>
            {(data.object ?? []).map((m, i) => (
              <tr key={m.messageId ?? i}>
                <td>{m.sender}</td>
                <td className="wrap">{m.content}</td>
                <td>{date(m.receivedAt)}</td>
              </tr>
            ))}
          </Table>
          <Pager skip={skip} limit={LIMIT} total={data.totalRecords} onChange={setSkip} />
        </Card>
      ) : null}
    </>
  );
}

function RequestsReport() {
  const { t, date } = useI18n();
  const [startDate, setStartDate] = useState(daysAgo(6));
  const [skip, setSkip] = useState(0);
  const cancel = useAction();
  const { data, error, loading, reload } = useLoad(
    () => ok(api.GET('/reports/messages/requests', { params: { query: { startDate, skip, limit: LIMIT } } })),
    [startDate, skip],
  );
  return (
    <>
      <Card>
        <div className="filters">
          <Field label={t('reports.startDate')}>
            <input type="date" value={startDate} onChange={(e) => setStartDate(e.target.value)} />
          </Field>
          <div className="filter-actions">
            <button type="button" onClick={() => void reload()}>
              {t('common.refresh')}
            </button>
          </div>
        </div>
      </Card>
      <Alert error={cancel.error} done={cancel.done} />
      <Loading loading={loading && !data} error={error} />
      {data ? (
        <Card>
          <Table
            head={[t('reports.requestId'), t('reports.content'), t('reports.count'), t('reports.createdAt'), t('reports.schedule'), '']}
            empty={(data.object ?? []).length === 0}
          >
            {(data.object ?? []).map((r) => (
              <tr key={r.requestId}>
                <td>
                  <code className="small">{r.requestId}</code>
                </td>
                <td className="wrap">{r.content}</td>
                <td>{r.requestCount}</td>
                <td>{date(r.createdAt)}</td>
                <td>{date(r.schedule)}</td>
                <td>
                  <button
                    type="button"
                    className="danger small"
                    disabled={cancel.busy}
                    onClick={() =>
                      cancel.run(async () => {
                        const answer = await ok(api.POST('/messages/request/cancel', { body: { requestId: r.requestId } }));
                        await reload();
                        return answer.message ?? t('reports.cancelled');
                      })
                    }
                  >
                    {t('reports.cancel')}
                  </button>
                </td>
              </tr>
            ))}
          </Table>
          <Pager skip={skip} limit={LIMIT} total={data.totalRecords} onChange={setSkip} />
        </Card>
      ) : null}
    </>
  );
}

/** The filters: folded behind their title on a phone, open on wider screens. */
function Filters({ children }: { children: ReactNode }) {
  const { t } = useI18n();
  const [open] = useState(() => !window.matchMedia('(max-width: 599px)').matches);
  return (
    <details className="filters-box" open={open}>
      <summary>{t('reports.filters')}</summary>
      {children}
    </details>
  );
}
