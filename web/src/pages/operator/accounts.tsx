import { useState } from 'react';
import { api, ok } from '../../api.ts';
import { useI18n } from '../../i18n/index.tsx';
import { Alert, Card, Field, Loading, Pager, Table, submit, useAction, useLoad } from '../../ui.tsx';
import { SmppCredentials } from './smpp-credentials.tsx';

const LIMIT = 50;

export function OperatorAccountsPage() {
  const { t, number } = useI18n();
  const [skip, setSkip] = useState(0);
  const [name, setName] = useState('');
  const [filter, setFilter] = useState('');
  const accounts = useLoad(
    () => ok(api.GET('/admin/accounts', { params: { query: { skip, limit: LIMIT, ...(filter ? { name: filter } : {}) } } })),
    [skip, filter],
  );
  const [form, setForm] = useState({ name: '', role: 'CUSTOMER' as 'CUSTOMER' | 'RESELLER', balance: '0' });
  const [open, setOpen] = useState<number | null>(null);
  const action = useAction();
  return (
    <>
      <h1>{t('accounts.title')}</h1>
      <Card title={t('accounts.new')}>
        <form
          className="row"
          onSubmit={submit(() =>
            action.run(async () => {
              const a = await ok(api.POST('/admin/accounts', { body: { name: form.name, role: form.role, balance: form.balance } }));
              setForm({ name: '', role: 'CUSTOMER', balance: '0' });
              await accounts.reload();
              setOpen(a.id);
              return t('accounts.created', { name: a.name, id: a.id });
            }),
          )}
        >
          <Field label={t('accounts.name')}>
            <input name="accountName" required value={form.name} onChange={(e) => setForm({ ...form, name: e.target.value })} />
          </Field>
          <Field label={t('accounts.role')}>
            <select value={form.role} onChange={(e) => setForm({ ...form, role: e.target.value as 'CUSTOMER' | 'RESELLER' })}>
              <option value="CUSTOMER">CUSTOMER</option>
              <option value="RESELLER">RESELLER</option>
            </select>
          </Field>
          <Field label={t('accounts.openingBalance')}>
            <input type="number" step="0.01" min="0" value={form.balance} onChange={(e) => setForm({ ...form, balance: e.target.value })} />
          </Field>
          <div className="filter-actions">
            <button type="submit" className="primary" disabled={action.busy}>
              {t('accounts.create')}
            </button>
          </div>
        </form>
      </Card>
      <Alert error={action.error} done={action.done} />
      <Card>
        <form
          className="row"
          onSubmit={submit(() => {
            setSkip(0);
            setFilter(name);
          })}
        >
          <Field label={t('accounts.search')}>
            <input value={name} onChange={(e) => setName(e.target.value)} />
          </Field>
          <div className="filter-actions">
            <button type="submit">{t('reports.search')}</button>
          </div>
        </form>
        <Loading loading={accounts.loading && !accounts.data} error={accounts.error} />
        {accounts.data ? (
          <>
            <Table
              head={['#', t('accounts.name'), t('accounts.role'), t('accounts.balance'), t('accounts.state'), '']}
              empty={accounts.data.records.length === 0}
            >
              {accounts.data.records.map((a) => (
                <tr key={a.id} data-account={a.name}>
                  <td>{a.id}</td>
                  <td>{a.name}</td>
                  <td>{a.role}</td>
                  <td data-testid="account-balance">{number(a.balance, 2)}</td>
                  <td>
                    {a.active ? (
                      <span className="badge s-delivered">{t('accounts.active')}</span>
                    ) : (
                      <span className="badge s-cancelled">{t('accounts.inactive')}</span>
                    )}
                  </td>
                  <td>
                    <button type="button" className="small" onClick={() => setOpen(open === a.id ? null : a.id)}>
                      {open === a.id ? t('common.close') : t('accounts.manage')}
                    </button>
                  </td>
                </tr>
              ))}
            </Table>
            <Pager skip={skip} limit={LIMIT} total={accounts.data.total} onChange={setSkip} />
          </>
        ) : null}
      </Card>
      {open !== null ? <AccountDetail key={open} id={open} onChanged={() => void accounts.reload()} /> : null}
      <OperatorUsers />
    </>
  );
}

/** People who sign in to this console with their own e-mail and password instead of the operator token. */
function OperatorUsers() {
  const { t } = useI18n();
  // The document gives these answers no schema yet (an example only): typed here.
  const users = useLoad(() => ok(api.GET('/admin/operator-users')));
  const [user, setUser] = useState({ email: '', password: '' });
  const action = useAction();
  return (
    <Card title={t('accounts.operatorUsers')}>
      <p className="muted small">{t('accounts.operatorUsersIntro')}</p>
      <ul className="plain">
        {(users.data ?? []).map((u) => (
          <li key={u.id}>
            {u.email}{' '}
            <button
              type="button"
              className="small link"
              onClick={() =>
                void action.run(async () => {
                  await ok(api.DELETE('/admin/panel-users/{id}', { params: { path: { id: u.id } } }));
                  await users.reload();
                  return t('accounts.userRemoved');
                })
              }
            >
              {t('accounts.removeUser')}
            </button>
          </li>
        ))}
      </ul>
      <form
        className="row"
        onSubmit={submit(() =>
          action.run(async () => {
            await ok(api.POST('/admin/operator-users', { body: user }));
            setUser({ email: '', password: '' });
            await users.reload();
            return t('accounts.userCreated');
          }),
        )}
      >
        <Field label={t('signIn.email')}>
          <input name="operatorEmail" type="email" required value={user.email} onChange={(e) => setUser({ ...user, email: e.target.value })} />
        </Field>
        <Field label={t('signIn.password')} hint={t('password.rule')}>
          <input
            name="operatorPassword"
            type="password"
            required
            minLength={10}
            value={user.password}
            onChange={(e) => setUser({ ...user, password: e.target.value })}
          />
        </Field>
        <div className="filter-actions">
          <button type="submit" disabled={action.busy}>
            {t('accounts.addOperator')}
          </button>
        </div>
      </form>
      <Alert error={action.error ?? users.error} done={action.done} />
    </Card>
  );
}

function AccountDetail({ id, onChanged }: { id: number; onChanged(): void }) {
  const { t, number } = useI18n();
  const account = useLoad(() => ok(api.GET('/admin/accounts/{id}', { params: { path: { id } } })), [id]);
  const granted = useLoad(() => ok(api.GET('/admin/accounts/{id}/routes', { params: { path: { id }, query: { limit: 1000 } } })), [id]);
  const routes = useLoad(() => ok(api.GET('/admin/routes', { params: { query: { limit: 1000 } } })), []);
  const callbacks = useLoad(() => ok(api.GET('/admin/accounts/{id}/callbacks', { params: { path: { id } } })), [id]);
  const users = useLoad(() => ok(api.GET('/admin/accounts/{id}/panel-users', { params: { path: { id } } })), [id]);
  const [credit, setCredit] = useState({ amount: '', reason: '' });
  const [routeId, setRouteId] = useState('');
  const [cb, setCb] = useState<{ replyUrl: string; statusUrl: string } | null>(null);
  const [user, setUser] = useState({ email: '', password: '' });
  const action = useAction();
  const a = account.data;
  const grantedIds = new Set((granted.data?.records ?? []).map((r) => r.id));
  // The document gives this answer no schema yet (an example only): typed here.
  const userList = users.data ?? [];
  const cbForm = cb ?? { replyUrl: callbacks.data?.replyUrl ?? '', statusUrl: callbacks.data?.statusUrl ?? '' };
  const done = async (message: string) => {
    await Promise.all([account.reload(), granted.reload(), callbacks.reload(), users.reload()]);
    onChanged();
    return message;
  };

  return (
    <Card title={a ? `${a.name} (#${a.id})` : `#${id}`}>
      <Loading loading={account.loading && !a} error={account.error} />
      <Alert error={action.error} done={action.done} />
      {a ? (
        <div className="detail">
          <section>
            <h3>{t('accounts.credits')}</h3>
            <p>
              {t('accounts.balance')}: <strong data-testid="detail-balance">{number(a.balance, 2)}</strong>
            </p>
            <form
              className="row"
              onSubmit={submit(() =>
                action.run(async () => {
                  await ok(
                    api.POST('/admin/accounts/{id}/credits', {
                      params: { path: { id } },
                      body: { amount: credit.amount, ...(credit.reason ? { reason: credit.reason } : {}) },
                    }),
                  );
                  setCredit({ amount: '', reason: '' });
                  return done(t('accounts.creditsAdded'));
                }),
              )}
            >
              <Field label={t('accounts.amount')}>
                <input
                  name="creditAmount"
                  type="number"
                  step="0.01"
                  required
                  value={credit.amount}
                  onChange={(e) => setCredit({ ...credit, amount: e.target.value })}
                />
              </Field>
              <Field label={t('accounts.reason')}>
                <input value={credit.reason} onChange={(e) => setCredit({ ...credit, reason: e.target.value })} />
              </Field>
              <div className="filter-actions">
                <button type="submit" className="primary" disabled={action.busy}>
                  {t('accounts.addCredits')}
                </button>
              </div>
            </form>
            <button
              type="button"
              className={a.active ? 'danger' : ''}
              disabled={action.busy}
              onClick={() =>
                void action.run(async () => {
                  if (a.active) await ok(api.POST('/admin/accounts/{id}/deactivate', { params: { path: { id } } }));
                  else await ok(api.POST('/admin/accounts/{id}/activate', { params: { path: { id } } }));
                  return done(a.active ? t('accounts.deactivated') : t('accounts.activated'));
                })
              }
            >
              {a.active ? t('accounts.deactivate') : t('accounts.activate')}
            </button>
          </section>
          <section>
            <h3>{t('accounts.routes')}</h3>
            <ul className="plain">
              {(granted.data?.records ?? []).map((r) => (
                <li key={r.id}>
                  {r.id} · {r.displayName} ({r.channel}, {number(r.farePrice, 2)})
                </li>
              ))}
            </ul>
            <form
              className="row"
              onSubmit={submit(() =>
                action.run(async () => {
                  await ok(api.POST('/admin/accounts/{id}/routes', { params: { path: { id } }, body: { routeId: Number(routeId) } }));
                  setRouteId('');
                  return done(t('accounts.routeGranted'));
                }),
              )}
            >
              <Field label={t('accounts.grantRoute')}>
                <select value={routeId} onChange={(e) => setRouteId(e.target.value)} required>
                  <option value="" />
                  {(routes.data?.records ?? [])
                    .filter((r) => !grantedIds.has(r.id))
                    .map((r) => (
                      <option key={r.id} value={r.id}>
                        {r.id} · {r.displayName}
                      </option>
                    ))}
                </select>
              </Field>
              <div className="filter-actions">
                <button type="submit" disabled={action.busy || !routeId}>
                  {t('accounts.grant')}
                </button>
              </div>
            </form>
          </section>
          <section>
            <h3>{t('accounts.panelUsers')}</h3>
            <ul className="plain">
              {userList.map((u) => (
                <li key={u.id}>
                  {u.email}{' '}
                  <button
                    type="button"
                    className="small link"
                    onClick={() =>
                      void action.run(async () => {
                        await ok(api.DELETE('/admin/panel-users/{id}', { params: { path: { id: u.id } } }));
                        return done(t('accounts.userRemoved'));
                      })
                    }
                  >
                    {t('accounts.removeUser')}
                  </button>
                </li>
              ))}
            </ul>
            {users.error ? <p className="muted small">{users.error}</p> : null}
            <form
              className="row"
              onSubmit={submit(() =>
                action.run(async () => {
                  await ok(api.POST('/admin/accounts/{id}/panel-users', { params: { path: { id } }, body: user }));
                  setUser({ email: '', password: '' });
                  return done(t('accounts.userCreated'));
                }),
              )}
            >
              <Field label={t('signIn.email')}>
                <input name="userEmail" type="email" required value={user.email} onChange={(e) => setUser({ ...user, email: e.target.value })} />
              </Field>
              <Field label={t('signIn.password')} hint={t('password.rule')}>
                <input
                  name="userPassword"
                  type="password"
                  required
                  minLength={10}
                  value={user.password}
                  onChange={(e) => setUser({ ...user, password: e.target.value })}
                />
              </Field>
              <div className="filter-actions">
                <button type="submit" disabled={action.busy}>
                  {t('accounts.addUser')}
                </button>
              </div>
            </form>
          </section>
          <SmppCredentials accountId={id} routes={granted.data?.records ?? []} />
          <section>
            <h3>{t('accounts.callbacks')}</h3>
            <p className="muted small">{t('accounts.callbacksIntro')}</p>
            <form
              onSubmit={submit(() =>
                action.run(async () => {
                  await ok(
                    api.PUT('/admin/accounts/{id}/callbacks', {
                      params: { path: { id } },
                      body: { replyUrl: cbForm.replyUrl || null, statusUrl: cbForm.statusUrl || null },
                    }),
                  );
                  setCb(null);
                  return done(t('accounts.callbacksSaved'));
                }),
              )}
            >
              <Field label={t('accounts.replyUrl')}>
                <input type="url" value={cbForm.replyUrl} onChange={(e) => setCb({ ...cbForm, replyUrl: e.target.value })} />
              </Field>
              <Field label={t('accounts.statusUrl')}>
                <input type="url" value={cbForm.statusUrl} onChange={(e) => setCb({ ...cbForm, statusUrl: e.target.value })} />
              </Field>
              <button type="submit" disabled={action.busy}>
                {t('common.save')}
              </button>
            </form>
          </section>
        </div>
      ) : null}
    </Card>
  );
}
