import { useState } from 'react';
import { api, legacyOk } from '../../api.ts';
import { contactsFromCsv } from '../../csv.ts';
import { useI18n } from '../../i18n/index.tsx';
import { Alert, Card, Field, Loading, Table, submit, useAction, useLoad } from '../../ui.tsx';

export function ContactsPage() {
  const { t } = useI18n();
  return (
    <>
      <h1>{t('contacts.title')}</h1>
      <Groups />
      <Blocklist />
    </>
  );
}

function Groups() {
  const { t, number, date } = useI18n();
  const groups = useLoad(async () => (await legacyOk(api.GET('/api/v2/contactgroup'))).Object);
  const [name, setName] = useState('');
  const [file, setFile] = useState<File | null>(null);
  const [progress, setProgress] = useState<{ done: number; total: number; failed: number } | null>(null);
  const action = useAction();
  const remove = useAction();

  const create = () =>
    action.run(async () => {
      const contacts = file ? contactsFromCsv(await file.text()) : [];
      if (file && contacts.length === 0) throw new Error(t('contacts.noNumbers'));
      await legacyOk(api.POST('/api/v2/contactgroup', { body: { Name: name } }));
      const state = { done: 0, total: contacts.length, failed: 0 };
      setProgress({ ...state });
      // Four numbers at a time, each added with the Legacy v2 add_number action; the bar follows.
      let next = 0;
      const worker = async () => {
        while (next < contacts.length) {
          const c = contacts[next++];
          if (!c) break;
          const body = { Action: 'add_number' as const, ContactPhone: c.phone, ...(c.name ? { ContactName: c.name } : {}) };
          const res = await api.PUT('/api/v2/contactgroup/{id}', { params: { path: { id: name } }, body }).catch(() => null);
          if (!res?.data?.Success) state.failed++;
          state.done++;
          setProgress({ ...state });
        }
      };
      await Promise.all([worker(), worker(), worker(), worker()]);
      setName('');
      setFile(null);
      await groups.reload();
      return t('contacts.imported', { name, added: state.done - state.failed, failed: state.failed });
    });

  return (
    <Card title={t('contacts.groups')}>
      <form className="row" onSubmit={submit(create)}>
        <Field label={t('contacts.groupName')}>
          <input name="groupName" required maxLength={200} value={name} onChange={(e) => setName(e.target.value)} />
        </Field>
        <Field label={t('contacts.csv')} hint={t('contacts.csvHint')}>
          <input name="csv" type="file" accept=".csv,text/csv,text/plain" onChange={(e) => setFile(e.target.files?.[0] ?? null)} />
        </Field>
        <div className="filter-actions">
          <button type="submit" className="primary" disabled={action.busy}>
            {file ? t('contacts.import') : t('contacts.create')}
          </button>
        </div>
      </form>
      {progress && progress.total > 0 ? (
        <div className="progress-line">
          <progress max={progress.total} value={progress.done} aria-label={t('contacts.progress')} />
          <span>
            {number(progress.done)} / {number(progress.total)}
          </span>
        </div>
      ) : null}
      <Alert error={action.error ?? remove.error} done={action.done ?? remove.done} />
      <Loading loading={groups.loading && !groups.data} error={groups.error} />
      <Table head={[t('contacts.groupName'), t('contacts.count'), t('contacts.lastUsed'), '']} empty={(groups.data ?? []).length === 0}>
        {(groups.data ?? []).map((g) => (
          <tr key={g.Id} data-group={g.Name}>
            <td>{g.Name}</td>
            <td>{number(g.TotalContacts)}</td>
            <td>{date(g.LastUsed)}</td>
            <td>
              <button
                type="button"
                className="small danger"
                onClick={() => {
                  if (!window.confirm(t('contacts.deleteConfirm', { name: g.Name }))) return;
                  void remove.run(async () => {
                    const r = await legacyOk(api.DELETE('/api/v2/contactgroup/{id}', { params: { path: { id: String(g.Id) } }, body: {} }));
                    await groups.reload();
                    return r.Message;
                  });
                }}
              >
                {t('common.delete')}
              </button>
            </td>
          </tr>
        ))}
      </Table>
    </Card>
  );
}

function Blocklist() {
  const { t, date } = useI18n();
  const list = useLoad(async () => (await legacyOk(api.GET('/api/v2/blacklist'))).Object);
  const [phone, setPhone] = useState('');
  const action = useAction();
  return (
    <Card title={t('contacts.blocklist')}>
      <p className="muted">{t('contacts.blocklistIntro')}</p>
      <form
        className="row"
        onSubmit={submit(() =>
          action.run(async () => {
            const r = await legacyOk(api.POST('/api/v2/blacklist', { body: { PhoneNumber: phone } }));
            setPhone('');
            await list.reload();
            return r.Message;
          }),
        )}
      >
        <Field label={t('contacts.phone')}>
          <input name="blockPhone" required value={phone} onChange={(e) => setPhone(e.target.value)} placeholder="11999998888" />
        </Field>
        <div className="filter-actions">
          <button type="submit" className="primary" disabled={action.busy}>
            {t('contacts.block')}
          </button>
        </div>
      </form>
      <Alert error={action.error} done={action.done} />
      <Table head={[t('contacts.phone'), t('contacts.blockedAt'), '']} empty={(list.data ?? []).length === 0}>
        {(list.data ?? []).map((b) => (
          <tr key={b.PhoneNumber}>
            <td>{b.PhoneNumber}</td>
            <td>{date(b.CreatedDate)}</td>
            <td>
              <button
                type="button"
                className="small"
                onClick={() =>
                  void action.run(async () => {
                    const r = await legacyOk(api.DELETE('/api/v2/blacklist/{id}', { params: { path: { id: b.PhoneNumber } }, body: {} }));
                    await list.reload();
                    return r.Message;
                  })
                }
              >
                {t('contacts.unblock')}
              </button>
            </td>
          </tr>
        ))}
      </Table>
    </Card>
  );
}
