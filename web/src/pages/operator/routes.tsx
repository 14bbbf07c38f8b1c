import { useState } from 'react';
import { api, ok } from '../../api.ts';
import { useI18n } from '../../i18n/index.tsx';
import { Alert, Card, Field, Loading, Table, submit, useAction, useLoad } from '../../ui.tsx';

const BLANK = {
  displayName: '',
  productName: 'SMS',
  productId: '1',
  farePrice: '0.05',
  replyFarePrice: '0.01',
  channel: 'SMS' as 'SMS' | 'RCS',
  connector: 'simulator',
};

export function OperatorRoutesPage() {
  const { t, number } = useI18n();
  const routes = useLoad(() => ok(api.GET('/admin/routes', { params: { query: { limit: 1000 } } })));
  const carriers = useLoad(() => ok(api.GET('/admin/carriers')));
  const [form, setForm] = useState(BLANK);
  const action = useAction();
  const set = (k: keyof typeof BLANK) => (e: { target: { value: string } }) => setForm({ ...form, [k]: e.target.value });
  return (
    <>
      <h1>{t('routes.title')}</h1>
      <Loading loading={routes.loading && !routes.data} error={routes.error} />
      {routes.data ? (
        <Card>
          <Table
            head={['#', t('routes.name'), t('routes.channel'), t('routes.connector'), t('routes.price'), t('routes.replyPrice'), t('routes.fallback')]}
            empty={routes.data.records.length === 0}
          >
            {routes.data.records.map((r) => (
              <tr key={r.id}>
                <td>{r.id}</td>
                <td>
                  {r.displayName}
                  <br />
                  <span className="muted small">
                    {r.productName} ({r.productId})
                  </span>
                </td>
                <td>{r.channel}</td>
                <td>{r.connector}</td>
                <td>{number(r.farePrice, 4)}</td>
                <td>{number(r.replyFarePrice, 4)}</td>
                <td>{r.fallbackRouteId ?? '—'}</td>
              </tr>
            ))}
          </Table>
        </Card>
      ) : null}
      <Card title={t('routes.new')}>
        <form
          className="grid2"
          onSubmit={submit(() =>
            action.run(async () => {
              const r = await ok(
                api.POST('/admin/routes', {
                  body: { ...form, productId: Number(form.productId), farePrice: Number(form.farePrice), replyFarePrice: Number(form.replyFarePrice) },
                }),
              );
              setForm(BLANK);
              await routes.reload();
              return t('routes.created', { id: r.id });
            }),
          )}
        >
          <Field label={t('routes.name')}>
            <input name="routeName" required value={form.displayName} onChange={set('displayName')} />
          </Field>
          <Field label={t('routes.channel')}>
            <select value={form.channel} onChange={set('channel')}>
              <option>SMS</option>
              <option>RCS</option>
            </select>
          </Field>
          <Field label={t('routes.connector')}>
            <select value={form.connector} onChange={set('connector')}>
              {(carriers.data ?? [{ name: 'simulator' }]).map((c) => (
                <option key={c.name}>{c.name}</option>
              ))}
            </select>
          </Field>
          <Field label={t('routes.product')}>
            <input required value={form.productName} onChange={set('productName')} />
          </Field>
          <Field label={t('routes.productId')}>
            <input type="number" min="1" required value={form.productId} onChange={set('productId')} />
          </Field>
          <Field label={t('routes.price')}>
            <input type="number" step="0.0001" min="0" required value={form.farePrice} onChange={set('farePrice')} />
          </Field>
          <Field label={t('routes.replyPrice')}>
            <input type="number" step="0.0001" min="0" required value={form.replyFarePrice} onChange={set('replyFarePrice')} />
          </Field>
          <div className="filter-actions">
            <button type="submit" className="primary" disabled={action.busy}>
              {t('routes.create')}
            </button>
          </div>
        </form>
        <Alert error={action.error} done={action.done} />
      </Card>
    </>
  );
}
