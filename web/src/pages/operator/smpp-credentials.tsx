import { useState } from 'react';
import { api, ok } from '../../api.ts';
import { useI18n } from '../../i18n/index.tsx';
import { Alert, Field, Table, submit, useAction, useLoad } from '../../ui.tsx';

interface GrantedRoute {
  id: number;
  displayName: string;
  channel: string;
}

const EMPTY = { systemId: '', password: '', routeId: '', windowSize: '', submitsPerSecond: '' };

/**
 * An account's SMPP credentials in the operator console: what its customers
 * bind to the gateway's SMPP server with (docs/smpp-server.md), the
 * receipts and replies waiting for them, and a new credential, whose
 * password is shown once.
 */
export function SmppCredentials({ accountId, routes }: { accountId: number; routes: GrantedRoute[] }) {
  const { t } = useI18n();
  const path = { params: { path: { id: accountId } } };
  const credentials = useLoad(() => ok(api.GET('/admin/accounts/{id}/smpp-credentials', path)), [accountId]);
  const deliveries = useLoad(() => ok(api.GET('/admin/accounts/{id}/smpp-deliveries', path)), [accountId]);
  const [form, setForm] = useState(EMPTY);
  const [shown, setShown] = useState<{ systemId: string; password: string } | null>(null);
  const action = useAction();
  const sms = routes.filter((r) => r.channel === 'SMS');
  const waiting = new Map((deliveries.data?.credentials ?? []).map((c) => [c.systemId, c]));
  const reload = () => Promise.all([credentials.reload(), deliveries.reload()]);

  return (
    <section data-testid="smpp-credentials">
      <h3>{t('smpp.title')}</h3>
      <p className="muted small">{t('smpp.intro')}</p>
      {credentials.data && credentials.data.records.length > 0 ? (
        <Table head={[t('smpp.systemId'), t('smpp.route'), t('smpp.window'), t('smpp.rate'), t('smpp.waiting'), '']}>
          {credentials.data.records.map((c) => {
            const w = waiting.get(c.systemId);
            return (
              <tr key={c.systemId} data-system-id={c.systemId}>
                <td>
                  <code>{c.systemId}</code>
                  {c.allowedIps?.length ? <div className="muted small">{c.allowedIps.join(', ')}</div> : null}
                </td>
                <td>{c.routeId}</td>
                <td>{c.windowSize}</td>
                <td>{c.submitsPerSecond === 0 ? t('smpp.noLimit') : c.submitsPerSecond}</td>
                <td>
                  {w?.pending ?? 0}
                  {w?.lastError ? <div className="muted small">{w.lastError}</div> : null}
                </td>
                <td>
                  <button
                    type="button"
                    className="small link"
                    onClick={() =>
                      void action.run(async () => {
                        await ok(api.DELETE('/admin/smpp-credentials/{systemId}', { params: { path: { systemId: c.systemId } } }));
                        await reload();
                        return t('smpp.removed', { systemId: c.systemId });
                      })
                    }
                  >
                    {t('smpp.remove')}
                  </button>
                </td>
              </tr>
            );
          })}
        </Table>
      ) : null}
      {credentials.error ? <p className="muted small">{credentials.error}</p> : null}
      {shown ? (
        <div className="alert done new-key" role="status">
          <p>{t('smpp.passwordOnce', { systemId: shown.systemId })}</p>
          <code data-testid="smpp-password" className="key">
            {shown.password}
          </code>
        </div>
      ) : null}
      <form
        className="row"
        onSubmit={submit(() =>
          action.run(async () => {
            const created = await ok(
              api.POST('/admin/accounts/{id}/smpp-credentials', {
                ...path,
                body: {
                  systemId: form.systemId,
                  routeId: Number(form.routeId),
                  ...(form.password ? { password: form.password } : {}),
                  ...(form.windowSize ? { windowSize: Number(form.windowSize) } : {}),
                  ...(form.submitsPerSecond ? { submitsPerSecond: Number(form.submitsPerSecond) } : {}),
                },
              }),
            );
            setShown({ systemId: created.systemId, password: created.password });
            setForm(EMPTY);
            await reload();
            return t('smpp.created', { systemId: created.systemId });
          }),
        )}
      >
        <Field label={t('smpp.systemId')} hint={t('smpp.systemIdRule')}>
          <input
            name="smppSystemId"
            required
            maxLength={15}
            pattern="[A-Za-z0-9_.\-]+"
            value={form.systemId}
            onChange={(e) => setForm({ ...form, systemId: e.target.value })}
          />
        </Field>
        <Field label={t('smpp.password')} hint={t('smpp.passwordRule')}>
          <input name="smppPassword" maxLength={8} value={form.password} onChange={(e) => setForm({ ...form, password: e.target.value })} />
        </Field>
        <Field label={t('smpp.route')}>
          <select name="smppRoute" required value={form.routeId} onChange={(e) => setForm({ ...form, routeId: e.target.value })}>
            <option value="" />
            {sms.map((r) => (
              <option key={r.id} value={r.id}>
                {r.id} · {r.displayName}
              </option>
            ))}
          </select>
        </Field>
        <Field label={t('smpp.window')}>
          <input type="number" min="1" placeholder="100" value={form.windowSize} onChange={(e) => setForm({ ...form, windowSize: e.target.value })} />
        </Field>
        <Field label={t('smpp.rate')}>
          <input type="number" min="0" placeholder="0" value={form.submitsPerSecond} onChange={(e) => setForm({ ...form, submitsPerSecond: e.target.value })} />
        </Field>
        <div className="filter-actions">
          <button type="submit" disabled={action.busy || sms.length === 0}>
            {t('smpp.create')}
          </button>
        </div>
      </form>
      {sms.length === 0 ? <p className="muted small">{t('smpp.noRoute')}</p> : null}
      <Alert error={action.error} done={action.done} />
    </section>
  );
}
