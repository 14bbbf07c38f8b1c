import { useState } from 'react';
import { api, ok } from '../../api.ts';
import { useI18n } from '../../i18n/index.tsx';
import { Alert, Card, Field, Loading, Pager, Table, submit, useAction, useLoad } from '../../ui.tsx';

const LIMIT = 50;
const BLANK = {
  fullName: '',
  email: '',
  phoneNumber: '',
  document: '',
  limit: '0',
  ownerCredentialFullName: '',
  ownerCredentialEmail: '',
  ownerCredentialPhoneNumber: '',
  password: '',
};

/** A reseller's sub-accounts (child users): create them and move credits either way. */
export function ChildUsersPage() {
  const { t } = useI18n();
  const [skip, setSkip] = useState(0);
  const children = useLoad(() => ok(api.GET('/child-users', { params: { query: { skip, limit: LIMIT } } })), [skip]);
  const [form, setForm] = useState(BLANK);
  const [amounts, setAmounts] = useState<Record<number, string>>({});
  const action = useAction();
  const set = (k: keyof typeof BLANK) => (e: { target: { value: string } }) => setForm({ ...form, [k]: e.target.value });
  const field = (k: keyof typeof BLANK, type = 'text') => (
    <Field label={t(`children.${k}`)}>
      <input name={k} type={type} required value={form[k]} onChange={set(k)} />
    </Field>
  );
  return (
    <>
      <h1>{t('children.title')}</h1>
      <p className="muted">{t('children.intro')}</p>
      <Alert error={action.error} done={action.done} />
      <Loading loading={children.loading && !children.data} error={children.error} />
      {children.data ? (
        <Card title={t('children.list')}>
          <Table
            head={[t('children.fullName'), t('children.email'), t('children.phoneNumber'), t('children.moveCredits')]}
            empty={(children.data.object ?? []).length === 0}
          >
            {(children.data.object ?? []).map((c) => (
              <tr key={c.id} data-child={c.id}>
                <td>
                  {c.fullName}
                  <br />
                  <span className="muted small">#{c.id}</span>
                </td>
                <td>{c.email}</td>
                <td>{c.phoneNumber}</td>
                <td>
                  <form
                    className="inline"
                    onSubmit={submit(() =>
                      action.run(async () => {
                        const r = await ok(api.POST('/child-users/{id}/credits', { params: { path: { id: c.id } }, body: { amount: Number(amounts[c.id]) } }));
                        setAmounts({ ...amounts, [c.id]: '' });
                        return r.message ?? '';
                      }),
                    )}
                  >
                    <input
                      aria-label={t('children.amount')}
                      type="number"
                      step="0.01"
                      value={amounts[c.id] ?? ''}
                      onChange={(e) => setAmounts({ ...amounts, [c.id]: e.target.value })}
                      placeholder="50 / -50"
                    />
                    <button type="submit" className="small primary" disabled={action.busy || !amounts[c.id]}>
                      {t('children.move')}
                    </button>
                  </form>
                </td>
              </tr>
            ))}
          </Table>
          <Pager skip={skip} limit={LIMIT} total={children.data.totalRecords} onChange={setSkip} />
        </Card>
      ) : null}
      <Card title={t('children.new')}>
        <form
          className="grid2"
          onSubmit={submit(() =>
            action.run(async () => {
              const r = await ok(api.POST('/child-users', { body: { ...form, limit: Number(form.limit) } }));
              setForm(BLANK);
              await children.reload();
              return r.message ?? '';
            }),
          )}
        >
          {field('fullName')}
          {field('email', 'email')}
          {field('phoneNumber', 'tel')}
          {field('document')}
          {field('limit', 'number')}
          {field('ownerCredentialFullName')}
          {field('ownerCredentialEmail', 'email')}
          {field('ownerCredentialPhoneNumber', 'tel')}
          {field('password', 'password')}
          <div className="filter-actions">
            <button type="submit" className="primary" disabled={action.busy}>
              {t('children.create')}
            </button>
          </div>
        </form>
      </Card>
    </>
  );
}
